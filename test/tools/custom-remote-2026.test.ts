/**
 * What a remote server of the 2026-07-28 era asks of flowgate beyond a plain proxied call, against a
 * scripted remote on loopback that records every header (test/support/scripted-remote-mcp.ts):
 *   - `Mcp-Param-*` headers (SEP-2243): flowgate sends the ones the remote's schema declares, a caller
 *     cannot forge one, a tool with invalid declarations is not listed, a refusal for headers makes
 *     flowgate list again and send again once; and flowgate as a 2026 server refuses a call whose
 *     headers disagree with its arguments (-32020, HTTP 400);
 *   - a remote's `input_required` (Multi Round-Trip Requests): handed to a 2026 caller as it is, the
 *     caller's answers taken back unchanged; a tool error for a 2025 or in-process caller;
 *   - a remote's list cache hints (`ttlMs`): flowgate keeps the list no longer than the remote said
 *     (at most its own minute) and tells its 2026 callers no more than what remains.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DEFAULT_ORG_ID } from '../../src/registry';
import type { TestFlowgate } from '../support/flowgate';
import { startScriptedRemote, type ScriptedRemote, type ScriptedTool } from '../support/scripted-remote-mcp';
import { createServer, type ServerBody } from './custom-support';
import { rpc, RPC_HEADERS, runtimeToken, startToolFlowgate, type RpcAnswer } from './support';

const V2026 = '2026-07-28';

/** A 2026-era tools/call as a client of that revision sends it: the envelope in `_meta`, the standard headers, and `extra` ones. */
function modernCall(fg: TestFlowgate, server: string, token: string, name: string, args: Record<string, unknown>, extra: Record<string, string> = {},
  more: Record<string, unknown> = {}, capabilities: Record<string, unknown> = {}): Promise<RpcAnswer> {
  const body = {
    jsonrpc: '2.0', id: randomUUID(), method: 'tools/call',
    params: {
      name, arguments: args, ...more,
      _meta: { 'io.modelcontextprotocol/protocolVersion': V2026, 'io.modelcontextprotocol/clientCapabilities': capabilities, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } },
    },
  };
  return rpc(fg, server, token, body, { ...RPC_HEADERS, 'MCP-Protocol-Version': V2026, 'Mcp-Method': 'tools/call', 'Mcp-Name': name, ...extra });
}

/** A 2026-era request of another method (tools/list, server/discover). */
function modernRequest(fg: TestFlowgate, server: string, token: string, method: string): Promise<RpcAnswer> {
  const body = {
    jsonrpc: '2.0', id: randomUUID(), method,
    params: { _meta: { 'io.modelcontextprotocol/protocolVersion': V2026, 'io.modelcontextprotocol/clientCapabilities': {} } },
  };
  return rpc(fg, server, token, body, { ...RPC_HEADERS, 'MCP-Protocol-Version': V2026, 'Mcp-Method': method });
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const ROUTE: ScriptedTool = {
  name: 'route',
  description: 'Route a query to a region.',
  inputSchema: {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      tenant: { type: 'integer', 'x-mcp-header': 'Tenant-Id' },
      dryRun: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
      query: { type: 'string' },
    },
    required: ['query'],
  },
};
const NUMBER_HEADER: ScriptedTool = { name: 'bad_header', inputSchema: { type: 'object', properties: { ratio: { type: 'number', 'x-mcp-header': 'Ratio' } } } };
const PLAIN: ScriptedTool = { name: 'plain', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } };

const paramHeadersOf = (headers: Record<string, unknown> | undefined): Record<string, unknown> =>
  Object.fromEntries(Object.entries(headers ?? {}).filter(([name]) => name.startsWith('mcp-param-')));

/** A gateway and a scripted remote serving `tools`, the remote registered as a server when `register`. */
async function startWithRemote(tools: ScriptedTool[], register: boolean): Promise<{ fg: TestFlowgate; token: string; remote: ScriptedRemote; server: ServerBody }> {
  const remote = await startScriptedRemote(tools);
  let fg: TestFlowgate | undefined;
  try {
    fg = await startToolFlowgate();
    const { token } = await runtimeToken(fg);
    const server = register ? await createServer(fg, fg.adminToken, { url: remote.url }) : ({} as ServerBody);
    return { fg, token, remote, server };
  } catch (error) {
    await stopWithRemote(fg, remote);
    throw error;
  }
}

async function stopWithRemote(fg: TestFlowgate | undefined, remote: ScriptedRemote | undefined): Promise<void> {
  await fg?.stop();
  await remote?.close();
}

describe('remote servers of the 2026-07-28 era: Mcp-Param headers (SEP-2243)', () => {
  let fg: TestFlowgate;
  let token: string;
  let remote: ScriptedRemote;
  let server: ServerBody;

  before(async () => ({ fg, token, remote, server } = await startWithRemote([ROUTE, NUMBER_HEADER, PLAIN], true)));
  after(() => stopWithRemote(fg, remote));

  it('does not list a remote tool whose x-mcp-header declarations are invalid, and lists the others with theirs', async () => {
    assert.deepEqual(server.tools?.map((t) => t.name), ['route', 'plain']);
    const listed = await rpc(fg, server.id, token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const tools = listed.body?.result?.tools as { name: string; inputSchema: { properties: Record<string, Record<string, unknown>> } }[];
    assert.deepEqual(tools.map((t) => t.name), ['route', 'plain']);
    assert.equal(tools[0]?.inputSchema.properties.region?.['x-mcp-header'], 'Region', 'the remote\'s declarations pass through');
  });

  it('sends the Mcp-Param headers the remote declares, plain or in the Base64 sentinel, none for null or absent arguments, whatever the caller\'s era', async () => {
    const plain = await modernCall(fg, server.id, token, 'route', { region: 'us-west1', tenant: 42, dryRun: true, query: 'SELECT 1' },
      { 'Mcp-Param-Region': 'us-west1', 'Mcp-Param-Tenant-Id': '42', 'Mcp-Param-Dry-Run': 'true' });
    assert.equal(plain.status, 200, plain.text);
    assert.deepEqual(paramHeadersOf(remote.calls().at(-1)?.headers), { 'mcp-param-region': 'us-west1', 'mcp-param-tenant-id': '42', 'mcp-param-dry-run': 'true' });

    // a 2025 caller: flowgate still speaks 2026 to the remote, headers and all
    const legacy = await rpc(fg, server.id, token, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'route', arguments: { region: ' Zürich ', tenant: null, query: 'q' } } });
    assert.equal(legacy.body?.result?.isError, false, legacy.text);
    assert.deepEqual(paramHeadersOf(remote.calls().at(-1)?.headers), { 'mcp-param-region': `=?base64?${Buffer.from(' Zürich ').toString('base64')}?=` });
    assert.equal(remote.calls().at(-1)?.headers['mcp-name'], 'route');

    await rpc(fg, server.id, token, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'plain', arguments: { text: 'x' } } });
    assert.deepEqual(paramHeadersOf(remote.calls().at(-1)?.headers), {}, 'a tool without declarations: no Mcp-Param header');
  });

  it('lets no caller supply or override an Mcp-Param header through X-Pf-Forward-*', async () => {
    const forged = await rpc(fg, server.id, token, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'route', arguments: { region: 'eu-west1', query: 'q' } } },
      { ...RPC_HEADERS, 'X-Pf-Forward-Mcp-Param-Region': 'us-east1', 'X-Pf-Forward-Mcp-Param-Tenant-Id': '7', 'X-Pf-Forward-Mcp-Name': 'other', 'X-Pf-Forward-X-Tenant': 'acme' });
    assert.equal(forged.body?.result?.isError, false, forged.text);
    const seen = remote.calls().at(-1)?.headers ?? {};
    assert.deepEqual(paramHeadersOf(seen), { 'mcp-param-region': 'eu-west1' }, 'the argument\'s value, and no header for the absent tenant');
    assert.deepEqual([seen['mcp-name'], seen['x-tenant']], ['route', 'acme'], 'other forwarded headers still arrive');
    assert.deepEqual(remote.calls().at(-1)?.params.arguments, { region: 'eu-west1', query: 'q' });
  });

  it('as a 2026 server, refuses a call whose Mcp-Param headers disagree with its arguments or lack one (-32020, HTTP 400), before the remote sees it', async () => {
    const before = remote.calls().length;
    const args = { region: 'us-west1', tenant: 42, query: 'q' };
    const refusals: [Record<string, string>, RegExp][] = [
      [{ 'Mcp-Param-Tenant-Id': '42' }, /arguments.region="us-west1" but the required Mcp-Param-Region header is absent/],
      [{ 'Mcp-Param-Region': 'eu-west1', 'Mcp-Param-Tenant-Id': '42' }, /Mcp-Param-Region header carries "eu-west1"/],
      [{ 'Mcp-Param-Region': 'us-west1', 'Mcp-Param-Tenant-Id': '41' }, /Mcp-Param-Tenant-Id header carries "41"/],
      [{ 'Mcp-Param-Region': '=?base64?dXMtd2VzdDE?=', 'Mcp-Param-Tenant-Id': '42' }, /invalid Base64/],
      [{ 'Mcp-Param-Region': 'us-west1', 'Mcp-Param-Tenant-Id': '42', 'Mcp-Param-Dry-Run': 'false' }, /Mcp-Param-Dry-Run header is present but the body carries no boolean/],
    ];
    for (const [headers, message] of refusals) {
      const refused = await modernCall(fg, server.id, token, 'route', args, headers);
      assert.equal(refused.status, 400, JSON.stringify(headers));
      assert.equal(refused.body?.error?.code, -32020);
      assert.match(refused.body?.error?.message ?? '', message);
    }
    assert.equal(remote.calls().length, before, 'no refused call reached the remote');

    const encoded = await modernCall(fg, server.id, token, 'route', args, { 'mcp-param-region': '=?base64?dXMtd2VzdDE=?=', 'MCP-PARAM-TENANT-ID': '42.0' });
    assert.equal(encoded.status, 200, encoded.text);
    assert.equal(encoded.body?.result?.isError, false, 'the Base64 form decoded, an integer compared as a number, header names in any case');
    const plain = await modernCall(fg, server.id, token, 'plain', { text: 'x' }, { 'Mcp-Param-Anything': 'ignored' });
    assert.equal(plain.status, 200, 'headers no declaration names are ignored');
    const builtIn = await modernCall(fg, 'mcp', token, 'listServers', {}, { 'Mcp-Param-Region': 'anything' });
    assert.equal(builtIn.status, 200, 'built-in tools declare none');
  });

  it('lists again and sends again, once, when the remote refuses a call for its headers (its schema changed)', async () => {
    const strict: ScriptedTool = {
      ...PLAIN,
      inputSchema: { type: 'object', properties: { text: { type: 'string', 'x-mcp-header': 'Text' } } },
      answer: (params, headers) => (headers['mcp-param-text'] === (params.arguments as { text: string }).text
        ? { result: { content: [{ type: 'text', text: 'ok' }], structuredContent: { ok: true } } }
        : { error: { code: -32020, message: 'Header mismatch: Mcp-Param-Text' }, status: 400 }),
    };
    remote.tools = [ROUTE, strict];
    const lists = remote.count('tools/list');
    const called = await rpc(fg, server.id, token, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'plain', arguments: { text: 'hello' } } });
    assert.deepEqual(called.body?.result?.structuredContent, { ok: true }, called.text);
    assert.equal(remote.count('tools/list'), lists + 1, 'one list afresh');
    assert.deepEqual(remote.calls().slice(-2).map((c) => c.headers['mcp-param-text']), [undefined, 'hello'], 'the call, then the same call with the header');
    remote.tools = [ROUTE, NUMBER_HEADER, PLAIN];
  });
});

/** A remote tool that asks for a confirmation once (input_required), then answers with what it was told. */
const CONFIRM: ScriptedTool = {
  name: 'confirm_delete',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  answer: (params) => {
    const responses = params.inputResponses as Record<string, { action: string; content?: { confirm?: boolean } }> | undefined;
    if (responses === undefined) {
      return {
        result: {
          resultType: 'input_required', requestState: 'opaque-state-1',
          inputRequests: { confirm: { method: 'elicitation/create', params: { mode: 'form', message: `Delete ${String((params.arguments as { path: string }).path)}?`, requestedSchema: CONFIRM_SCHEMA } } },
        },
      };
    }
    const confirmed = params.requestState === 'opaque-state-1' && responses.confirm?.action === 'accept' && responses.confirm.content?.confirm === true;
    return { result: { content: [{ type: 'text', text: confirmed ? 'deleted' : 'kept' }], structuredContent: { deleted: confirmed } } };
  },
};
const CONFIRM_SCHEMA = { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] };

describe('remote servers of the 2026-07-28 era: input_required passed through', () => {
  let fg: TestFlowgate;
  let token: string;
  let remote: ScriptedRemote;
  let server: ServerBody;

  before(async () => ({ fg, token, remote, server } = await startWithRemote([CONFIRM], true)));
  after(() => stopWithRemote(fg, remote));

  it('hands a 2026 caller the remote\'s input_required as it is, and takes its answers back to the remote unchanged', async () => {
    const capabilities = { elicitation: { form: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } };
    const asked = await modernCall(fg, server.id, token, 'confirm_delete', { path: '/tmp/x' }, {}, {}, capabilities);
    assert.equal(asked.status, 200, asked.text);
    const result = asked.body?.result ?? {};
    assert.equal(result.resultType, 'input_required');
    assert.deepEqual(result.inputRequests, { confirm: { method: 'elicitation/create', params: { mode: 'form', message: 'Delete /tmp/x?', requestedSchema: CONFIRM_SCHEMA } } });
    assert.equal(result.requestState, 'opaque-state-1');
    const first = remote.calls().at(-1);
    assert.deepEqual((first?.params._meta as Record<string, unknown>)['io.modelcontextprotocol/clientCapabilities'], { elicitation: { form: {} } },
      'the caller\'s input capabilities reach the remote (not its extensions: flowgate proxies no remote tasks)');

    const inputResponses = { confirm: { action: 'accept', content: { confirm: true } } };
    const answered = await modernCall(fg, server.id, token, 'confirm_delete', { path: '/tmp/x' }, {}, { inputResponses, requestState: 'opaque-state-1' }, capabilities);
    assert.equal(answered.body?.result?.resultType, 'complete', answered.text);
    assert.deepEqual(answered.body?.result?.structuredContent, { deleted: true });
    const retried = remote.calls().at(-1);
    assert.deepEqual([retried?.params.inputResponses, retried?.params.requestState, retried?.params.arguments], [inputResponses, 'opaque-state-1', { path: '/tmp/x' }]);
    assert.equal(remote.calls().length, 2, 'one request to the remote per call');
  });

  it('refuses answers of the wrong shape before the remote sees them', async () => {
    const before = remote.calls().length;
    for (const more of [{ inputResponses: [] }, { inputResponses: 'yes' }, { requestState: 7 }]) {
      const refused = await modernCall(fg, server.id, token, 'confirm_delete', { path: '/tmp/x' }, {}, more, { elicitation: {} });
      assert.equal(refused.body?.error?.code, -32602, JSON.stringify(more));
    }
    assert.equal(remote.calls().length, before);
  });

  it('gives a 2025 caller and an in-process caller (a workflow step, an agent) a tool error naming the limitation', async () => {
    const legacy = await rpc(fg, server.id, token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'confirm_delete', arguments: { path: '/tmp/y' } } });
    assert.equal(legacy.status, 200);
    assert.equal(legacy.body?.result?.isError, true, legacy.text);
    const message = (legacy.body?.result?.structuredContent as { error: string }).error;
    assert.match(message, new RegExp(`remote server /${server.id} asked for input during confirm_delete \\(input_required: elicitation/create\\).*only a caller of protocol revision 2026-07-28 can answer`));
    assert.deepEqual((remote.calls().at(-1)?.params._meta as Record<string, unknown>)['io.modelcontextprotocol/clientCapabilities'], {}, 'a 2025 caller declares nothing to the remote');
    const inProcess = await fg.tools.call(DEFAULT_ORG_ID, server.id, 'confirm_delete', { path: '/tmp/z' });
    assert.equal(inProcess.isError, true);
    assert.match(inProcess.isError ? inProcess.message : '', /asked for input during confirm_delete/);
  });
});

describe('remote servers of the 2026-07-28 era: the remote\'s list cache hints', () => {
  let fg: TestFlowgate;
  let token: string;
  let remote: ScriptedRemote;

  before(async () => ({ fg, token, remote } = await startWithRemote([PLAIN], false)));
  after(() => stopWithRemote(fg, remote));

  const hints = async (server: string, method = 'tools/list'): Promise<{ ttlMs: number; cacheScope: string }> => {
    const answer = await modernRequest(fg, server, token, method);
    assert.equal(answer.status, 200, answer.text);
    const { ttlMs, cacheScope } = answer.body?.result as { ttlMs: number; cacheScope: string };
    return { ttlMs, cacheScope };
  };

  it('keeps the list no longer than the remote\'s ttlMs, and tells its callers no more than what remains of it, private', async () => {
    // long enough that a loaded machine's pauses do not outlast it between two steps
    remote.listHints = { ttlMs: 3000, cacheScope: 'public' };
    const server = await createServer(fg, fg.adminToken, { url: remote.url });
    const lists = remote.count('tools/list');
    const first = await hints(server.id);
    assert.equal(first.cacheScope, 'private', 'an organization\'s server, whatever the remote says');
    assert.ok(first.ttlMs > 0 && first.ttlMs <= 3000, `ttlMs ${first.ttlMs}: what remains of the remote's 3000`);
    const discovered = await hints(server.id, 'server/discover');
    assert.ok(discovered.ttlMs <= first.ttlMs, 'server/discover too');
    assert.equal(remote.count('tools/list'), lists, 'the list registration fetched is still fresh');

    await pause(first.ttlMs + 100);
    const later = await hints(server.id);
    assert.equal(remote.count('tools/list'), lists + 1, 'listed afresh once the remote\'s ttlMs passed (not after flowgate\'s minute)');
    assert.ok(later.ttlMs > 2000 && later.ttlMs <= 3000, `ttlMs ${later.ttlMs} of the list just fetched`);
    const legacy = await rpc(fg, server.id, token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(legacy.status, 200);
    assert.equal(remote.count('tools/list'), lists + 1, 'a 2025 caller reads the same kept list');
  });

  it('keeps nothing for a remote that says ttlMs 0, and at most its own hint for one that says more', async () => {
    remote.listHints = { ttlMs: 0 };
    const none = await createServer(fg, fg.adminToken, { url: remote.url });
    const lists = remote.count('tools/list');
    assert.equal((await hints(none.id)).ttlMs, 0);
    assert.equal((await hints(none.id)).ttlMs, 0);
    assert.equal(remote.count('tools/list'), lists + 2, 'every list asks the remote');
    const called = await modernCall(fg, none.id, token, 'plain', { text: 'x' });
    assert.equal(called.body?.result?.isError, false, called.text);
    assert.equal(remote.count('tools/list'), lists + 2, 'a call (its Mcp-Param check, its headers) reads the kept list, stale or not: no list first');

    remote.listHints = { ttlMs: 3_600_000, cacheScope: 'public' };
    const long = await createServer(fg, fg.adminToken, { url: remote.url });
    const before = remote.count('tools/list');
    assert.deepEqual(await hints(long.id), { ttlMs: 5000, cacheScope: 'private' }, 'flowgate\'s own hint for an organization\'s server bounds it');
    assert.equal(remote.count('tools/list'), before);

    remote.listHints = undefined;
    const plain = await createServer(fg, fg.adminToken, { url: remote.url });
    assert.deepEqual(await hints(plain.id), { ttlMs: 5000, cacheScope: 'private' }, 'a remote without hints: as before');
  });
});
