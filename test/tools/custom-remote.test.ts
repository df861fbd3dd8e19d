import assert from 'node:assert/strict';
import { DEFAULT_ORG_ID } from '../../src/registry';
import { ToolCallError } from '../../src/tools';
import { CUSTOM_SERVER_RECHECK_MS } from '../../src/tools/custom';
import { API_KEY, startFakeCustomerApi, type FakeCustomerApi } from '../support/fake-customer-api';
import { startFakeRemoteMcp, type FakeRemoteMcp } from '../support/fake-remote-mcp';
import { eventually } from '../support/eventually';
import { publishWorkflow, trigger, type TestFlowgate } from '../support/flowgate';
import { asAdmin, createCustomConnection, createServer, PETSTORE, type ServerBody } from './custom-support';
import { callTool, createOrg, rpc, RPC_HEADERS, runtimeToken, startToolFlowgate } from './support';

/** What the remote may see besides the forwarded headers and the stored credential: transport and MCP protocol headers. */
const PROTOCOL_HEADERS = new Set(['host', 'connection', 'content-type', 'content-length', 'transfer-encoding', 'accept', 'mcp-protocol-version', 'mcp-session-id', 'mcp-method', 'mcp-name']);

describe('remote tool servers', () => {
  let fg: TestFlowgate;
  let stateless: FakeRemoteMcp;
  let sessions: FakeRemoteMcp;
  let token: string;
  let credential: string;
  let plain: ServerBody;
  let sessionful: ServerBody;

  before(async () => {
    stateless = await startFakeRemoteMcp({ sessions: false });
    sessions = await startFakeRemoteMcp({ sessions: true });
    fg = await startToolFlowgate();
    token = (await runtimeToken(fg)).token;
    credential = await createCustomConnection(fg, fg.adminToken, { baseUrl: stateless.url, auth: { kind: 'api_key', name: 'Authorization', value: 'Bearer remote-secret-1' } });
    plain = await createServer(fg, fg.adminToken, { url: stateless.url, connection: credential, name: 'Calculator' });
    sessionful = await createServer(fg, fg.adminToken, { url: sessions.url, description: 'calculator with sessions' });
  });
  after(async () => {
    await fg?.stop();
    await stateless?.close();
    await sessions?.close();
  });

  it('registers a remote under a short opaque id and proxies tools/list and tools/call (stateless, JSON answers)', async () => {
    assert.match(plain.id, /^[0-9a-v]{20}$/);
    assert.notEqual(plain.id, 'Calculator');
    assert.deepEqual(plain.tools?.map((t) => t.name), ['add', 'shout', 'count_slowly']);
    const listed = await rpc(fg, plain.id, token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.deepEqual((listed.body?.result?.tools as { name: string }[]).map((t) => t.name), ['add', 'shout', 'count_slowly']);
    const added = await callTool(fg, plain.id, token, 'add', { a: 2, b: 40 });
    assert.deepEqual(added.body?.result?.structuredContent, { sum: 42 });
    const failed = await callTool(fg, plain.id, token, 'shout', { text: '' });
    assert.equal(failed.body?.result?.isError, true, 'a remote tool that failed is a tool error');
  });

  it('works with a remote that hands out an Mcp-Session-Id and answers with SSE streams', async () => {
    const shouted = await callTool(fg, sessionful.id, token, 'shout', { text: 'hello' });
    assert.equal(shouted.body?.result?.isError, false, JSON.stringify(shouted.body));
    assert.deepEqual(shouted.body?.result?.content, [{ type: 'text', text: 'HELLO' }]);
    const call = sessions.lastCallHeaders();
    assert.ok(typeof call?.['mcp-session-id'] === 'string' && sessions.sessions.has(call['mcp-session-id']), 'the call went in the session');
    const handshakes = sessions.count('initialize');
    await callTool(fg, sessionful.id, token, 'shout', { text: 'again' });
    assert.equal(sessions.count('initialize'), handshakes, 'the next call goes in the same session: no handshake');
    assert.equal(sessions.lastCallHeaders()?.['mcp-session-id'], call['mcp-session-id']);
    assert.ok(!sessions.requests.some((r) => r.method === 'DELETE'), 'a shared session is not ended after a call');
  });

  it('a proxied call to a 2026-07-28 remote costs exactly one request there', async () => {
    const modern = await startFakeRemoteMcp({ sessions: false, modern: true });
    try {
      const server = await createServer(fg, fg.adminToken, { url: modern.url, connection: credential });
      assert.deepEqual(server.tools?.map((t) => t.name), ['add', 'shout']);
      await callTool(fg, server.id, token, 'add', { a: 0, b: 0 });
      modern.requests.length = 0;
      const added = await rpc(fg, server.id, token, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: { a: 20, b: 22 } } },
        { ...RPC_HEADERS, 'X-Pf-Forward-X-Tenant': 'acme' });
      assert.deepEqual(added.body?.result?.structuredContent, { sum: 42 });
      assert.equal(modern.requests.length, 1, `one request: ${modern.requests.map((r) => r.rpcMethod).join(', ')}`);
      const seen = modern.requests[0]?.headers ?? {};
      assert.deepEqual([seen['mcp-protocol-version'], seen['mcp-method'], seen['mcp-name'], seen['x-tenant'], seen.authorization, seen['mcp-session-id']],
        ['2026-07-28', 'tools/call', 'add', 'acme', 'Bearer remote-secret-1', undefined]);
      const names = Object.keys(seen).filter((n) => !PROTOCOL_HEADERS.has(n));
      assert.deepEqual(names.sort(), ['authorization', 'x-tenant']);
    } finally {
      await modern.close();
    }
  });

  it('100 proxied calls to a 2025 remote with sessions (50 at once) cost one initialize, and one more after the remote ends the session', async () => {
    const remote = await startFakeRemoteMcp({ sessions: true });
    try {
      const server = await createServer(fg, fg.adminToken, { url: remote.url, connection: credential });
      remote.requests.length = 0;
      const sum = async (a: number, tenant: string) => (await rpc(fg, server.id, token, { jsonrpc: '2.0', id: a, method: 'tools/call', params: { name: 'add', arguments: { a, b: 1 } } },
        { ...RPC_HEADERS, 'X-Pf-Forward-X-Tenant': tenant })).body?.result?.structuredContent;
      const first = await Promise.all(Array.from({ length: 50 }, (_, i) => sum(i, `t${i}`)));
      assert.deepEqual(first, Array.from({ length: 50 }, (_, i) => ({ sum: i + 1 })));
      for (let i = 0; i < 50; i++) assert.deepEqual(await sum(i, 'serial'), { sum: i + 1 });
      // registration listed the tools in a session of its own; the calls share one
      assert.ok(remote.count('initialize') <= 1, `${remote.count('initialize')} handshakes for 100 calls`);
      assert.equal(remote.count('tools/call'), 100);
      const calls = remote.requests.filter((r) => r.rpcMethod === 'tools/call');
      assert.equal(new Set(calls.map((r) => r.headers['mcp-session-id'])).size, 1, 'one session for all');
      assert.ok(calls.every((r) => r.headers.authorization === 'Bearer remote-secret-1'));
      assert.deepEqual(calls.slice(0, 50).map((r) => r.headers['x-tenant']).sort(), first.map((_, i) => `t${i}`).sort(), 'each call\'s own forwarded header');
      const before = remote.count('initialize');
      await remote.expireSessions();
      const again = await Promise.all(Array.from({ length: 10 }, (_, i) => sum(i, 'after')));
      assert.deepEqual(again, Array.from({ length: 10 }, (_, i) => ({ sum: i + 1 })), 'no caller sees the ended session');
      assert.equal(remote.count('initialize') - before, 1, 'one handshake after the session ended');
    } finally {
      await remote.close();
    }
  });

  it('passes a remote\'s streamed progress to an in-process caller that listens, as it arrives', async () => {
    const reports: number[] = [];
    const result = await fg.tools.call(DEFAULT_ORG_ID, sessionful.id, 'count_slowly', { n: 3 }, { progress: (r) => reports.push(r.progress) });
    assert.deepEqual(result.content, [{ type: 'text', text: '3' }]);
    assert.deepEqual(reports, [1, 2, 3]);
    // over HTTP: a caller that accepts a stream and asked for progress gets the remote's progress as SSE, then the result
    const response = await fetch(`${fg.url}/tools/${sessionful.id}`, {
      method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'count_slowly', arguments: { n: 3 }, _meta: { progressToken: 'mine' } } }),
    });
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    const events = (await response.text()).split('\n\n').filter((e) => e.startsWith('event: message')).map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)) as Record<string, unknown>);
    assert.deepEqual(events.slice(0, 3).map((e) => [e.method, (e.params as Record<string, unknown>).progressToken, (e.params as Record<string, unknown>).progress]),
      [['notifications/progress', 'mine', 1], ['notifications/progress', 'mine', 2], ['notifications/progress', 'mine', 3]], 'the caller\'s own token');
    assert.deepEqual((events[3]?.result as Record<string, unknown>).content, [{ type: 'text', text: '3' }]);
    const plainJson = await rpc(fg, sessionful.id, token, { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'count_slowly', arguments: { n: 2 } } });
    assert.deepEqual(plainJson.body?.result?.content, [{ type: 'text', text: '2' }], 'without a progress token: JSON');
    await fg.tools.call(DEFAULT_ORG_ID, sessionful.id, 'count_slowly', { n: 1 });
    assert.equal((sessions.lastCallParams()?._meta as Record<string, unknown> | undefined)?.progressToken, undefined, 'no progress token when nobody listens');
  });

  it('sends x-tenant from X-Pf-Forward-X-Tenant and the stored credential as Authorization, and nothing else of the caller', async () => {
    const answer = await rpc(fg, plain.id, token, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 1 } } }, {
      ...RPC_HEADERS,
      'X-Pf-Forward-X-Tenant': 'acme',
      'X-Pf-Forward-Authorization': 'Bearer forwarded-override',
      'X-Pf-Forward-Cookie': 'session=forwarded',
      'X-Other': 'not-forwarded',
      Cookie: 'session=caller',
      'User-Agent': 'caller-agent/1.0',
    });
    assert.deepEqual(answer.body?.result?.structuredContent, { sum: 2 });
    const seen = stateless.lastCallHeaders() ?? {};
    assert.equal(seen['x-tenant'], 'acme');
    assert.equal(seen.authorization, 'Bearer remote-secret-1', 'the stored credential, not the runtime token nor a forwarded one');
    const everything = JSON.stringify(seen);
    assert.doesNotMatch(everything, new RegExp(`${token}|forwarded-override|not-forwarded|session=|caller-agent`));
    const names = Object.keys(seen).filter((n) => !PROTOCOL_HEADERS.has(n));
    assert.deepEqual(names.sort(), ['authorization', 'x-tenant']);
  });

  it('forwards the headers of in-process calls (the dispatcher\'s forwardHeaders) the same way', async () => {
    const result = await fg.tools.call(DEFAULT_ORG_ID, plain.id, 'add', { a: 3, b: 4 }, { forwardHeaders: { 'x-tenant': 'inner', 'x-request-id': 'r-1' } });
    assert.deepEqual(result.value, { sum: 7 });
    const seen = stateless.lastCallHeaders() ?? {};
    assert.deepEqual([seen['x-tenant'], seen['x-request-id'], seen.authorization], ['inner', 'r-1', 'Bearer remote-secret-1']);
    const none = await fg.tools.call(DEFAULT_ORG_ID, sessionful.id, 'add', { a: 1, b: 2 }, { forwardHeaders: { 'x-tenant': 'inner' } });
    assert.deepEqual(none.value, { sum: 3 });
    assert.equal(sessions.lastCallHeaders()?.authorization, undefined, 'a remote without a connection gets no Authorization');

    const tenantKey = await createCustomConnection(fg, fg.adminToken, { baseUrl: stateless.url, auth: { kind: 'api_key', name: 'X-Tenant', value: 'stored-tenant' } });
    const keyed = await createServer(fg, fg.adminToken, { url: stateless.url, connection: tenantKey });
    await fg.tools.call(DEFAULT_ORG_ID, keyed.id, 'add', { a: 1, b: 1 }, { forwardHeaders: { 'x-tenant': 'forwarded-tenant' } });
    assert.equal(stateless.lastCallHeaders()?.['x-tenant'], 'stored-tenant', 'a forwarded header cannot replace the stored credential of the same name');
  });

  it('passes the call\'s idempotency key in the tools/call _meta as io.flowgate/idempotencyKey, and none without one', async () => {
    const keyed = await rpc(fg, plain.id, token, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } },
      { ...RPC_HEADERS, 'Idempotency-Key': 'caller-key-9' });
    assert.deepEqual(keyed.body?.result?.structuredContent, { sum: 3 });
    assert.deepEqual(stateless.lastCallParams()?._meta, { 'io.flowgate/idempotencyKey': 'caller-key-9' });
    assert.equal(stateless.lastCallHeaders()?.['idempotency-key'], undefined, 'in _meta, not as a header');

    await fg.tools.call(DEFAULT_ORG_ID, sessionful.id, 'add', { a: 2, b: 2 }, { idempotencyKey: 'run-7:2' });
    assert.deepEqual(sessions.lastCallParams()?._meta, { 'io.flowgate/idempotencyKey': 'run-7:2' }, 'in-process calls (steps, agents) the same way');

    await callTool(fg, plain.id, token, 'add', { a: 1, b: 1 });
    assert.equal(stateless.lastCallParams()?._meta, undefined);
  });

  it('answers a remote that is down with a clear -32000, quickly, and refuses to register one', async () => {
    const doomed = await startFakeRemoteMcp({ sessions: false });
    const server = await createServer(fg, fg.adminToken, { url: doomed.url });
    await doomed.close();
    const started = Date.now();
    const down = await callTool(fg, server.id, token, 'add', { a: 1, b: 2 });
    assert.equal(down.body?.error?.code, -32000);
    assert.match(down.body?.error?.message ?? '', new RegExp(`remote server /${server.id}.*(unreachable|ECONNREFUSED)`));
    assert.ok(Date.now() - started < 5000, 'no hang');
    const refused = await asAdmin(fg, fg.adminToken, 'POST', '/api/v1/servers', { url: doomed.url });
    assert.equal(refused.status, 400);
    assert.match(String(refused.body.message), /could not list the remote server's tools/);
  });

  it('gives up on a remote that accepts and never answers at the call\'s time limit', async () => {
    const slow = await startFakeRemoteMcp({ sessions: false });
    try {
      const server = await createServer(fg, fg.adminToken, { url: slow.url });
      slow.hang = true;
      const started = Date.now();
      await assert.rejects(fg.tools.call(DEFAULT_ORG_ID, server.id, 'add', { a: 1, b: 2 }, { timeoutMs: 700 }),
        (e: unknown) => e instanceof ToolCallError && e.code === 'TIMEOUT');
      assert.ok(Date.now() - started < 3000);
      const listed = await rpc(fg, server.id, token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      assert.deepEqual((listed.body?.result?.tools as { name: string }[]).map((t) => t.name), ['add', 'shout', 'count_slowly'], 'the cached list still answers');
    } finally {
      await slow.close();
    }
  });

  it('refuses a remote on a private address unless private networks are allowed', async () => {
    const strict = await startToolFlowgate({ FLOWGATE_ALLOW_PRIVATE_NETWORK: 'false' });
    try {
      const refused = await asAdmin(strict, strict.adminToken, 'POST', '/api/v1/servers', { url: stateless.url });
      assert.equal(refused.status, 400);
      assert.match(String(refused.body.message), /refused to connect to 127\.0\.0\.1/);
    } finally {
      await strict.stop();
    }
  });

  it('a change or delete through this gateway applies to the next call; one written elsewhere (another replica) within CUSTOM_SERVER_RECHECK_MS', async () => {
    const other = await startFakeRemoteMcp({ sessions: false });
    try {
      const server = await createServer(fg, fg.adminToken, { url: stateless.url, name: 'moving' });
      assert.deepEqual((await callTool(fg, server.id, token, 'add', { a: 1, b: 2 })).body?.result?.structuredContent, { sum: 3 });
      const there = other.count('tools/call');
      assert.equal((await asAdmin(fg, fg.adminToken, 'PUT', `/api/v1/servers/${server.id}`, { url: other.url, name: 'moving' })).status, 200);
      assert.deepEqual((await callTool(fg, server.id, token, 'add', { a: 2, b: 2 })).body?.result?.structuredContent, { sum: 4 });
      assert.equal(other.count('tools/call'), there + 1, 'the call right after the PUT went to the new URL');

      // another replica changes the row: this gateway reads it again within the bound (no fixed sleep: call until it moves)
      await fg.registry.toolServers.replace(DEFAULT_ORG_ID, server.id, { name: 'moving', description: 'moved back', connectionId: null, source: stateless.url });
      await eventually(async () => {
        const before = stateless.count('tools/call');
        await callTool(fg, server.id, token, 'add', { a: 1, b: 1 });
        return stateless.count('tools/call') > before ? true : undefined;
      }, 'a call to the URL written elsewhere', CUSTOM_SERVER_RECHECK_MS + 5_000, 20);
      await fg.registry.toolServers.remove(DEFAULT_ORG_ID, server.id);
      await eventually(async () => ((await callTool(fg, server.id, token, 'add', { a: 1, b: 1 })).status === 404 ? true : undefined),
        'a 404 for the server deleted elsewhere', CUSTOM_SERVER_RECHECK_MS + 5_000, 20);

      // deleted through this gateway: 404 on the very next call
      const again = await createServer(fg, fg.adminToken, { url: other.url, name: 'short-lived' });
      assert.deepEqual((await callTool(fg, again.id, token, 'add', { a: 3, b: 3 })).body?.result?.structuredContent, { sum: 6 });
      assert.equal((await asAdmin(fg, fg.adminToken, 'DELETE', `/api/v1/servers/${again.id}`)).status, 204);
      assert.equal((await callTool(fg, again.id, token, 'add', { a: 3, b: 3 })).status, 404);
    } finally {
      await other.close();
    }
  });
});

describe('custom servers across organizations', () => {
  let fg: TestFlowgate;
  let remote: FakeRemoteMcp;
  let api: FakeCustomerApi;

  before(async () => {
    remote = await startFakeRemoteMcp({ sessions: false });
    api = await startFakeCustomerApi();
    fg = await startToolFlowgate();
  });
  after(async () => {
    await fg?.stop();
    await remote?.close();
    await api?.close();
  });

  it('another organization\'s server answers like an unknown path, is not in discovery, and cannot be read or called', async () => {
    const other = await createOrg(fg);
    const theirs = await createServer(fg, other.adminToken, { url: remote.url, name: 'their calculator' });
    const ourToken = (await runtimeToken(fg)).token;
    const theirToken = (await runtimeToken(fg, other.adminToken)).token;

    assert.deepEqual((await callTool(fg, theirs.id, theirToken, 'add', { a: 1, b: 1 })).body?.result?.structuredContent, { sum: 2 }, 'it works for its own organization');

    const stolen = await callTool(fg, theirs.id, ourToken, 'add', { a: 1, b: 1 });
    const unknown = await callTool(fg, 'abcdefghij0123456789', ourToken, 'add', { a: 1, b: 1 });
    assert.equal(stolen.status, unknown.status);
    assert.equal(stolen.body?.error?.code, unknown.body?.error?.code);
    assert.equal(stolen.body?.error?.message, unknown.body?.error?.message.replace('abcdefghij0123456789', theirs.id));
    const listed = await rpc(fg, theirs.id, ourToken, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(listed.status, 404);

    const servers = await callTool(fg, 'mcp', ourToken, 'listServers', {});
    const names = (servers.body?.result?.structuredContent as { servers: { name: string }[] }).servers.map((s) => s.name);
    assert.ok(!names.includes(theirs.id));
    const theirServers = await callTool(fg, 'mcp', theirToken, 'listServers', {});
    assert.ok((theirServers.body?.result?.structuredContent as { servers: { name: string; embedded: boolean }[] }).servers.some((s) => s.name === theirs.id && !s.embedded));
    const details = await callTool(fg, 'mcp', ourToken, 'capability_details', { tools: [`${theirs.id}/add`] });
    assert.deepEqual((details.body?.result?.structuredContent as { unknown: string[] }).unknown, [`${theirs.id}/add`]);
    const discovered = await callTool(fg, 'mcp', ourToken, 'capabilities_discover', { task: 'add two numbers', limit: 50 });
    assert.doesNotMatch(JSON.stringify(discovered.body), new RegExp(theirs.id));
    const theirDiscovery = await callTool(fg, 'mcp', theirToken, 'capabilities_discover', { task: 'add two numbers', limit: 50 });
    assert.match(JSON.stringify(theirDiscovery.body), new RegExp(theirs.id));

    assert.equal((await asAdmin(fg, fg.adminToken, 'GET', `/api/v1/servers/${theirs.id}`)).status, 404);
    assert.equal((await asAdmin(fg, fg.adminToken, 'PUT', `/api/v1/servers/${theirs.id}`, { url: remote.url })).status, 404);
    assert.equal((await asAdmin(fg, fg.adminToken, 'DELETE', `/api/v1/servers/${theirs.id}`)).status, 404);
    const ours = await asAdmin<{ servers: { id: string }[] }>(fg, fg.adminToken, 'GET', '/api/v1/servers');
    assert.ok(!ours.body.servers.some((s) => s.id === theirs.id));
  });

  it('an agent can attach its own organization\'s custom server by id, never another\'s, nor one by display name', async () => {
    const other = await createOrg(fg);
    const theirs = await createServer(fg, other.adminToken, { url: remote.url, name: 'their calculator' });
    const ours = await createServer(fg, fg.adminToken, { url: remote.url, name: 'our calculator' });
    const token = (await runtimeToken(fg)).token;
    const agent = (servers: unknown) => callTool(fg, 'agent-management', token, 'agent_create', {
      name: 'calc', description: 'adds', instructions: 'Add numbers.', servers,
    });
    const attached = await agent([{ name: ours.id, allTools: true }]);
    assert.equal(attached.body?.result?.isError, false, JSON.stringify(attached.body));
    for (const refusedName of [theirs.id, 'our calculator']) {
      const refused = await agent([{ name: refusedName, allTools: true }]);
      const text = JSON.stringify(refused.body);
      assert.ok(refused.body?.error || refused.body?.result?.isError, text);
      assert.match(text, new RegExp(ours.id), 'the error lists the valid ids');
      assert.doesNotMatch(text.replace(new RegExp(`"${refusedName}"|${refusedName}`, 'g'), ''), new RegExp(theirs.id), 'and never names the other organization\'s server');
    }
    const rest = await asAdmin(fg, fg.adminToken, 'POST', '/api/v1/agents', {
      name: 'calc', description: 'adds', instructions: 'Add numbers.', servers: [{ name: theirs.id, allTools: true }],
    });
    assert.equal(rest.status, 400, JSON.stringify(rest.body));
  });

  it('a generated server cannot be built on, or called with, another organization\'s connection', async () => {
    const other = await createOrg(fg);
    const theirConnection = await createCustomConnection(fg, other.adminToken, { baseUrl: `${api.url}/api/v3`, auth: { kind: 'api_key', name: 'api_key', value: API_KEY } });
    const refused = await asAdmin(fg, fg.adminToken, 'POST', '/api/v1/servers', { connection: theirConnection, document: PETSTORE });
    assert.equal(refused.status, 400);
    assert.match(String(refused.body.message), /no connection/);
    const ourConnection = await createCustomConnection(fg, fg.adminToken, { baseUrl: `${api.url}/api/v3`, auth: { kind: 'api_key', name: 'api_key', value: API_KEY } });
    const ours = await createServer(fg, fg.adminToken, { connection: ourConnection, document: PETSTORE });
    const token = (await runtimeToken(fg)).token;
    const called = await callTool(fg, ours.id, token, 'getInventory', { PCID: theirConnection });
    assert.equal(called.body?.error?.code, -32000);
    assert.match(called.body?.error?.message ?? '', /no connection/);
  });

  it('runs a workflow with a tool step on a generated server and one on a remote server to COMPLETE', async () => {
    const pcid = await createCustomConnection(fg, fg.adminToken, { baseUrl: `${api.url}/api/v3`, auth: { kind: 'api_key', name: 'api_key', value: API_KEY } });
    const petstore = await createServer(fg, fg.adminToken, { connection: pcid, document: PETSTORE });
    const calculator = await createServer(fg, fg.adminToken, { url: remote.url });
    const p = await publishWorkflow(fg, {
      name: 'custom servers',
      steps: [
        { name: 'Pet', type: 'tool', server: petstore.id, tool: 'getPetById', arguments: { PCID: pcid, petId: '{{inputs.petId}}' } },
        { name: 'Sum', type: 'tool', server: `/${calculator.id}`, tool: 'add', arguments: { a: '{{steps.1.json.id}}', b: 32 } },
      ],
    });
    const response = await trigger(fg, p, { petId: 10 }, { 'x-api-wait': 'true' });
    const body = (await response.json()) as { status: string; results: { result: { result: string } }[] };
    assert.equal(body.status, 'COMPLETE', JSON.stringify(body));
    assert.equal((JSON.parse(body.results[0]?.result.result ?? '{}') as { name: string }).name, 'doggie');
    assert.deepEqual(JSON.parse(body.results[1]?.result.result ?? '{}'), { sum: 42 });
    // each step's stable key, <runId>:<stepIndex>: a header for the API, the tools/call _meta for the remote
    const runId = response.headers.get('X-Pf-Run-Id');
    assert.equal(api.requests.filter((r) => r.path === '/api/v3/pet/10').at(-1)?.headers['idempotency-key'], `${runId}:1`);
    assert.deepEqual(remote.lastCallParams()?._meta, { 'io.flowgate/idempotencyKey': `${runId}:2` });
  });
});
