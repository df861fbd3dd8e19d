import assert from 'node:assert/strict';
import { getJson, pollStatus, publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';
import { lastMessage, startFakeLlm, type FakeLlm } from '../support/fake-llm';
import { startFakeSearch, type FakeSearch } from '../tools/support';
import { clearHistory } from '../support/histories';

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Each step's output.txt (its type and text) and stdout.txt, through the results endpoint's links. */
async function resultFiles(fg: TestFlowgate, p: Published, runId: string): Promise<{ output: { type: string; text: string }; stdout: string }[]> {
  const { body } = await getJson<{ results: { resultUrls: Record<string, { url: string }> }[] }>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
  return Promise.all(body.results.map(async (r) => {
    const output = await fetch(r.resultUrls['output.txt']?.url ?? '');
    const stdout = await fetch(r.resultUrls['stdout.txt']?.url ?? '');
    return { output: { type: output.headers.get('content-type') ?? '', text: await output.text() }, stdout: await stdout.text() };
  }));
}

describe('the agent step', () => {
  let fg: TestFlowgate;
  let llm: FakeLlm;
  let search: FakeSearch;

  before(async () => {
    llm = await startFakeLlm();
    search = await startFakeSearch();
    fg = await startTestFlowgate({ FLOWGATE_LLM_BASE_URL: llm.baseUrl, FLOWGATE_LLM_MODEL: 'fake-model', FLOWGATE_SEARCH_URL: search.url });
  });
  after(async () => {
    await fg?.stop();
    await llm?.close();
    await search?.close();
  });

  it('runs the agent as a child workflow of the run: its answer is the result, its tool calls go to stdout.txt', async function () {
    this.timeout(60_000);
    const agent = await fg.admin<{ id: string }>('POST', '/api/v1/agents', {
      name: 'summariser', instructions: 'Search, then summarise.', servers: [{ name: 'web-search', allTools: true }],
    });
    assert.equal(agent.status, 201);
    llm.script.push(
      (request) => {
        assert.equal(lastMessage(request).content, 'Summarise durable execution');
        return { toolCalls: [{ name: 'web-search_search', arguments: { query: 'durable execution' } }] };
      },
      { content: '**Durable execution** survives crashes.' },
    );
    const p = await publishWorkflow(fg, {
      name: 'with-agent',
      steps: [
        { name: 'Ask', type: 'agent', agentId: agent.body.id, message: 'Summarise {{inputs.topic}}' },
        { name: 'Use', type: 'template', template: 'Agent said: {{steps.1.result}}' },
      ],
    });
    const runId = (await trigger(fg, p, { topic: 'durable execution' })).headers.get('X-Pf-Run-Id') ?? '';
    const final = await pollStatus(fg, p, runId);
    assert.equal(final.status, 'COMPLETE', JSON.stringify(final));

    const results = await resultFiles(fg, p, runId);
    assert.deepEqual(results[0]?.output, { type: 'text/markdown; charset=utf-8', text: '**Durable execution** survives crashes.' });
    assert.equal(results[1]?.output.text, 'Agent said: **Durable execution** survives crashes.');
    const stdout = results[0]?.stdout ?? '';
    assert.match(stdout, /called web-search\/search/);

    // what the Web UI shows on the run's page: a child workflow of type invokeAgent
    const history = await clearHistory(fg, runId);
    const children = (history.events ?? []).map((e) => e.childWorkflowExecutionStartedEventAttributes).filter((a) => a);
    assert.deepEqual(children.map((a) => a?.workflowType?.name), ['invokeAgent']);
    assert.equal(children[0]?.workflowExecution?.workflowId, `${runId}-agent-1`);
  });

  it('gives a json result with an output schema, and cancelling the run cancels the agent', async function () {
    this.timeout(60_000);
    const agent = await fg.admin<{ id: string }>('POST', '/api/v1/agents', {
      name: 'json', instructions: 'JSON only.', outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
    });
    llm.script.push({ content: '{"ok": true}' });
    const p = await publishWorkflow(fg, { name: 'json-agent', steps: [{ name: 'Ask', type: 'agent', agentId: agent.body.id, message: 'ok?' }] });
    const runId = (await trigger(fg, p, {})).headers.get('X-Pf-Run-Id') ?? '';
    assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');
    const [output] = await resultFiles(fg, p, runId);
    assert.deepEqual([output?.output.type, JSON.parse(output?.output.text ?? 'null')], ['application/json', { ok: true }]);

    llm.script.push({ delayMs: 20_000, then: { content: '{"ok": false}' } });
    const seen = llm.requests.length;
    const slowRun = (await trigger(fg, p, {})).headers.get('X-Pf-Run-Id') ?? '';
    await until(async () => (llm.requests.length > seen ? true : undefined));
    await fg.client.workflow.getHandle(slowRun).cancel();
    const childStatus = await until(async () => {
      const status = (await fg.client.workflow.getHandle(`${slowRun}-agent-1`).describe()).status.name;
      return status === 'RUNNING' ? undefined : status;
    });
    assert.equal(childStatus, 'CANCELLED');
  });
});
