import assert from 'node:assert/strict';
import { DEFAULT_ORG_ID } from '../../src/registry';
import { ToolCallError } from '../../src/tools';
import { API_KEY, startFakeCustomerApi, type FakeCustomerApi } from '../support/fake-customer-api';
import { startFakeRemoteMcp, type FakeRemoteMcp } from '../support/fake-remote-mcp';
import { publishWorkflow, trigger, type TestFlowgate } from '../support/flowgate';
import { asAdmin, createCustomConnection, createServer, PETSTORE, type ServerBody } from './custom-support';
import { callTool, createOrg, rpc, RPC_HEADERS, runtimeToken, startToolFlowgate } from './support';

/** What the remote may see besides the forwarded headers and the stored credential: transport and MCP protocol headers. */
const PROTOCOL_HEADERS = new Set(['host', 'connection', 'content-type', 'content-length', 'transfer-encoding', 'accept', 'mcp-protocol-version', 'mcp-session-id']);

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
    assert.deepEqual(plain.tools?.map((t) => t.name), ['add', 'shout']);
    const listed = await rpc(fg, plain.id, token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.deepEqual((listed.body?.result?.tools as { name: string }[]).map((t) => t.name), ['add', 'shout']);
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
    assert.ok(sessions.requests.some((r) => r.method === 'DELETE'), 'the session was ended');
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
      assert.deepEqual((listed.body?.result?.tools as { name: string }[]).map((t) => t.name), ['add', 'shout'], 'the cached list still answers');
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
