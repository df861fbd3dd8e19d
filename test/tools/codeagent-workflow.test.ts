import assert from 'node:assert/strict';
import { judgeUntil, valueAt } from '../../src/common/until';
import { startFakeCodeAgent, type FakeCodeAgent } from '../support/fake-codeagent';
import { getJson, pollStatus, publishWorkflow, startTestFlowgate, trigger, type StatusBody, type TestFlowgate } from '../support/flowgate';

interface WaitingStatus extends StatusBody {
  waitingOn?: { kind: string; stepIndex: number; resumeAt?: string };
}

const TERMINAL = ['FINISHED', 'ERROR', 'CANCELLED', 'EXPIRED'];

describe('codeagent from workflows: a durable poll over get_run', function () {
  this.timeout(120_000);
  let fake: FakeCodeAgent;
  let fg: TestFlowgate;
  let pcid: string;

  before(async () => {
    fake = await startFakeCodeAgent({ runMs: 8_000, eventCount: 4 });
    fg = await startTestFlowgate();
    const created = await fg.admin<{ PCID: string }>('POST', '/api/v1/connections', { application: 'codeagent', credentials: { apiKey: fake.apiKey, baseUrl: fake.url } });
    assert.equal(created.status, 201);
    pcid = created.body.PCID;
  });
  after(async () => {
    await fg?.stop();
    await fake?.close();
  });

  const steps = (extra: Record<string, unknown> = {}) => [
    { name: 'Start agent', type: 'tool', server: 'codeagent', tool: 'codeagent_create_agent',
      arguments: { PCID: pcid, prompt: { text: '{{inputs.task}}' }, repos: [{ url: 'https://github.com/acme/widgets' }] } },
    { name: 'Wait for the run', type: 'tool', server: 'codeagent', tool: 'codeagent_get_run',
      arguments: { PCID: pcid, id: '{{steps.1.json.agent.id}}', runId: '{{steps.1.json.run.id}}' },
      until: { path: 'status', in: TERMINAL }, pollSeconds: 1, maxWaitSeconds: 120, ...extra },
    { name: 'Artifacts', type: 'tool', server: 'codeagent', tool: 'codeagent_list_artifacts', arguments: { PCID: pcid, id: '{{steps.1.json.agent.id}}' } },
    { name: 'Report', type: 'template', format: 'plaintext', template: '{{steps.2.json.status}}: {{steps.3.json.items.0.path}}' },
  ];

  it('creates an agent, waits PAUSED on timers for its run across a worker restart, and lists its artifacts', async () => {
    const p = await publishWorkflow(fg, { name: `codeagent-${Date.now()}`, steps: steps() });
    const response = await trigger(fg, p, { task: 'Write the report' });
    const runId = response.headers.get('X-Pf-Run-Id') ?? '';
    assert.ok(runId, `trigger answered ${response.status}`);

    const paused = await pollStatus(fg, p, runId, (s) => s.stepStatus['2'] === 'PAUSED', 30_000) as WaitingStatus;
    assert.equal(paused.status, 'PAUSED');
    assert.equal(paused.waitingOn?.kind, 'timer');
    assert.equal(paused.waitingOn?.stepIndex, 2);

    // no worker during part of the wait: the poll lives in Temporal timers, not in a process
    await fg.stopWorker();
    const pollsBefore = fake.requests.filter((r) => r.path.includes('/runs/')).length;
    // a window with no worker is the behaviour under test (nothing may poll in it), not a wait for an event
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    assert.equal(fake.requests.filter((r) => r.path.includes('/runs/')).length, pollsBefore, 'nothing polls while no worker runs');
    await fg.startWorker();

    const done = await pollStatus(fg, p, runId, undefined, 60_000);
    assert.equal(done.status, 'COMPLETE', JSON.stringify(done));
    const agent = [...fake.agents.values()].find((a) => a.runs[0]?.prompt.text === 'Write the report');
    assert.equal(agent?.runs[0]?.status, 'FINISHED');
    assert.ok(fake.requests.filter((r) => r.path === `/v1/agents/${agent?.id}/runs/${agent?.runs[0]?.id}`).length >= 3, 'get_run was called on each poll');
    const results = await getJson<{ results: { resultUrls: Record<string, { url: string }> }[] }>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
    const link = results.body.results.at(-1)?.resultUrls['output.txt']?.url ?? '';
    assert.equal(await (await fetch(link)).text(), 'FINISHED: artifacts/report.md');
  });

  it('ends the step in TIMEOUT when the condition still fails after maxWaitSeconds', async () => {
    const p = await publishWorkflow(fg, { name: `codeagent-timeout-${Date.now()}`, steps: steps({ maxWaitSeconds: 2 }) });
    const runId = (await trigger(fg, p, { task: 'Too slow' })).headers.get('X-Pf-Run-Id') ?? '';
    const done = await pollStatus(fg, p, runId, undefined, 30_000);
    assert.equal(done.status, 'TIMEOUT', JSON.stringify(done));
    assert.match(done.error ?? '', /status = "(CREATING|RUNNING)" after \d+ calls: not one of .* within 2 s/);
  });

  it('refuses pollSeconds or maxWaitSeconds without until, and an until without a path', async () => {
    const bad = await fg.admin<{ message?: string }>('POST', '/api/v1/workflows', { name: 'bad', steps: [{ name: 'x', type: 'tool', server: 'codeagent', tool: 'codeagent_get_run', pollSeconds: 3 }] });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.body), /pollSeconds/);
    const noPath = await fg.admin('POST', '/api/v1/workflows', { name: 'bad', steps: [{ name: 'x', type: 'tool', server: 'codeagent', tool: 'codeagent_get_run', until: { in: ['FINISHED'] } }] });
    assert.equal(noPath.status, 400);
  });
});

describe('until (the condition of a polling tool step)', () => {
  it('reads dotted paths through objects and arrays, and judges membership strictly', () => {
    assert.equal(valueAt({ run: { items: [{ id: 'a' }] } }, 'run.items.0.id'), 'a');
    assert.equal(valueAt({ run: null }, 'run.status'), undefined);
    assert.equal(valueAt({}, 'constructor'), undefined);
    assert.deepEqual(judgeUntil({ path: 'run.status', in: ['FINISHED'] }, '{"run":{"status":"FINISHED"}}', false), { met: true, value: 'FINISHED' });
    assert.deepEqual(judgeUntil({ path: 'n', in: [1] }, '{"n":"1"}', false), { met: false, value: '1' });
    assert.ok('error' in judgeUntil({ path: 'n', in: [1] }, 'not json', false));
    assert.ok('error' in judgeUntil({ path: 'n', in: [1] }, '{"n":1', true));
  });
});
