/**
 * Issue 36, tokens and cost: against the fake OpenAI-compatible server reporting `usage` (cached
 * prompt tokens included), an invocation's tokens and cost show in its status, in its run's
 * results (an agent step) and in /metrics; an agent's token and cost budgets end an invocation
 * between model calls, naming the budget; an organization's monthly budget refuses the next
 * invocation (HTTP 429 and a tool error), naming it.
 */
import assert from 'node:assert/strict';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { alertWorkflowId } from '../../src/common/alerts';
import { alertStateQuery } from '../../src/common/workflow-contracts';
import { eventually } from '../support/eventually';
import { signedReceiver } from '../support/signed-receiver';
import { asAdminOf, getJson, pollStatus, publishWorkflow, trigger, type TestFlowgate } from '../support/flowgate';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm';
import { parsePrometheus, valueOf } from '../observability/prometheus-text';
import { callTool, createOrg, runtimeToken, startFakeSearch, startToolFlowgate, type FakeSearch } from '../tools/support';

interface Usage {
  totalTokens: number; promptTokens: number; completionTokens: number; cachedPromptTokens: number; costUsd: string | null; costNote?: string;
  byModel: { model: string; calls: number; totalTokens: number; costUsd: string | null; costNote?: string }[];
}
interface Invocation { invocationId: string; status: string; error?: string; reason?: string; usage: Usage; response?: string }

// USD per million tokens
const PRICES = { 'fake-model': { input: 2, output: 10, cachedInput: 0.5 } };
const search = (query: string) => ({ toolCalls: [{ name: 'web-search_search', arguments: { query } }] });

describe('agents: tokens, cost and budgets', () => {
  let fg: TestFlowgate;
  let llm: FakeLlm;
  let web: FakeSearch;

  before(async () => {
    llm = await startFakeLlm();
    web = await startFakeSearch();
    fg = await startToolFlowgate({
      FLOWGATE_LLM_BASE_URL: llm.baseUrl, FLOWGATE_LLM_MODEL: 'fake-model', FLOWGATE_SEARCH_URL: web.url, FLOWGATE_AGENT_WAIT_SECONDS: '30',
      FLOWGATE_MODEL_PRICES: JSON.stringify(PRICES),
    });
  });
  after(async () => {
    await fg?.stop();
    await llm?.close();
    await web?.close();
  });
  beforeEach(() => {
    llm.script.length = 0;
    llm.requests.length = 0;
  });

  async function agent(as: TestFlowgate, fields: Record<string, unknown>): Promise<string> {
    const created = await as.admin<{ id: string }>('POST', '/api/v1/agents', {
      name: 'researcher', instructions: 'Search, then answer.', servers: [{ name: 'web-search', allTools: true }], ...fields,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body.id;
  }

  async function invoke(as: TestFlowgate, agentId: string, message = 'go'): Promise<{ status: number; body: Invocation }> {
    return as.admin<Invocation>('POST', `/api/v1/agents/${agentId}/invoke`, { message, waitSeconds: 30 });
  }

  async function metric(name: string, labels: Record<string, string>): Promise<number> {
    const response = await fg.request('/metrics', { headers: { Authorization: `Bearer ${fg.adminToken}` } });
    return valueOf(parsePrometheus(await response.text()), name, labels);
  }

  it('shows an invocation\'s tokens (cached included) and cost in its status and in /metrics; an unpriced model\'s cost is null', async function () {
    this.timeout(60_000);
    const agentId = await agent(fg, {});
    llm.script.push(
      { ...search('temporal'), usage: { prompt: 1000, completion: 50, cached: 400 } },
      { content: 'Temporal is a workflow engine.', usage: { prompt: 1200, completion: 80, cached: 1000 } },
    );
    const invoked = await invoke(fg, agentId);
    assert.equal(invoked.status, 200, JSON.stringify(invoked.body));
    assert.equal(invoked.body.status, 'COMPLETE');
    // prompt 2200 (1400 cached), completion 130: 800 × 2 + 1400 × 0.5 + 130 × 10 = 3600 USD per million tokens
    const expected = { totalTokens: 2330, promptTokens: 2200, completionTokens: 130, cachedPromptTokens: 1400, costUsd: '0.0036' };
    assert.deepEqual({ ...invoked.body.usage, byModel: undefined }, { ...expected, byModel: undefined });
    assert.deepEqual(invoked.body.usage.byModel.map((m) => [m.model, m.calls, m.totalTokens, m.costUsd]), [['fake-model', 2, 2330, '0.0036']]);

    const status = await fg.admin<Invocation>('GET', `/api/v1/agents/invocations/${invoked.body.invocationId}`);
    assert.equal(status.status, 200);
    assert.deepEqual(status.body.usage, invoked.body.usage);
    // the agent-management tool reads the same
    const { token } = await runtimeToken(fg);
    const viaTool = await callTool(fg, 'agent-management', token, 'agent_invocation_status', { invocationId: invoked.body.invocationId });
    assert.equal((viaTool.body?.result?.structuredContent as { usage?: Usage } | undefined)?.usage?.totalTokens, 2330);

    const labels = { org: 'org_default', agent: agentId, model: 'fake-model' };
    assert.equal(await metric('flowgate_agent_tokens_total', { ...labels, kind: 'prompt' }), 2200);
    assert.equal(await metric('flowgate_agent_tokens_total', { ...labels, kind: 'completion' }), 130);
    assert.equal(await metric('flowgate_agent_tokens_total', { ...labels, kind: 'cached_prompt' }), 1400);
    assert.ok(Math.abs(await metric('flowgate_agent_cost_usd_total', labels) - 0.0036) < 1e-12);

    const unpriced = await agent(fg, { name: 'local', model: { model: 'local-llama' } });
    llm.script.push({ content: 'hi', usage: { prompt: 30, completion: 3 } });
    const local = await invoke(fg, unpriced);
    assert.equal(local.body.usage.totalTokens, 33);
    assert.equal(local.body.usage.costUsd, null);
    assert.match(local.body.usage.costNote ?? '', /no price for this model in FLOWGATE_MODEL_PRICES: local-llama/);
    assert.equal(await metric('flowgate_agent_tokens_total', { org: 'org_default', agent: unpriced, model: 'local-llama', kind: 'prompt' }), 30);
  });

  it('carries an agent step\'s usage into its run\'s results, per step and summed', async function () {
    this.timeout(60_000);
    const agentId = await agent(fg, { name: 'summariser' });
    llm.script.push(
      { ...search('durable'), usage: { prompt: 100, completion: 20 } },
      { content: 'first', usage: { prompt: 150, completion: 30, cached: 100 } },
      { content: 'second', usage: { prompt: 40, completion: 10 } },
    );
    const p = await publishWorkflow(fg, {
      name: 'two-agents',
      steps: [
        { name: 'Ask', type: 'agent', agentId, message: 'one' },
        { name: 'Ask again', type: 'agent', agentId, message: 'two' },
        { name: 'Join', type: 'template', template: '{{steps.1.result}} {{steps.2.result}}' },
      ],
    });
    const runId = (await trigger(fg, p, {})).headers.get('X-Pf-Run-Id') ?? '';
    assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');
    const { status, body } = await getJson<{ results: { stepIndex: number; usage?: Usage }[]; usage?: Usage }>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
    assert.equal(status, 200);
    // step 1: 250 prompt (100 cached), 50 completion: 150 × 2 + 100 × 0.5 + 50 × 10 = 850; step 2: 40 × 2 + 10 × 10 = 180
    assert.deepEqual(body.results.map((r) => [r.stepIndex, r.usage?.totalTokens, r.usage?.costUsd]), [[1, 300, '0.00085'], [2, 50, '0.00018'], [3, undefined, undefined]]);
    assert.equal(body.usage?.totalTokens, 350);
    assert.equal(body.usage?.cachedPromptTokens, 100);
    assert.equal(body.usage?.costUsd, '0.00103');
    assert.deepEqual(body.usage?.byModel.map((m) => [m.model, m.calls]), [['fake-model', 3]]);
  });

  it('stops an invocation at its token budget between model calls, without starting the tool calls, naming the budget', async function () {
    this.timeout(60_000);
    const agentId = await agent(fg, { name: 'thrifty', limits: { maxTokens: 100 } });
    llm.script.push({ ...search('one'), usage: { prompt: 80, completion: 30 } }, { content: 'never asked' });
    const searchesBefore = web.requests.length;
    const invoked = await invoke(fg, agentId);
    assert.equal(invoked.status, 200, JSON.stringify(invoked.body));
    assert.equal(invoked.body.status, 'FAILED');
    assert.equal(invoked.body.reason, 'BUDGET_EXHAUSTED');
    assert.match(invoked.body.error ?? '', /token budget \(limits\.maxTokens = 100\) is reached: 110 tokens used; the invocation stopped after model call 1, without running the 1 tool call/);
    assert.equal(invoked.body.usage.totalTokens, 110);
    assert.equal(llm.requests.length, 1, 'no model call after the budget is reached');
    assert.equal(web.requests.length, searchesBefore, 'no tool call started after the budget is reached');
  });

  it('stops an invocation at its cost budget after finishing the tool calls of the turn before', async function () {
    this.timeout(60_000);
    const agentId = await agent(fg, { name: 'frugal', limits: { maxCostUsd: 0.001 } });
    // call 1: 100 × 2 + 50 × 10 = 700 (0.0007 USD, under); call 2: 200 × 2 + 50 × 10 = 900, together 0.0016 USD
    llm.script.push({ ...search('a'), usage: { prompt: 100, completion: 50 } }, { ...search('b'), usage: { prompt: 200, completion: 50 } }, { content: 'never asked' });
    const searchesBefore = web.requests.length;
    const invoked = await invoke(fg, agentId);
    assert.equal(invoked.body.status, 'FAILED', JSON.stringify(invoked.body));
    assert.equal(invoked.body.reason, 'BUDGET_EXHAUSTED');
    assert.match(invoked.body.error ?? '', /cost budget \(limits\.maxCostUsd = 0\.001 USD\) is reached: 0\.0016 USD spent; the invocation stopped after model call 2/);
    assert.equal(invoked.body.usage.costUsd, '0.0016');
    assert.equal(llm.requests.length, 2);
    assert.equal(web.requests.length, searchesBefore + 1, 'the first turn\'s tool call ran, the second\'s did not');

    // a cost budget needs a price for the agent's model
    const unpriced = await agent(fg, { name: 'unpriced', model: { model: 'local-llama' }, limits: { maxCostUsd: 1 } });
    const refused = await invoke(fg, unpriced);
    assert.equal(refused.body.status, 'FAILED');
    assert.match(refused.body.error ?? '', /cost budget \(limits\.maxCostUsd\) but model local-llama has no price in FLOWGATE_MODEL_PRICES/);
  });

  it('refuses the next invocation once the organization\'s monthly budget is used up, naming it (HTTP 429 and a tool error)', async function () {
    this.timeout(60_000);
    const org = await createOrg(fg);
    const tenant = asAdminOf(fg, org.adminToken);
    // only the instance administrator sets a budget
    assert.equal((await tenant.admin('PUT', `/api/v1/orgs/${org.id}/budget`, { monthlyMaxTokens: 1 })).status, 403);
    assert.equal((await fg.admin('PUT', `/api/v1/orgs/${org.id}/budget`, { monthlyMaxTokens: 0 })).status, 400);
    const set = await fg.admin<{ monthlyMaxTokens: number; monthlyMaxCostUsd: string | null }>('PUT', `/api/v1/orgs/${org.id}/budget`, { monthlyMaxTokens: 100, monthlyMaxCostUsd: 5 });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual([set.body.monthlyMaxTokens, set.body.monthlyMaxCostUsd], [100, '5']);

    const agentId = await agent(tenant, { name: 'tenant-agent' });
    // the answer that crosses the budget is kept: a final answer is never thrown away
    llm.script.push({ content: 'answered', usage: { prompt: 90, completion: 20 } });
    const first = await invoke(tenant, agentId);
    assert.equal(first.body.status, 'COMPLETE', JSON.stringify(first.body));
    assert.equal(first.body.response, 'answered');

    const own = await tenant.admin<{ month: string; used: { tokens: number; costUsd: string } }>('GET', '/api/v1/budget');
    assert.deepEqual(own.body.used, { tokens: 110, costUsd: '0.00038' });
    assert.equal(own.body.month, new Date().toISOString().slice(0, 7));

    const refused = await tenant.admin<{ error: { code: string; message: string } } & Record<string, unknown>>('POST', `/api/v1/agents/${agentId}/invoke`, { message: 'again' });
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.match(JSON.stringify(refused.body), /budget_exhausted/);
    assert.match(JSON.stringify(refused.body), /monthly token budget \(monthlyMaxTokens = 100\) is reached: 110 tokens used this month/);
    assert.equal(llm.requests.length, 1, 'the refused invocation made no model call');

    const { token } = await runtimeToken(fg, org.adminToken);
    const viaTool = await callTool(fg, 'agent-management', token, 'agent_invoke', { agentId, message: 'and again' });
    const result = viaTool.body?.result as { isError?: boolean; content?: { text: string }[] } | undefined;
    assert.equal(result?.isError, true, viaTool.text);
    assert.match(result?.content?.[0]?.text ?? '', /monthly token budget \(monthlyMaxTokens = 100\)/);

    // an agent step of the organization's run is refused too: the step fails naming the budget
    const p = await publishWorkflow(tenant, { name: 'over-budget', steps: [{ name: 'Ask', type: 'agent', agentId, message: 'hi' }] });
    const runId = (await trigger(tenant, p, {})).headers.get('X-Pf-Run-Id') ?? '';
    assert.equal((await pollStatus(tenant, p, runId)).status, 'FAILED');
    await assert.rejects(fg.client.workflow.getHandle(`${runId}-agent-1`).result(), (err: unknown) => err instanceof WorkflowFailedError
      && err.cause instanceof ApplicationFailure && err.cause.type === 'BUDGET_EXHAUSTED' && /monthlyMaxTokens = 100/.test(err.cause.message));
    assert.equal(llm.requests.length, 1, 'the refused step made no model call');

    // raising the budget lets the organization go on
    await fg.admin('PUT', `/api/v1/orgs/${org.id}/budget`, { monthlyMaxTokens: null });
    llm.script.push({ content: 'again', usage: { prompt: 5, completion: 5 } });
    assert.equal((await invoke(tenant, agentId)).body.status, 'COMPLETE');
  });

  it('a budget alert rule fires once per month when the organization\'s monthly budget reaches its share (signed webhook, audited)', async function () {
    this.timeout(120_000);
    const org = await createOrg(fg);
    const tenant = asAdminOf(fg, org.adminToken);
    assert.equal((await fg.admin('PUT', `/api/v1/orgs/${org.id}/budget`, { monthlyMaxTokens: 1000 })).status, 200);
    const secret = (await tenant.admin<{ secret: string }>('GET', '/api/v1/webhook-secret')).body.secret;
    const rx = await signedReceiver(() => secret);
    try {
      const created = await tenant.admin<{ id: string }>('POST', '/api/v1/alerts', {
        name: 'spend', condition: { kind: 'budget', percent: 80 }, destination: { type: 'webhook', url: `${rx.url}/budget` },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const agentId = await agent(tenant, { name: 'spender' });
      const say = async (prompt: number): Promise<void> => {
        llm.script.push({ content: 'ok', usage: { prompt, completion: 0 } });
        assert.equal((await invoke(tenant, agentId)).body.status, 'COMPLETE');
      };
      await say(500);
      await say(350);
      const delivery = await eventually(async () => rx.deliveries[0], 'the budget alert arrived', 60_000, 250);
      assert.ok(delivery.verified, 'signed with the organization\'s secret');
      const alert = JSON.parse(delivery.body) as { data: { rule: { kind: string }; percent: number; budget: { period: string; percent: number; tokens: number; maxTokens: number } } };
      const month = new Date().toISOString().slice(0, 7);
      assert.deepEqual([alert.data.rule.kind, alert.data.percent], ['budget', 80]);
      assert.deepEqual(alert.data.budget, { ...alert.data.budget, period: month, percent: 85, tokens: 850, maxTokens: 1000 });
      // further use within the month: no second alert
      await say(100);
      const handle = fg.client.workflow.getHandle(alertWorkflowId(created.body.id));
      const state = await eventually(async () => (await handle.query(alertStateQuery).catch(() => undefined)) ?? undefined, 'the evaluator answers');
      assert.deepEqual([state.periods, state.fired], [[month], 1]);
      const audit = await eventually(async () => {
        const { body } = await tenant.admin<{ records: { action: string; details: Record<string, unknown> }[] }>('GET', '/api/v1/audit?action=alert.delivered');
        return body.records[0];
      }, 'the delivery is audited');
      assert.deepEqual([audit.details.kind, audit.details.period, audit.details.runId], ['budget', month, null]);
      assert.equal(rx.deliveries.length, 1);
    } finally {
      await rx.close();
    }
  });
});
