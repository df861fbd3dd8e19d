/**
 * Both MCP protocol eras on the tool gateway, with the official TypeScript SDK v2 client
 * (@modelcontextprotocol/client 2.4.0) pinned to 2026-07-28 and in its default 2025 mode: list and
 * call on /tools/mcp, a built-in server and a remote server registered in flowgate; the Tasks
 * extension on a workflow tool (a task to completion, an approval answered through tasks/update,
 * the task read through a second gateway process); and the 2026 era's refusals (version
 * negotiation, the standard headers, the envelope, capabilities), on the wire; and an approval
 * asked of a plain 2026 call as `input_required` (Multi Round-Trip Requests).
 * SDK 2.4.0 does not decode `resultType: "task"` (no TypeScript SDK has the Tasks extension yet):
 * the call that creates a task is sent as the SDK's transport would send it (modernRequest), and
 * the task methods go through the SDK client's own `request`. It has no runtime for the 2025-11-25
 * task methods either: in 2025 mode its `request` creates the task (`tools/call` with `task`) and
 * follows it through tasks/get and tasks/result, on this gateway and another.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { startFakeRemoteMcp, type FakeRemoteMcp } from '../support/fake-remote-mcp';
import { publishWorkflow, type TestFlowgate } from '../support/flowgate';
import { createServer } from './custom-support';
import { withKilledReplica } from './mcp-tasks-support';
import { rpc, runtimeToken, startToolFlowgate } from './support';

const V2026 = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const LooseResult = z.looseObject({});

/** The SDK v2 client on `<url>/tools/<server>`: pinned to 2026-07-28, or its default (2025, `initialize`). */
async function connect(url: string, server: string, token: string, era: '2026' | '2025', capabilities: Record<string, unknown> = {}): Promise<Client> {
  const client = new Client({ name: 'flowgate-era-test', version: '1.0.0' }, {
    capabilities, ...(era === '2026' ? { versionNegotiation: { mode: { pin: V2026 } } } : {}),
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/tools/${server}`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

/** A 2026-era request as the SDK's transport sends it: the envelope in `_meta` and the standard headers. */
function modernRequest(method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = { extensions: { [TASKS]: {} } }, name?: string): {
  body: Record<string, unknown>; headers: Record<string, string>;
} {
  return {
    body: {
      jsonrpc: '2.0', id: randomUUID(), method,
      params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': V2026, 'io.modelcontextprotocol/clientCapabilities': capabilities, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } } },
    },
    headers: {
      'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': V2026, 'Mcp-Method': method,
      ...(name === undefined ? {} : { 'Mcp-Name': name }),
    },
  };
}

interface Task {
  taskId: string;
  status: string;
  ttlMs: number | null;
  pollIntervalMs: number;
  result?: { resultType: string; isError: boolean; structuredContent: Record<string, unknown> };
  inputRequests?: Record<string, { method: string; params: { message: string; requestedSchema: unknown } }>;
}

describe('MCP protocol eras: 2026-07-28 and 2025-11-25 side by side, the Tasks extension', function () {
  this.timeout(120_000);
  let fg: TestFlowgate;
  let token: string;
  let apiKeyId: string;
  let remote: FakeRemoteMcp;

  before(async () => {
    remote = await startFakeRemoteMcp({ sessions: false });
    fg = await startToolFlowgate();
    ({ token, apiKeyId } = await runtimeToken(fg));
  });
  after(async () => {
    await fg?.stop();
    await remote?.close();
  });

  async function publishTool(definition: Record<string, unknown>): Promise<string> {
    const name = `${String(definition.name)}_${randomUUID().slice(0, 8)}`;
    await publishWorkflow(fg, { ...definition, name: `${String(definition.name)}-${randomUUID()}` }, { tool: { name, description: `tool ${name}` } });
    return name;
  }

  async function send(server: string, request: ReturnType<typeof modernRequest>, url = fg.url): Promise<{ status: number; body: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } } }> {
    const response = await fetch(`${url}/tools/${server}`, { method: 'POST', headers: { ...request.headers, Authorization: `Bearer ${token}` }, body: JSON.stringify(request.body) });
    return { status: response.status, body: await response.json() as never };
  }

  it('serves the SDK v2 client pinned to 2026-07-28 on /tools/mcp with no initialize: discover, list with cache hints, call', async () => {
    const client = await connect(fg.url, 'mcp', token, '2026');
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), V2026);
      assert.equal(client.getProtocolEra(), 'modern');
      const discovered = await client.discover();
      assert.deepEqual(discovered.supportedVersions, [V2026]);
      assert.ok(discovered.capabilities.tools);
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['capabilities_discover', 'capability_details', 'listServers']);
      const servers = await client.callTool({ name: 'listServers', arguments: {} });
      assert.ok((servers.structuredContent as { servers: { name: string }[] }).servers.some((s) => s.name === 'workflows' || s.name === 'mcp'));
    } finally {
      await client.close();
    }
    // on the wire: resultType, the cache hints of a built-in list, the server in _meta, no initialize needed
    const listed = await send('mcp', modernRequest('tools/list', {}));
    assert.equal(listed.status, 200);
    assert.equal(listed.body.result?.resultType, 'complete');
    assert.equal(listed.body.result?.ttlMs, 3_600_000);
    assert.equal(listed.body.result?.cacheScope, 'public');
    assert.deepEqual((listed.body.result?._meta as Record<string, unknown>)['io.modelcontextprotocol/serverInfo'], { name: 'flowgate/mcp', version: '0.1.0' });
  });

  it('serves the SDK v2 client in its default 2025 mode exactly as before (initialize, ping, list, call)', async () => {
    const client = await connect(fg.url, 'mcp', token, '2025');
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), '2025-11-25');
      assert.equal(client.getServerVersion()?.name, 'flowgate/mcp');
      await client.ping();
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'listServers'));
      const result = await client.callTool({ name: 'capabilities_discover', arguments: { task: 'manage agents' } });
      assert.equal(result.isError, false);
    } finally {
      await client.close();
    }
    const plain = await rpc(fg, 'mcp', token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(plain.body?.result?.resultType, undefined, 'a 2025 answer has no resultType');
    assert.equal(plain.body?.result?.ttlMs, undefined);
  });

  it('lists and calls a built-in server and a remote registered in flowgate in both eras; an organization\'s list is private and short-lived', async () => {
    const server = await createServer(fg, fg.adminToken, { url: remote.url, name: `calc-${randomUUID().slice(0, 6)}` });
    for (const era of ['2026', '2025'] as const) {
      const builtIn = await connect(fg.url, 'agent-management', token, era);
      try {
        const { tools } = await builtIn.listTools();
        const invoke = tools.find((t) => t.name === 'agent_invoke');
        assert.ok(invoke);
        assert.equal(invoke.execution?.taskSupport, era === '2026' ? undefined : 'optional', 'execution is 2025 vocabulary');
        const agents = await builtIn.callTool({ name: 'agent_list', arguments: {} });
        assert.equal(agents.isError, false, JSON.stringify(agents));
      } finally {
        await builtIn.close();
      }
      const custom = await connect(fg.url, server.id, token, era);
      try {
        assert.deepEqual((await custom.listTools()).tools.map((t) => t.name), ['add', 'shout', 'count_slowly']);
        assert.deepEqual((await custom.callTool({ name: 'add', arguments: { a: 2, b: 40 } })).structuredContent, { sum: 42 });
      } finally {
        await custom.close();
      }
    }
    const listed = await send(server.id, modernRequest('tools/list', {}));
    assert.deepEqual([listed.body.result?.ttlMs, listed.body.result?.cacheScope], [5000, 'private']);
  });

  it('runs a workflow tool as a task of the extension: approval through tasks/update (the API key\'s decision), result in tasks/get, read through another gateway process', async () => {
    const name = await publishTool({
      name: 'pay',
      steps: [
        { name: 'Ask', type: 'approval', approvers: ['ann@example.com', 'bob@example.com'], message: 'Pay invoice {{inputs.invoice}}?' },
        { name: 'Paid', type: 'template', template: 'paid {{inputs.invoice}}' },
      ],
    });
    const discovered = await send('workflows', modernRequest('server/discover', {}));
    assert.deepEqual((discovered.body.result?.capabilities as { extensions: unknown }).extensions, { [TASKS]: {} });
    assert.equal((discovered.body.result?.capabilities as { tasks?: unknown }).tasks, undefined, 'no 2025 tasks capability');

    const created = await send('workflows', modernRequest('tools/call', { name, arguments: { invoice: 'INV-9' } }, undefined, name));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const task = created.body.result as unknown as Task & { resultType: string };
    assert.equal(task.resultType, 'task');
    assert.ok(Number.isInteger(task.ttlMs) && Number.isInteger(task.pollIntervalMs));
    assert.equal('ttl' in task || 'pollInterval' in task, false);
    const description = await fg.client.workflow.getHandle(task.taskId).describe();
    assert.equal(description.status.name, 'RUNNING', 'the task id is the run id');

    const client = await connect(fg.url, 'workflows', token, '2026', { extensions: { [TASKS]: {} } });
    try {
      const get = async (): Promise<Task> => await client.request({ method: 'tasks/get', params: { taskId: task.taskId } } as never, LooseResult) as unknown as Task;
      let seen = await get();
      for (let i = 0; i < 80 && seen.status !== 'input_required'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        seen = await get();
      }
      assert.equal(seen.status, 'input_required', JSON.stringify(seen));
      const [key, ask] = Object.entries(seen.inputRequests ?? {})[0]!;
      assert.equal(ask.method, 'elicitation/create');
      assert.equal(ask.params.message, 'Pay invoice INV-9?');
      // answers to keys that are not outstanding are ignored (the Tasks extension: a server SHOULD): acknowledged, nothing decided
      const unknown = await send('workflows', modernRequest('tasks/update', {
        taskId: task.taskId, inputResponses: { 'approval-99': { action: 'accept', content: { decision: 'approve' } }, 'not-a-request': { anything: true } },
      }, undefined, task.taskId));
      assert.deepEqual([unknown.status, unknown.body.result?.resultType], [200, 'complete'], JSON.stringify(unknown.body));
      assert.equal((await get()).status, 'input_required', 'an ignored answer decides nothing');
      const ack = await client.request({
        method: 'tasks/update', params: { taskId: task.taskId, inputResponses: { [key]: { action: 'accept', content: { decision: 'approve', approver: 'bob@example.com', comment: 'fine' } }, extra: { action: 'accept' } } },
      } as never, LooseResult);
      assert.deepEqual(Object.keys(ack).filter((k) => k !== '_meta'), []);
      // the same key answered again (already answered, by the same API key): ignored, not a second decision
      const again = await send('workflows', modernRequest('tasks/update', {
        taskId: task.taskId, inputResponses: { [key]: { action: 'accept', content: { decision: 'approve', approver: 'ann@example.com' } } },
      }, undefined, task.taskId));
      assert.deepEqual([again.status, again.body.result?.resultType], [200, 'complete'], JSON.stringify(again.body));
      for (let i = 0; i < 80 && seen.status !== 'completed'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        seen = await get();
      }
      assert.equal(seen.status, 'completed', JSON.stringify(seen));
      assert.equal(seen.result?.isError, false);
      const value = seen.result!.structuredContent as { output: string; results: { stepIndex: number; result: string }[] };
      assert.equal(value.output, 'paid INV-9');
      const approval = JSON.parse(value.results.find((r) => r.stepIndex === 1)!.result) as { outcome: string; decisions: { approver: string; actor: string; via: string; comment?: string }[] };
      assert.equal(approval.outcome, 'approved');
      assert.deepEqual(approval.decisions.map((d) => [d.approver, d.actor, d.via, d.comment]), [['bob@example.com', `api-key:${apiKeyId}`, 'api', 'fine']]);
      // cancelling a finished task is an empty acknowledgement
      const cancelled = await client.request({ method: 'tasks/cancel', params: { taskId: task.taskId } } as never, LooseResult);
      assert.deepEqual(Object.keys(cancelled).filter((k) => k !== '_meta'), []);
    } finally {
      await client.close();
    }

    // another gateway process on the same Temporal and registry reads the same task
    await withKilledReplica(fg, {}, async (url) => {
      const replica = await connect(url, 'workflows', token, '2026', { extensions: { [TASKS]: {} } });
      try {
        const there = await replica.request({ method: 'tasks/get', params: { taskId: task.taskId } } as never, LooseResult) as unknown as Task;
        assert.equal(there.status, 'completed');
        assert.equal((there.result?.structuredContent as { output: string }).output, 'paid INV-9');
      } finally {
        await replica.close();
      }
    });
  });

  it('asks a plain 2026 call for an approval as input_required (Multi Round-Trip); the SDK answers it through its elicitation handler and gets the result', async () => {
    const name = await publishTool({
      name: 'ship',
      steps: [
        { name: 'Ask', type: 'approval', approvers: ['ann@example.com'], message: 'Ship order {{inputs.order}}?' },
        { name: 'Shipped', type: 'template', template: 'shipped {{inputs.order}}' },
      ],
    });
    const asked: string[] = [];
    const client = await connect(fg.url, 'workflows', token, '2026', { elicitation: { form: {} } });
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(String((request.params as { message: string }).message));
      return { action: 'accept', content: { decision: 'approve', comment: 'go' } };
    });
    try {
      const result = await client.callTool({ name, arguments: { order: 'O-1' } });
      assert.equal(result.isError, false, JSON.stringify(result));
      const value = result.structuredContent as { output: string; runId: string; results: { stepIndex: number; result: string }[] };
      assert.equal(value.output, 'shipped O-1');
      assert.deepEqual(asked, ['Ship order O-1?']);
      const approval = JSON.parse(value.results.find((r) => r.stepIndex === 1)!.result) as { decisions: { actor: string; via: string; comment?: string }[] };
      assert.deepEqual(approval.decisions.map((d) => [d.actor, d.via, d.comment]), [[`api-key:${apiKeyId}`, 'api', 'go']]);
    } finally {
      await client.close();
    }
    // on the wire: the input_required result, a tampered requestState, and a client that cannot answer
    const first = await send('workflows', modernRequest('tools/call', { name, arguments: { order: 'O-2' } }, { elicitation: {} }, name));
    assert.equal(first.body.result?.resultType, 'input_required', JSON.stringify(first.body));
    assert.deepEqual(Object.keys(first.body.result?.inputRequests as object), ['approval-1']);
    const tampered = await send('workflows', modernRequest('tools/call', { name, arguments: {}, requestState: 'not-mine', inputResponses: {} }, { elicitation: {} }, name));
    assert.equal(tampered.body.error?.code, -32602);
    const mute = await send('workflows', modernRequest('tools/call', { name, arguments: { order: 'O-3' } }, {}, name));
    assert.deepEqual([mute.status, mute.body.error?.code], [400, -32021]);
    const retry = await send('workflows', modernRequest('tools/call', {
      name, arguments: { order: 'O-2' }, requestState: first.body.result?.requestState,
      // a key the server did not ask is ignored beside the one it did
      inputResponses: { 'approval-1': { action: 'accept', content: { decision: 'reject' } }, 'approval-7': { action: 'accept', content: { decision: 'approve' } } },
    }, { elicitation: {} }, name));
    assert.equal(retry.body.result?.resultType, 'complete', JSON.stringify(retry.body));
    assert.equal(retry.body.result?.isError, true, 'a rejected approval fails the run: a tool error');
  });

  it('cancels a task through tasks/cancel (the run is cancelled); without the extension the call runs as before and the task methods are -32021', async () => {
    const name = await publishTool({ name: 'slow', steps: [{ name: 'Wait', type: 'delay', duration: '60s' }, { name: 'Done', type: 'template', template: 'done' }] });
    const created = await send('workflows', modernRequest('tools/call', { name, arguments: {} }, undefined, name));
    const taskId = String(created.body.result?.taskId);
    const ack = await send('workflows', modernRequest('tasks/cancel', { taskId }, undefined, taskId));
    assert.equal(ack.status, 200, JSON.stringify(ack.body));
    assert.deepEqual(Object.keys(ack.body.result ?? {}).sort(), ['_meta', 'resultType']);
    const handle = fg.client.workflow.getHandle(taskId);
    for (let i = 0; i < 40 && (await handle.describe()).status.name === 'RUNNING'; i++) await new Promise((resolve) => setTimeout(resolve, 250));
    assert.equal((await handle.describe()).status.name, 'CANCELLED');
    const after = await send('workflows', modernRequest('tasks/get', { taskId }, undefined, taskId));
    assert.equal((after.body.result as { status: string }).status, 'cancelled');

    const unknown = await send('workflows', modernRequest('tasks/get', { taskId: 'no-such-task' }, undefined, 'no-such-task'));
    assert.equal(unknown.body.error?.code, -32602);
    const withoutExtension = await send('workflows', modernRequest('tasks/get', { taskId }, {}, taskId));
    assert.equal(withoutExtension.status, 400);
    assert.equal(withoutExtension.body.error?.code, -32021);
    assert.deepEqual(withoutExtension.body.error?.data, { requiredCapabilities: { extensions: { [TASKS]: {} } } });
    const quick = await publishTool({ name: 'quick', steps: [{ name: 'Say', type: 'template', template: 'hi' }] });
    const plain = await send('workflows', modernRequest('tools/call', { name: quick, arguments: {} }, {}, quick));
    assert.equal(plain.body.result?.resultType, 'complete', JSON.stringify(plain.body));
    assert.equal((plain.body.result?.structuredContent as { output: string }).output, 'hi');
  });

  it('the SDK v2 client in its 2025 mode creates a task (tools/call with `task`) and follows it through tasks/get and tasks/result, and on another replica', async () => {
    const name = await publishTool({ name: 'greet', steps: [{ name: 'Say', type: 'template', template: 'hello {{inputs.who}}' }] });
    // SDK 2.4.0 has no task runtime: its generic request() sends the 2025-11-25 task vocabulary as any client would
    const client = await connect(fg.url, 'workflows', token, '2025', { tasks: { requests: { tools: { call: {} } } } });
    let taskId = '';
    try {
      const tools = (await client.listTools()).tools;
      assert.equal(tools.find((t) => t.name === name)?.execution?.taskSupport, 'optional');
      const created = await client.request({ method: 'tools/call', params: { name, arguments: { who: 'Ada' }, task: { ttl: 600_000 } } } as never, LooseResult) as unknown as {
        task: { taskId: string; status: string; ttl: number; pollInterval?: number };
      };
      assert.equal(created.task.status, 'working', JSON.stringify(created));
      taskId = created.task.taskId;
      assert.equal((await fg.client.workflow.getHandle(created.task.taskId).describe()).workflowId, created.task.taskId, 'the task id is the run id');
      let task = created.task;
      for (let i = 0; i < 80 && task.status === 'working'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        task = await client.request({ method: 'tasks/get', params: { taskId: created.task.taskId } } as never, LooseResult) as unknown as typeof task;
      }
      assert.equal(task.status, 'completed', JSON.stringify(task));
      const result = await client.request({ method: 'tasks/result', params: { taskId: created.task.taskId } } as never, LooseResult) as unknown as {
        isError: boolean; structuredContent: { output: string }; _meta: Record<string, unknown>;
      };
      assert.equal(result.isError, false);
      assert.equal(result.structuredContent.output, 'hello Ada');
      assert.deepEqual(result._meta['io.modelcontextprotocol/related-task'], { taskId: created.task.taskId });
    } finally {
      await client.close();
    }
    // another gateway process reads the same task
    await withKilledReplica(fg, {}, async (url) => {
      const replica = await connect(url, 'workflows', token, '2025', { tasks: { requests: { tools: { call: {} } } } });
      try {
        const there = await replica.request({ method: 'tasks/get', params: { taskId } } as never, LooseResult) as unknown as { status: string };
        assert.equal(there.status, 'completed');
        const result = await replica.request({ method: 'tasks/result', params: { taskId } } as never, LooseResult) as unknown as { structuredContent: { output: string } };
        assert.equal(result.structuredContent.output, 'hello Ada');
      } finally {
        await replica.close();
      }
    });
  });

  it('refuses on the wire as the 2026 specification says: versions, standard headers, envelope, removed methods, batches', async () => {
    const unsupported = modernRequest('tools/list', {});
    (unsupported.body.params as { _meta: Record<string, unknown> })._meta['io.modelcontextprotocol/protocolVersion'] = '2099-01-01';
    unsupported.headers['MCP-Protocol-Version'] = '2099-01-01';
    const refused = await send('mcp', unsupported);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error?.code, -32022);
    assert.deepEqual(refused.body.error?.data, { supported: [V2026], requested: '2099-01-01' });

    const wrongMethod = modernRequest('tools/list', {});
    wrongMethod.headers['Mcp-Method'] = 'prompts/list';
    assert.deepEqual([(await send('mcp', wrongMethod)).status, (await send('mcp', wrongMethod)).body.error?.code], [400, -32020]);
    const noMethod = modernRequest('tools/list', {});
    delete noMethod.headers['Mcp-Method'];
    assert.equal((await send('mcp', noMethod)).body.error?.code, -32020);
    const noName = modernRequest('tools/call', { name: 'listServers', arguments: {} });
    assert.equal((await send('mcp', noName)).body.error?.code, -32020);
    const wrongName = modernRequest('tools/call', { name: 'listServers', arguments: {} }, {}, 'capability_details');
    assert.equal((await send('mcp', wrongName)).body.error?.code, -32020);
    const spaced = modernRequest('tools/call', { name: 'listServers', arguments: {} }, {}, '  listServers ');
    assert.equal((await send('mcp', spaced)).body.result?.resultType, 'complete', 'spaces around a header value are not part of it');
    const headerVersion = modernRequest('tools/list', {});
    headerVersion.headers['MCP-Protocol-Version'] = '2025-11-25';
    assert.equal((await send('mcp', headerVersion)).body.error?.code, -32020);

    const noCapabilities = modernRequest('tools/list', {});
    delete (noCapabilities.body.params as { _meta: Record<string, unknown> })._meta['io.modelcontextprotocol/clientCapabilities'];
    const badEnvelope = await send('mcp', noCapabilities);
    assert.deepEqual([badEnvelope.status, badEnvelope.body.error?.code], [400, -32602]);
    const noEnvelope = modernRequest('tools/list', {});
    delete (noEnvelope.body.params as Record<string, unknown>)._meta;
    assert.deepEqual([(await send('mcp', noEnvelope)).status, (await send('mcp', noEnvelope)).body.error?.code], [400, -32602]);

    for (const method of ['initialize', 'ping', 'tasks/list', 'tasks/result', 'resources/list']) {
      const removed = await send('mcp', modernRequest(method, {}));
      assert.deepEqual([removed.status, removed.body.error?.code], [404, -32601], method);
    }
    const batch = await rpc(fg, 'mcp', token, [modernRequest('tools/list', {}).body], { 'Content-Type': 'application/json', Accept: 'application/json' });
    assert.deepEqual([batch.status, batch.body?.error?.code], [400, -32600]);
    // a 2025 initialize still negotiates as before, and an envelope naming a 2025 version is that era
    const init = await rpc(fg, 'mcp', token, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
    assert.equal(init.body?.result?.protocolVersion, '2025-06-18');
  });
});
