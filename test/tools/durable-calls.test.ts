/**
 * Durable tool calls (issue 50) against a real Temporal, a whole flowgate and a customer API on
 * loopback that speaks plain HTTP (the shape of any OpenAPI upstream) and is scripted per test:
 * a server marked `durable` lists its tools as task-capable; a 2026 client with the Tasks extension
 * gets a task whose attempts Temporal retries (503, a dropped connection, then an answer) with one
 * Idempotency-Key; tasks/cancel aborts the upstream request; a plain call answers inline; the
 * audit trail and the metrics show the attempts.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { TestFlowgate } from '../support/flowgate';
import { eventually } from '../support/eventually';
import { pollStatus, publishWorkflow, trigger } from '../support/flowgate';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm';
import { listenOnLoopback, type LoopbackServer } from '../support/loopback';
import { asAdmin, createCustomConnection, createServer } from './custom-support';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { startScriptedRemote } from '../support/scripted-remote-mcp';
import { DEFAULT_ORG_ID } from '../../src/registry';
import { ToolCallError } from '../../src/tools/server';
import { connectMcp, pollTask, startTask } from './mcp-tasks-support';
import { callTool, modernRpc, rpc, runtimeToken, startToolFlowgate } from './support';


/** The upstream's document: an order to place (retried), and a slow report (cancelled). */
const DOCUMENT = {
  openapi: '3.0.3', info: { title: 'Orders', version: '1' },
  paths: {
    '/orders': {
      post: {
        operationId: 'placeOrder',
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] } } } },
        responses: { '200': { description: 'placed' } },
      },
    },
    '/report': { get: { operationId: 'slowReport', responses: { '200': { description: 'the report' } } } },
    '/refuse': { get: { operationId: 'refused', responses: { '400': { description: 'no' } } } },
  },
};

interface Seen {
  path: string;
  idempotencyKey: string | undefined;
  closed: boolean;
}

type Step = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A customer API on loopback: answers each request of a path by its script, in order from when it was set (the last step repeats). */
interface ScriptedApi extends LoopbackServer {
  seen: Seen[];
  script: { set(path: string, steps: Step[]): void };
}

async function startScriptedApi(): Promise<ScriptedApi> {
  const seen: Seen[] = [];
  const scripts = new Map<string, { steps: Step[]; used: number }>();
  const script = { set: (path: string, steps: Step[]): void => void scripts.set(path, { steps, used: 0 }) };
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const entry: Seen = { path, idempotencyKey: req.headers['idempotency-key'] as string | undefined, closed: false };
    seen.push(entry);
    res.on('close', () => {
      entry.closed = !res.writableEnded;
    });
    const scripted = scripts.get(path);
    const step = scripted ? scripted.steps[Math.min(scripted.used++, scripted.steps.length - 1)] : undefined;
    req.resume();
    req.on('end', () => {
      if (step) step(req, res);
      else res.writeHead(404).end();
    });
  });
  const listening = await listenOnLoopback(server);
  return { ...listening, seen, script };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => (_req: http.IncomingMessage, res: http.ServerResponse): void => {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
};
/** drops the connection without an answer */
const drop = (req: http.IncomingMessage): void => {
  req.socket.destroy();
};
/** never answers: the request stays open until the caller goes away */
const hang = (): void => undefined;

/** A 2026-era request, declaring the Tasks extension unless told. */
const modern = modernRpc;

describe('durable tool calls', () => {
  let fg: TestFlowgate;
  let api: ScriptedApi;
  let token: string;
  let apiKeyId: string;
  let pcid: string;
  let serverId: string;
  let llm: FakeLlm;

  before(async () => {
    api = await startScriptedApi();
    llm = await startFakeLlm();
    fg = await startToolFlowgate({ FLOWGATE_LLM_BASE_URL: llm.baseUrl, FLOWGATE_LLM_MODEL: 'fake-model', FLOWGATE_LLM_API_KEY: 'sk-test', FLOWGATE_AGENT_WAIT_SECONDS: '30' });
    ({ token, apiKeyId } = await runtimeToken(fg));
    pcid = await createCustomConnection(fg, fg.adminToken, { baseUrl: api.url, auth: { kind: 'api_key', name: 'X-Api-Key', value: 'k' } });
    const server = await createServer(fg, fg.adminToken, {
      connection: pcid, document: DOCUMENT, durable: { maxAttempts: 4, initialIntervalSeconds: 0.2, backoff: 1.5, attemptTimeoutSeconds: 5, timeoutSeconds: 120 },
    });
    serverId = server.id;
  });

  after(async () => {
    await fg?.stop();
    await api?.close();
    await llm?.close();
  });

  it('takes, validates and shows `durable`; its tools say they may run as tasks', async () => {
    const refused = await asAdmin(fg, fg.adminToken, 'POST', '/api/v1/servers', { connection: pcid, document: DOCUMENT, durable: { maxAttempts: 0 } });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    const unknown = await asAdmin(fg, fg.adminToken, 'POST', '/api/v1/servers', { connection: pcid, document: DOCUMENT, durable: { maxAttempts: 2, retries: 3 } });
    assert.equal(unknown.status, 400, JSON.stringify(unknown.body));
    const shown = await asAdmin<{ durable: unknown; tools: { name: string; execution?: unknown }[] }>(fg, fg.adminToken, 'GET', `/api/v1/servers/${serverId}`);
    assert.equal(shown.status, 200);
    assert.deepEqual(shown.body.durable, { maxAttempts: 4, initialIntervalSeconds: 0.2, backoff: 1.5, attemptTimeoutSeconds: 5, timeoutSeconds: 120 });
    assert.ok(shown.body.tools.every((t) => JSON.stringify(t.execution) === '{"taskSupport":"optional"}'), JSON.stringify(shown.body.tools));
    const listed = await rpc(fg, serverId, token, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const tools = (listed.body?.result?.tools ?? []) as { name: string; execution?: { taskSupport: string } }[];
    assert.deepEqual(tools.map((t) => [t.name, t.execution?.taskSupport]), [['placeOrder', 'optional'], ['slowReport', 'optional'], ['refused', 'optional']]);
    // a plain server stays a plain proxy: PUT without durable
    const plain = await asAdmin<{ durable: unknown }>(fg, fg.adminToken, 'POST', '/api/v1/servers', { connection: pcid, document: DOCUMENT });
    assert.equal(plain.status, 201);
    assert.equal(plain.body.durable, null);
  });

  it('retries a 503 and a dropped connection, then completes: tasks/get shows the result; the upstream saw three requests with one Idempotency-Key', async () => {
    api.script.set('/orders', [json(503, { error: 'busy' }), drop, json(200, { order: 'o-1', status: 'placed' })]);
    const before = api.seen.length;
    const called = await modern(fg, serverId, token, 'tools/call', { name: 'placeOrder', arguments: { PCID: pcid, body: { item: 'tea' } } }, 'placeOrder');
    assert.equal(called.status, 200, called.text);
    const task = called.body?.result as { resultType: string; taskId: string; status: string };
    assert.equal(task.resultType, 'task', called.text);
    assert.match(task.taskId, /^dtask_/);
    const done = await eventually(async () => {
      const got = await modern(fg, serverId, token, 'tasks/get', { taskId: task.taskId }, task.taskId);
      const result = got.body?.result as { status: string; result?: { structuredContent?: Record<string, unknown>; isError?: boolean } } | undefined;
      return result && result.status !== 'working' ? result : undefined;
    }, 'the durable task to end', 60_000, 250);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.result?.isError, false);
    assert.deepEqual(done.result?.structuredContent, { order: 'o-1', status: 'placed' });
    const requests = api.seen.slice(before).filter((s) => s.path === '/orders');
    assert.equal(requests.length, 3, JSON.stringify(requests));
    assert.deepEqual([...new Set(requests.map((r) => r.idempotencyKey))], [`flowgate-${task.taskId}`]);

    // the audit trail: started, two retries (5xx, then the network), completed on the third attempt
    const audit = await eventually(async () => {
      const page = await asAdmin<{ records: { action: string; actor: string; target: { id: string }; details: Record<string, unknown> }[] }>(fg, fg.adminToken, 'GET', '/api/v1/audit?limit=100');
      const mine = page.body.records.filter((r) => r.target?.id === task.taskId).reverse();
      return mine.some((r) => r.action === 'durable_call.completed') ? mine : undefined;
    }, 'the durable call\'s audit records');
    assert.deepEqual(audit.map((r) => [r.action, r.details.reason ?? null, r.details.attempt ?? null]), [
      ['durable_call.started', null, null], ['durable_call.retried', 'http_5xx', 1], ['durable_call.retried', 'network', 2], ['durable_call.completed', null, 3],
    ]);
    assert.ok(audit.every((r) => r.actor === `api-key:${apiKeyId}`), 'the records name the API key whose token made the call');
    // the metrics: attempts by outcome, retries by reason
    const metrics = await (await fg.request('/metrics', { headers: { Authorization: `Bearer ${fg.adminToken}` } })).text();
    assert.match(metrics, new RegExp(`flowgate_durable_tool_retries_total\\{server="${serverId}",tool="placeOrder",reason="http_5xx"\\} 1`));
    assert.match(metrics, new RegExp(`flowgate_durable_tool_retries_total\\{server="${serverId}",tool="placeOrder",reason="network"\\} 1`));
    assert.match(metrics, new RegExp(`flowgate_durable_tool_attempts_total\\{server="${serverId}",tool="placeOrder",outcome="ok"\\} 1`));
  });

  it('honours a 429\'s Retry-After and does not retry another 4xx', async () => {
    api.script.set('/orders', [json(429, { error: 'slow down' }, { 'Retry-After': '1' }), json(200, { order: 'o-2' })]);
    api.script.set('/refuse', [json(400, { error: 'bad item' })]);
    const before = api.seen.length;
    const started = Date.now();
    const placed = await callTool(fg, serverId, token, 'placeOrder', { PCID: pcid, body: { item: 'milk' } });
    const waited = Date.now() - started;
    assert.deepEqual(placed.body?.result?.structuredContent, { order: 'o-2' }, placed.text);
    // a pause that is the behaviour under test: the retry came after the upstream's second, not the policy's 0.2 s
    assert.ok(waited >= 1000, `answered after ${waited} ms`);
    const refused = await callTool(fg, serverId, token, 'refused', { PCID: pcid });
    assert.equal(refused.body?.result?.isError, true, refused.text);
    assert.match(JSON.stringify(refused.body?.result?.structuredContent), /answered 400/);
    assert.equal(api.seen.slice(before).filter((s) => s.path === '/refuse').length, 1, 'a 400 is not retried');
  });

  it('tasks/cancel cancels a durable call in flight: the task is cancelled and the upstream request is aborted', async () => {
    api.script.set('/report', [hang]);
    const before = api.seen.length;
    const called = await modern(fg, serverId, token, 'tools/call', { name: 'slowReport', arguments: { PCID: pcid } }, 'slowReport');
    const task = called.body?.result as { taskId: string };
    assert.ok(task?.taskId, called.text);
    const request = await eventually(async () => api.seen.slice(before).find((s) => s.path === '/report'), 'the upstream to be called');
    const cancelled = await modern(fg, serverId, token, 'tasks/cancel', { taskId: task.taskId }, task.taskId);
    assert.equal(cancelled.status, 200, cancelled.text);
    const got = await eventually(async () => {
      const answer = await modern(fg, serverId, token, 'tasks/get', { taskId: task.taskId }, task.taskId);
      const result = answer.body?.result as { status: string } | undefined;
      return result?.status === 'cancelled' ? result : undefined;
    }, 'the task to be cancelled');
    assert.equal(got.status, 'cancelled');
    await eventually(async () => (request.closed ? true : undefined), 'the upstream request to be aborted', 30_000);
    assert.equal(api.seen.slice(before).filter((s) => s.path === '/report').length, 1, 'a cancelled call is not attempted again');
  });

  it('a 2026 call without the Tasks extension answers inline when the result comes within its wait', async () => {
    api.script.set('/orders', [json(503, { error: 'busy' }), json(200, { order: 'o-3' })]);
    const called = await modern(fg, serverId, token, 'tools/call', { name: 'placeOrder', arguments: { PCID: pcid, body: { item: 'jam' } } }, 'placeOrder', false);
    assert.equal(called.status, 200, called.text);
    const result = called.body?.result as { resultType: string; structuredContent: unknown };
    assert.equal(result.resultType, 'complete');
    assert.deepEqual(result.structuredContent, { order: 'o-3' });
  });

  it('a workflow `tool` step goes through the same durable path: one task (its key the step\'s), the retry Temporal\'s, seen in Temporal and the audit trail', async () => {
    api.script.set('/orders', [json(502, { error: 'bad gateway' }), json(200, { order: 'o-4' })]);
    const before = api.seen.length;
    const p = await publishWorkflow(fg, {
      name: `durable-step-${randomUUID().slice(0, 8)}`,
      steps: [{ name: 'Order', type: 'tool', server: serverId, tool: 'placeOrder', arguments: { PCID: pcid, body: { item: '{{inputs.item}}' } } }],
    });
    const response = await trigger(fg, p, { item: 'bread' });
    const runId = response.headers.get('X-Pf-Run-Id') ?? '';
    const status = await pollStatus(fg, p, runId);
    assert.equal(status.status, 'COMPLETE', JSON.stringify(status));
    const requests = api.seen.slice(before).filter((s) => s.path === '/orders');
    assert.equal(requests.length, 2, 'one retry, made by the durable call alone');
    assert.deepEqual([...new Set(requests.map((r) => r.idempotencyKey))], [`${runId}:1`], 'every attempt sends the step\'s key');
    // the durable call's workflow, its id the task id, is in Temporal with its summary
    const started = await eventually(async () => {
      const page = await asAdmin<{ records: { action: string; actor: string; target: { id: string }; details: Record<string, unknown> }[] }>(fg, fg.adminToken, 'GET', '/api/v1/audit?limit=100');
      return page.body.records.find((r) => r.action === 'durable_call.started' && r.actor === 'flowgate' && r.details.tool === 'placeOrder');
    }, 'the step\'s durable call in the audit trail');
    const described = await fg.client.workflow.getHandle(started.target.id).describe();
    assert.equal(described.type, 'durableToolCall');
    assert.equal(described.status.name, 'COMPLETED');
    assert.equal(await described.staticSummary(), `durable tool call ${serverId}/placeOrder`);
  });

  it('a 2025 client (the official SDK) runs a durable tool as a task and polls it to completed', async () => {
    api.script.set('/orders', [json(500, { error: 'oops' }), json(200, { order: 'o-5' })]);
    const client = await connectMcp(fg.url, serverId, token);
    try {
      const task = await startTask(client, 'placeOrder', { PCID: pcid, body: { item: 'rice' } });
      assert.match(task.taskId, /^dtask_/);
      const done = await pollTask(client, task.taskId, (t) => t.status !== 'working', 60_000);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      assert.deepEqual(result.structuredContent, { order: 'o-5' });
    } finally {
      await client.close();
    }
  });

  it('a durable remote MCP server gets the same tools/call on every attempt, with one idempotency key in _meta', async () => {
    let calls = 0;
    const remote = await startScriptedRemote([{
      name: 'charge', inputSchema: { type: 'object', properties: { amount: { type: 'number' } } },
      answer: (params) => (++calls === 1 ? { error: { code: -32603, message: 'busy' }, status: 503 } : { result: { content: [{ type: 'text', text: 'ok' }], structuredContent: { charged: params.arguments } } }),
    }]);
    try {
      const server = await createServer(fg, fg.adminToken, { url: remote.url, durable: { maxAttempts: 3, initialIntervalSeconds: 0.2 } });
      const called = await modern(fg, server.id, token, 'tools/call', { name: 'charge', arguments: { amount: 5 } }, 'charge');
      const task = called.body?.result as { taskId: string };
      assert.ok(task?.taskId, called.text);
      const done = await eventually(async () => {
        const got = await modern(fg, server.id, token, 'tasks/get', { taskId: task.taskId }, task.taskId);
        const result = got.body?.result as { status: string; result?: { structuredContent?: unknown } } | undefined;
        return result && result.status !== 'working' ? result : undefined;
      }, 'the remote durable task to end', 60_000, 250);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.deepEqual(done.result?.structuredContent, { charged: { amount: 5 } });
      const attempts = remote.calls();
      assert.equal(attempts.length, 2);
      const keys = attempts.map((r) => (r.params._meta as Record<string, unknown> | undefined)?.['io.flowgate/idempotencyKey']);
      assert.deepEqual([...new Set(keys)], [`flowgate-${task.taskId}`]);
      assert.deepEqual(attempts[0]?.params.arguments, attempts[1]?.params.arguments);
    } finally {
      await remote.close();
    }
  });

  it('an agent\'s tool call goes through the same durable path: its key on every attempt, the retry Temporal\'s', async () => {
    api.script.set('/orders', [json(503, { error: 'busy' }), json(200, { order: 'o-6' })]);
    const before = api.seen.length;
    const created = await callTool(fg, 'agent-management', token, 'agent_create', { name: `orders-${randomUUID().slice(0, 6)}`, instructions: 'Place orders.', servers: [{ name: serverId, allTools: true }] });
    const agentId = String((created.body?.result?.structuredContent as Record<string, unknown> | undefined)?.id);
    llm.script.push(
      { toolCalls: [{ name: `${serverId}_placeOrder`, arguments: { PCID: pcid, body: { item: 'coffee' } } }] },
      { content: 'Ordered.' },
    );
    const invoked = await callTool(fg, 'agent-management', token, 'agent_invoke', { agentId, message: 'Order coffee.' });
    const answer = invoked.body?.result?.structuredContent as Record<string, unknown> | undefined;
    assert.equal(answer?.status, 'COMPLETE', invoked.text);
    const requests = api.seen.slice(before).filter((s) => s.path === '/orders');
    assert.equal(requests.length, 2, 'one retry, made by the durable call alone');
    assert.equal(new Set(requests.map((r) => r.idempotencyKey)).size, 1);
    assert.match(requests[0]?.idempotencyKey ?? '', /:\d+:\d+$/, 'the agent\'s own key: <invocationId>:<turn>:<index>');
  });

  it('a plain call whose result does not come within its wait answers TIMEOUT naming the task to poll; the call goes on', async () => {
    api.script.set('/report', [hang]);
    const before = api.seen.length;
    let taskId = '';
    // the dispatcher, as an in-process caller uses it, with a short wait
    await assert.rejects(fg.tools.call(DEFAULT_ORG_ID, serverId, 'slowReport', { PCID: pcid }, { durableWaitMs: 1500 }), (error: unknown) => {
      assert.ok(error instanceof ToolCallError, String(error));
      assert.equal(error.code, 'TIMEOUT');
      taskId = /durable task (dtask_\S+) /.exec(error.message)?.[1] ?? '';
      assert.match(error.message, new RegExp(`it goes on: poll tasks/get with taskId ${taskId}`));
      return true;
    });
    // the task is there and still working, readable through tasks/get
    const got = await modern(fg, serverId, token, 'tasks/get', { taskId }, taskId);
    assert.equal((got.body?.result as { status?: string } | undefined)?.status, 'working', got.text);
    await eventually(async () => api.seen.slice(before).find((s) => s.path === '/report'), 'the upstream to be called');
    await modern(fg, serverId, token, 'tasks/cancel', { taskId }, taskId);
  });
});
