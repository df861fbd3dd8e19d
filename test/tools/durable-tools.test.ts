/**
 * Durable tool calls per tool (issue 50), against a real Temporal, a whole flowgate and a customer
 * API on loopback: `durableTools` makes one tool of a plain server durable, or one tool of a
 * durable server a plain proxied call; bad overrides are refused with a 400 that says why; only the
 * durable tools list `execution.taskSupport`, and only their calls are retried. Durable calls
 * through the gateway take slots of the organization's concurrency limit (FLOWGATE_ORG_MAX_RUNNING),
 * the semaphore its runs share.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { slotsQuery, type RunSlotsWorkflow } from '../../src/common/workflow-contracts';
import { ConsoleSessions } from '../../src/console/sessions';
import { hashSecret } from '../../src/crypto/secrets';
import { consoleHttp } from '../support/console-http';
import { eventually } from '../support/eventually';
import { publishWorkflow, trigger, type TestFlowgate } from '../support/flowgate';
import { listenOnLoopback, type LoopbackServer } from '../support/loopback';
import { asAdmin, createCustomConnection, createServer } from './custom-support';
import { connectMcp, pollTask, startTask } from './mcp-tasks-support';
import { callTool, rpc, runtimeToken, startToolFlowgate } from './support';

const DOCUMENT = {
  openapi: '3.0.3', info: { title: 'Orders', version: '1' },
  paths: {
    '/orders': {
      post: { operationId: 'placeOrder', responses: { '200': { description: 'placed' } } },
      get: { operationId: 'listOrders', responses: { '200': { description: 'the orders' } } },
    },
  },
};

/**
 * A customer API on loopback: each method answers its queued statuses in order, then 200; it keeps
 * what it saw. While `holding`, requests wait for release() and the most answered at once is kept.
 */
interface CountingApi extends LoopbackServer {
  seen: { method: string; idempotencyKey: string | undefined }[];
  fail(method: string, statuses: number[]): void;
  holding: boolean;
  held(): number;
  mostAtOnce(): number;
  release(): void;
}

async function startCountingApi(): Promise<CountingApi> {
  const seen: CountingApi['seen'] = [];
  const queued = new Map<string, number[]>();
  const waiting: (() => void)[] = [];
  let inFlight = 0;
  let most = 0;
  const server = http.createServer((req, res) => {
    const method = req.method ?? 'GET';
    const key = req.headers['idempotency-key'];
    seen.push({ method, idempotencyKey: typeof key === 'string' ? key : undefined });
    inFlight++;
    most = Math.max(most, inFlight);
    res.on('close', () => inFlight--);
    req.resume();
    req.on('end', () => {
      const answer = (): void => {
        const status = queued.get(method)?.shift() ?? 200;
        res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(status === 200 ? { ok: method } : { error: 'busy' }));
      };
      if (api.holding) waiting.push(answer);
      else answer();
    });
  });
  const api: CountingApi = {
    ...(await listenOnLoopback(server)), seen, fail: (method, statuses) => void queued.set(method, [...statuses]), holding: false,
    held: () => waiting.length, mostAtOnce: () => most,
    release() {
      api.holding = false;
      for (const answer of waiting.splice(0)) answer();
    },
  };
  return api;
}

type Listed = { name: string; execution?: { taskSupport?: string } }[];

describe('durable tool calls per tool (durableTools)', () => {
  let fg: TestFlowgate;
  let api: CountingApi;
  let token: string;
  let pcid: string;

  before(async () => {
    api = await startCountingApi();
    // the organization's limit: durable calls through the gateway take slots of it (the last test)
    fg = await startToolFlowgate({ FLOWGATE_ORG_MAX_RUNNING: '2', FLOWGATE_SLOT_CHECK_SECONDS: '1' });
    ({ token } = await runtimeToken(fg));
    pcid = await createCustomConnection(fg, fg.adminToken, { baseUrl: api.url, auth: { kind: 'api_key', name: 'X-Api-Key', value: 'k' } });
  });

  after(async () => {
    await fg?.stop();
    await api?.close();
  });

  const listed = async (server: string): Promise<[string, string | null][]> => {
    const answer = await rpc(fg, server, token, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const tools = (answer.body?.result?.tools ?? []) as Listed;
    return tools.map((t) => [t.name, t.execution?.taskSupport ?? null]);
  };

  it('refuses an override of a tool the server lacks, false on a plain server and a bad policy, each with a 400 that says why', async () => {
    const post = (body: Record<string, unknown>) => asAdmin<{ error: string; message: string }>(fg, fg.adminToken, 'POST', '/api/v1/servers', { connection: pcid, document: DOCUMENT, ...body });
    const unknown = await post({ durableTools: { cancelOrder: { maxAttempts: 2 } } });
    assert.equal(unknown.status, 400, JSON.stringify(unknown.body));
    assert.equal(unknown.body.error, 'invalid_server');
    assert.match(unknown.body.message, /no tool cancelOrder \(its tools: listOrders, placeOrder\)/);
    const off = await post({ durableTools: { listOrders: false } });
    assert.equal(off.status, 400, JSON.stringify(off.body));
    assert.match(off.body.message, /not durable/);
    const bad = await post({ durable: { maxAttempts: 2 }, durableTools: { placeOrder: { maxAttempts: 0 } } });
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.equal(bad.body.error, 'invalid_body');
    const wrongType = await post({ durableTools: { placeOrder: true } });
    assert.equal(wrongType.status, 400, JSON.stringify(wrongType.body));
  });

  it('makes one tool of a plain server durable: only it lists task support, runs as a task and is retried', async () => {
    const server = await createServer(fg, fg.adminToken, { connection: pcid, document: DOCUMENT, durableTools: { placeOrder: { maxAttempts: 3, initialIntervalSeconds: 0.2 } } });
    const shown = await asAdmin<{ durable: unknown; durableTools: unknown }>(fg, fg.adminToken, 'GET', `/api/v1/servers/${server.id}`);
    assert.deepEqual([shown.body.durable, shown.body.durableTools], [null, { placeOrder: { maxAttempts: 3, initialIntervalSeconds: 0.2 } }]);
    assert.deepEqual(await listed(server.id), [['listOrders', null], ['placeOrder', 'optional']]);

    // the durable tool: a 503, then an answer, one key on both attempts
    api.fail('POST', [503]);
    let before = api.seen.length;
    const placed = await callTool(fg, server.id, token, 'placeOrder', { PCID: pcid });
    assert.deepEqual(placed.body?.result?.structuredContent, { ok: 'POST' }, placed.text);
    const attempts = api.seen.slice(before);
    assert.equal(attempts.length, 2, JSON.stringify(attempts));
    assert.equal(new Set(attempts.map((a) => a.idempotencyKey)).size, 1);
    assert.match(attempts[0]?.idempotencyKey ?? '', /^flowgate-dtask_/);

    // the plain tool: a 503 is the caller's, once
    api.fail('GET', [503]);
    before = api.seen.length;
    const orders = await callTool(fg, server.id, token, 'listOrders', { PCID: pcid });
    assert.equal(orders.body?.result?.isError, true, orders.text);
    assert.equal(api.seen.length - before, 1);

    // a 2025 client with tasks: the durable tool gives a task that completes
    const client = await connectMcp(fg.url, server.id, token);
    try {
      const task = await startTask(client, 'placeOrder', { PCID: pcid });
      assert.match(task.taskId, /^dtask_/);
      const done = await pollTask(client, task.taskId, (t) => t.status !== 'working', 60_000);
      assert.equal(done.status, 'completed', JSON.stringify(done));
    } finally {
      await client.close();
    }
  });

  it('makes one tool of a durable server a plain proxied call with false; PUT without durableTools drops it', async () => {
    const body = { connection: pcid, document: DOCUMENT, durable: { maxAttempts: 3, initialIntervalSeconds: 0.2 }, durableTools: { listOrders: false } };
    const server = await createServer(fg, fg.adminToken, body);
    assert.deepEqual(await listed(server.id), [['listOrders', null], ['placeOrder', 'optional']]);
    api.fail('GET', [503]);
    const before = api.seen.length;
    const orders = await callTool(fg, server.id, token, 'listOrders', { PCID: pcid });
    assert.equal(orders.body?.result?.isError, true, orders.text);
    assert.equal(api.seen.length - before, 1, 'a plain proxied call is not retried');
    assert.equal(api.seen.at(-1)?.idempotencyKey, undefined);

    const replaced = await asAdmin<{ durableTools: unknown }>(fg, fg.adminToken, 'PUT', `/api/v1/servers/${server.id}`, { ...body, durableTools: undefined });
    assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
    assert.equal(replaced.body.durableTools, null);
    assert.deepEqual(await listed(server.id), [['listOrders', 'optional'], ['placeOrder', 'optional']]);
  });

  it('holds durable calls to the organization\'s concurrency limit, shared with its runs: never more than 2 upstream at once, the rest wait their turn', async () => {
    const server = await createServer(fg, fg.adminToken, { connection: pcid, document: DOCUMENT, durable: { maxAttempts: 2 } });
    api.holding = true;
    const before = api.seen.length;
    const calls = Array.from({ length: 4 }, () => callTool(fg, server.id, token, 'placeOrder', { PCID: pcid }));
    const semaphore = fg.client.workflow.getHandle<RunSlotsWorkflow>(`slots:org:org_default@${fg.taskQueue}`);
    const slots = async () => semaphore.query(slotsQuery);
    await eventually(async () => ((await slots()).queue.length === 2 && api.held() === 2 ? true : undefined), 'two calls upstream, two waiting for a slot');
    // a run of the organization queues behind them: one semaphore for runs and durable calls
    const published = await publishWorkflow(fg, { name: 'behind-durable-calls', steps: [{ name: 'Done', type: 'template', format: 'plaintext', template: 'done' }] });
    const run = trigger(fg, published, {});
    await eventually(async () => ((await slots()).queue.length === 3 ? true : undefined), 'the run waits for a slot too');
    const state = await slots();
    assert.deepEqual([state.limit, state.holders.length, state.holders.every((id) => id.startsWith('dtask_'))], [2, 2, true], JSON.stringify(state));
    assert.equal(api.seen.length - before, 2, 'the waiting calls have not reached the upstream');
    // a task-augmented call behind them says in tasks/get that it waits for a slot, not that it calls
    const client = await connectMcp(fg.url, server.id, token);
    try {
      const task = await startTask(client, 'placeOrder', { PCID: pcid });
      const waiting = await pollTask(client, task.taskId, (t) => t.statusMessage?.startsWith('waiting') === true);
      assert.equal(waiting.status, 'working');
      assert.equal(waiting.statusMessage, `waiting for a slot of the organization's concurrency limit (2) before calling placeOrder on /${server.id}`);

      api.release();
      const answers = await Promise.all(calls);
      for (const answer of answers) assert.deepEqual(answer.body?.result?.structuredContent, { ok: 'POST' }, answer.text);
      assert.equal((await run).status, 200);
      const done = await pollTask(client, task.taskId, (t) => t.status !== 'working', 60_000);
      assert.equal(done.status, 'completed', JSON.stringify(done));
    } finally {
      await client.close();
    }
    assert.equal(api.seen.length - before, 5);
    assert.equal(api.mostAtOnce(), 2, 'at most two calls reached the upstream at once');
    await eventually(async () => ((await slots()).holders.length === 0 ? true : undefined), 'every slot given back');
  });

  it('shows a durable server\'s recent calls on its console page (started, attempts, outcome, duration) to a role that reads the audit trail, and says who may to a viewer', async () => {
    const server = await createServer(fg, fg.adminToken, { connection: pcid, document: DOCUMENT, durableTools: { placeOrder: { maxAttempts: 3, initialIntervalSeconds: 0.2 } } });
    api.fail('POST', [503]);
    const placed = await callTool(fg, server.id, token, 'placeOrder', { PCID: pcid });
    assert.equal(placed.body?.result?.isError, false, placed.text);
    const web = consoleHttp(() => fg);
    const admin = await web.signIn(fg.adminToken);
    const row = await eventually(async () => {
      const text = await (await web.get(admin, `/console/servers/${server.id}`)).text();
      return /<tr data-task="dtask_[^"]+">[\s\S]*?<\/tr>/.exec(text)?.[0].includes('completed') ? text : undefined;
    }, 'the call on the server page');
    const cells = [.../<tr data-task="(dtask_[^"]+)">(.*?)<\/tr>/.exec(row)![2]!.matchAll(/<td>(.*?)<\/td>/g)].map((m) => m[1]);
    assert.equal(cells[1], 'placeOrder');
    assert.match(cells[2] ?? '', /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual([cells[3], cells[4]], ['2', 'completed'], row);
    assert.match(cells[5] ?? '', /^\d+(\.\d)? (ms|s)$/);

    const member = await fg.admin<{ id: string }>('POST', '/api/v1/members', { email: 'durable-viewer@example.com', role: 'viewer' });
    const grant = await fg.registry.orgs.findAdminToken(hashSecret(fg.adminToken));
    const record = grant && await fg.registry.members.get(grant.orgId, member.body.id);
    assert.ok(record);
    const opened = await new ConsoleSessions({ registry: fg.registry, lifetimeMinutes: 10 }).signInMember(record);
    const seen = await (await web.get({ cookie: `fg_console=${opened.id}`, csrf: opened.session.csrfToken }, `/console/servers/${server.id}`)).text();
    assert.match(seen, /Recent durable calls/);
    assert.match(seen, /audit\.read/);
    assert.doesNotMatch(seen, /data-task="dtask_/);
  });
});
