import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_ORG_ID, openRegistry } from '../../src/registry';
import { z } from 'zod';
import { createRuntimeTokens, ToolFailure, type ToolServer } from '../../src/tools';
import { defineTool, toolServer } from '../../src/tools/define-tool';
import type { TestFlowgate } from '../support/flowgate';
import {
  callTool, createOrg, rpc, RPC_HEADERS, runtimeToken, startFakeSearch, startToolFlowgate, type FakeSearch,
} from './support';

/** Test-only servers: what built-ins cannot be made to do on demand (hang, crash). */
const lab: ToolServer = toolServer({
  name: 'lab',
  description: 'Test tools: echo, slow, failing and crashing.',
  embedded: false,
  tools: [
    defineTool({
      name: 'echo', description: 'Echo the arguments back.',
      input: z.object({ text: z.string(), n: z.number().int().min(0).optional() }).strict(),
      async handler(args, context) {
        return { echoed: args, orgId: context.orgId, idempotencyKey: context.idempotencyKey ?? null };
      },
    }),
    defineTool({
      name: 'slow', description: 'Never finishes in time.', timeoutMs: 300, input: z.object({}),
      handler: (_args, context) => new Promise((_resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('should have been aborted')), 5000);
        context.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new Error('aborted'));
        });
      }),
    }),
    defineTool({
      name: 'refuses', description: 'Runs and fails with a reason.', input: z.object({}),
      async handler() {
        throw new ToolFailure('the upstream said no');
      },
    }),
    defineTool({
      name: 'crashes', description: 'A bug.', input: z.object({}),
      async handler() {
        throw new Error('secret internal detail at /srv/app.js:12');
      },
    }),
  ],
});

function customCrm(orgName: string): ToolServer {
  return toolServer({
    name: 'acme-crm', description: `Customer records of ${orgName}: look up a customer account.`, embedded: false,
    tools: [defineTool({
      name: 'crm_find_customer', description: 'Find a customer account by company name.',
      input: z.object({ company: z.string() }),
      async handler(args) {
        return { company: args.company, tier: 'gold' };
      },
    })],
  });
}

describe('tool gateway (JSON-RPC over HTTP)', () => {
  let fg: TestFlowgate;
  let search: FakeSearch;
  let token: string;
  let acme: { id: string; adminToken: string } | undefined;

  before(async () => {
    search = await startFakeSearch();
    fg = await startToolFlowgate({ FLOWGATE_SEARCH_URL: search.url }, {
      servers: async (orgId) => [
        ...(orgId === DEFAULT_ORG_ID ? [lab] : []),
        ...(acme && orgId === acme.id ? [customCrm('Acme')] : []),
      ],
    });
    token = (await runtimeToken(fg)).token;
  });
  after(async () => {
    await fg?.stop();
    await search?.close();
  });

  describe('runtime tokens', () => {
    it('trades an API key for a signed token valid 60 minutes', async () => {
      const before = Date.now();
      const issued = await runtimeToken(fg);
      const after = Date.now();
      assert.match(issued.token, /^fgr_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      const expires = Date.parse(issued.expiresAt); // whole seconds
      assert.ok(expires > before - 1000 + 60 * 60_000 && expires <= after + 60 * 60_000, `expires at ${issued.expiresAt}`);
      assert.equal((await rpc(fg, 'web-search', issued.token, { jsonrpc: '2.0', id: 1, method: 'ping' })).status, 200);
    });

    it('answers 401 {error, message} without a valid API key', async () => {
      const missing = await fg.request('/auth/token', { method: 'POST' });
      assert.equal(missing.status, 401);
      assert.equal(((await missing.json()) as { error: string }).error, 'unauthorized');
      const wrong = await fg.request('/auth/token', { method: 'POST', headers: { 'X-API-KEY': 'fgk_not_a_real_key_at_all_0000' } });
      assert.equal(wrong.status, 401);
    });

    it('refuses a missing, malformed or forged token with 401 and a JSON-RPC error', async () => {
      for (const bad of [undefined, 'nonsense', `${token.slice(0, -3)}abc`, token.replace(/^fgr_./, 'fgr_A')]) {
        const answer = await rpc(fg, 'web-search', bad, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
        assert.equal(answer.status, 401, String(bad));
        assert.equal(answer.body?.error?.code, -32000);
        assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer/);
      }
    });

    it('stops honouring the tokens of a revoked API key at once', async () => {
      const issued = await runtimeToken(fg);
      assert.equal((await rpc(fg, 'mcp', issued.token, { jsonrpc: '2.0', id: 1, method: 'ping' })).status, 200);
      assert.equal((await fg.admin('DELETE', `/api/v1/api-keys/${issued.apiKeyId}`)).status, 204);
      assert.equal((await rpc(fg, 'mcp', issued.token, { jsonrpc: '2.0', id: 2, method: 'ping' })).status, 401);
    });

    it('refuses an expired token', async () => {
      const issued = await runtimeToken(fg);
      const key = readFileSync(path.join(fg.dataDir, 'secrets', 'signing.key'));
      const registry = await openRegistry({ kind: 'sqlite', file: path.join(fg.dataDir, 'registry.sqlite') });
      try {
        const hourAgo = createRuntimeTokens(key, registry, () => Date.now() - 61 * 60_000);
        const expired = hourAgo.issue({ orgId: DEFAULT_ORG_ID, keyId: issued.apiKeyId }).token;
        assert.equal((await rpc(fg, 'mcp', expired, { jsonrpc: '2.0', id: 1, method: 'ping' })).status, 401);
        const fresh = createRuntimeTokens(key, registry).issue({ orgId: DEFAULT_ORG_ID, keyId: issued.apiKeyId }).token;
        assert.equal((await rpc(fg, 'mcp', fresh, { jsonrpc: '2.0', id: 1, method: 'ping' })).status, 200);
        const otherOrg = createRuntimeTokens(key, registry).issue({ orgId: 'org_someone_else', keyId: issued.apiKeyId }).token;
        assert.equal((await rpc(fg, 'mcp', otherOrg, { jsonrpc: '2.0', id: 1, method: 'ping' })).status, 401, 'a key is bound to its org');
      } finally {
        await registry.close();
      }
    });
  });

  describe('headers and HTTP methods', () => {
    it('accepts Accept: application/json alone and application/json, text/event-stream, with one JSON reply', async () => {
      for (const accept of ['application/json', 'application/json, text/event-stream', 'text/event-stream, application/json;q=0.9']) {
        const answer = await rpc(fg, 'web-search', token, { jsonrpc: '2.0', id: 7, method: 'tools/list' }, { 'Content-Type': 'application/json', Accept: accept });
        assert.equal(answer.status, 200, accept);
        assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
        assert.equal(answer.body?.id, 7);
      }
    });

    it('refuses another content type with 415 and -32000 (unsupported media type)', async () => {
      const answer = await rpc(fg, 'web-search', token, 'jsonrpc=2.0', { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' });
      assert.equal(answer.status, 415);
      assert.equal(answer.body?.error?.code, -32000);
      assert.match(answer.body?.error?.message ?? '', /unsupported media type/);
      const none = await rpc(fg, 'web-search', token, '{}', { Accept: 'application/json', 'Content-Type': 'text/plain' });
      assert.equal(none.status, 415);
    });

    it('refuses an Accept without JSON with 406 and -32000', async () => {
      const answer = await rpc(fg, 'web-search', token, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'Content-Type': 'application/json', Accept: 'text/event-stream' });
      assert.equal(answer.status, 406);
      assert.equal(answer.body?.error?.code, -32000);
    });

    it('answers GET and DELETE with 405 and Allow: POST', async () => {
      for (const method of ['GET', 'DELETE']) {
        const response = await fg.request('/tools/web-search', { method, headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' } });
        assert.equal(response.status, 405, method);
        assert.match(response.headers.get('allow') ?? '', /POST/);
      }
    });

    it('answers 404 with -32000 for an unknown server path, after authentication', async () => {
      const answer = await rpc(fg, 'no-such-server', token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      assert.equal(answer.status, 404);
      assert.equal(answer.body?.error?.code, -32000);
      assert.equal((await rpc(fg, 'no-such-server', undefined, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status, 401);
    });
  });

  describe('JSON-RPC envelope errors', () => {
    it('answers -32700 with id null for a body that is not JSON', async () => {
      const answer = await rpc(fg, 'web-search', token, '{"jsonrpc": "2.0", "method": ');
      assert.equal(answer.status, 400);
      assert.deepEqual(answer.body, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error: the body is not valid JSON' } });
    });

    it('answers -32600 for a message that is not a request, keeping a usable id', async () => {
      for (const [body, id] of [[{ jsonrpc: '1.0', id: 3, method: 'ping' }, 3], [{ jsonrpc: '2.0', id: 4 }, 4], ['"ping"', null], [{ jsonrpc: '2.0', id: { a: 1 }, method: 'ping' }, null]] as const) {
        const answer = await rpc(fg, 'web-search', token, body);
        assert.equal(answer.status, 400, JSON.stringify(body));
        assert.equal(answer.body?.error?.code, -32600);
        assert.equal(answer.body?.id, id);
      }
    });

    it('answers -32601 for an unknown method', async () => {
      const answer = await rpc(fg, 'web-search', token, { jsonrpc: '2.0', id: 9, method: 'resources/list' });
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body?.error?.code, -32601);
      assert.equal(answer.body?.id, 9);
    });

    it('answers -32602 for bad tools/call params and for an unknown tool', async () => {
      const noName = await rpc(fg, 'web-search', token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { arguments: {} } });
      assert.equal(noName.body?.error?.code, -32602);
      const badArgs = await rpc(fg, 'web-search', token, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search', arguments: ['x'] } });
      assert.equal(badArgs.body?.error?.code, -32602);
      const unknown = await callTool(fg, 'web-search', token, 'no_such_tool');
      assert.equal(unknown.body?.error?.code, -32602);
      assert.match(unknown.body?.error?.message ?? '', /no tool no_such_tool/);
    });

    it('answers a batch with one reply per request and none for notifications', async () => {
      const answer = await rpc(fg, 'web-search', token, [
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'nope' },
      ]);
      assert.equal(answer.status, 200);
      assert.ok(Array.isArray(answer.body));
      const replies = answer.body as unknown as { id: number; result?: unknown; error?: { code: number } }[];
      assert.deepEqual(replies.map((r) => [r.id, r.error?.code ?? 'ok']), [[1, 'ok'], [2, -32601]]);
      assert.equal((await rpc(fg, 'web-search', token, [])).body?.error?.code, -32600);
    });
  });

  describe('MCP lifecycle methods', () => {
    it('answers initialize with a protocol version the client supports and the tools capability', async () => {
      const answer = await rpc(fg, 'web-search', token, {
        jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
      assert.equal(answer.status, 200);
      const result = answer.body?.result as { protocolVersion: string; capabilities: Record<string, unknown>; serverInfo: { name: string } };
      assert.equal(result.protocolVersion, '2025-06-18');
      assert.deepEqual(result.capabilities, { tools: { listChanged: false } });
      assert.equal(result.serverInfo.name, 'flowgate/web-search');
      const future = await rpc(fg, 'web-search', token, { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2999-01-01', capabilities: {} } });
      assert.equal((future.body?.result as { protocolVersion: string }).protocolVersion, '2025-11-25');
      const missing = await rpc(fg, 'web-search', token, { jsonrpc: '2.0', id: 3, method: 'initialize', params: {} });
      assert.equal(missing.body?.error?.code, -32602);
    });

    it('answers notifications with 202 and no body, and ping with an empty result', async () => {
      const note = await rpc(fg, 'web-search', token, { jsonrpc: '2.0', method: 'notifications/initialized' });
      assert.equal(note.status, 202);
      assert.equal(note.text, '');
      const ping = await rpc(fg, 'web-search', token, { jsonrpc: '2.0', id: 'p-1', method: 'ping' });
      assert.deepEqual(ping.body, { jsonrpc: '2.0', id: 'p-1', result: {} });
    });
  });

  describe('tools/list and tools/call', () => {
    it('lists tool entries with name, description and an inputSchema with properties and required', async () => {
      const answer = await rpc(fg, 'web-search', token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const tools = (answer.body?.result as { tools: { name: string; description: string; inputSchema: { type: string; properties: Record<string, unknown>; required: string[] } }[] }).tools;
      assert.deepEqual(tools.map((t) => t.name), ['search']);
      assert.equal(tools[0]?.inputSchema.type, 'object');
      assert.deepEqual(Object.keys(tools[0]?.inputSchema.properties ?? {}).sort(), ['limit', 'query']);
      assert.deepEqual(tools[0]?.inputSchema.required, ['query']);
      assert.ok((tools[0]?.description.length ?? 0) > 10);
    });

    it('calls web-search: structuredContent, and the same JSON as text in content[0]', async () => {
      const answer = await callTool(fg, 'web-search', token, 'search', { query: 'temporal workflows', limit: 3 });
      assert.equal(answer.status, 200);
      const result = answer.body?.result as { structuredContent: { query: string; results: { title: string; url: string; snippet: string }[] }; content: { type: string; text: string }[]; isError: boolean };
      assert.equal(result.isError, false);
      assert.equal(result.structuredContent.query, 'temporal workflows');
      assert.equal(result.structuredContent.results.length, 3);
      assert.deepEqual(result.structuredContent.results[0], {
        title: 'Result 1 for temporal workflows', url: 'https://example.org/temporal%20workflows/1', snippet: 'A page about temporal workflows (1)', engine: 'fake',
      });
      assert.equal(result.content[0]?.type, 'text');
      assert.deepEqual(JSON.parse(result.content[0]?.text ?? ''), result.structuredContent);
      const last = search.requests[search.requests.length - 1];
      assert.equal(last?.searchParams.get('q'), 'temporal workflows');
      assert.equal(last?.searchParams.get('format'), 'json');
    });

    it('answers -32000 when arguments fail the tool\'s inputSchema', async () => {
      for (const args of [{}, { query: '' }, { query: 'x', limit: 0 }, { query: 'x', extra: true }, { query: 42 }]) {
        const answer = await callTool(fg, 'web-search', token, 'search', args);
        assert.equal(answer.body?.error?.code, -32000, JSON.stringify(args));
        assert.match(answer.body?.error?.message ?? '', /invalid arguments for search/);
      }
    });

    it('answers a tool that ran and failed with isError and the reason', async () => {
      search.failWith = 429;
      try {
        const answer = await callTool(fg, 'web-search', token, 'search', { query: 'anything' });
        const result = answer.body?.result as { isError: boolean; content: { text: string }[]; structuredContent: { error: string } };
        assert.equal(result.isError, true);
        assert.equal(result.structuredContent.error, 'the search service answered HTTP 429');
        assert.deepEqual(JSON.parse(result.content[0]?.text ?? ''), { error: 'the search service answered HTTP 429' });
      } finally {
        delete search.failWith;
      }
      const refused = await callTool(fg, 'lab', token, 'refuses');
      assert.deepEqual((refused.body?.result as { structuredContent: unknown }).structuredContent, { error: 'the upstream said no' });
    });

    it('answers -32000 when a tool passes its time limit', async () => {
      const started = Date.now();
      const answer = await callTool(fg, 'lab', token, 'slow');
      assert.equal(answer.body?.error?.code, -32000);
      assert.match(answer.body?.error?.message ?? '', /did not finish within 300 ms/);
      assert.ok(Date.now() - started < 4000);
    });

    it('answers -32603 for an internal error without its details or a stack', async () => {
      const answer = await callTool(fg, 'lab', token, 'crashes');
      assert.equal(answer.body?.error?.code, -32603);
      assert.doesNotMatch(answer.text, /secret internal detail|app\.js|at /);
    });

    it('passes an Idempotency-Key header to the tool', async () => {
      const answer = await rpc(fg, 'lab', token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
        { ...RPC_HEADERS, 'Idempotency-Key': 'abc-123' });
      assert.deepEqual((answer.body?.result as { structuredContent: unknown }).structuredContent, { echoed: { text: 'hi' }, orgId: DEFAULT_ORG_ID, idempotencyKey: 'abc-123' });
    });

    it('gives a call its own _meta key before the header\'s, and none when neither is sent', async () => {
      const keyOf = (answer: Awaited<ReturnType<typeof rpc>>): unknown => (answer.body?.result as { structuredContent: { idempotencyKey: unknown } }).structuredContent.idempotencyKey;
      const echo = (meta?: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' }, ...(meta ? { _meta: meta } : {}) } });
      const withHeader = { ...RPC_HEADERS, 'Idempotency-Key': 'from-header' };
      assert.equal(keyOf(await rpc(fg, 'lab', token, echo({ idempotencyKey: 'own-1' }), withHeader)), 'own-1');
      assert.equal(keyOf(await rpc(fg, 'lab', token, echo({ 'io.flowgate/idempotencyKey': 'own-2' }))), 'own-2', 'the name flowgate sends remotes is accepted too');
      assert.equal(keyOf(await rpc(fg, 'lab', token, echo())), null, 'no key is made up for a call without one');
    });

    it('gives each entry of a batch under one Idempotency-Key a key of its own, <key>:<index>', async () => {
      const entry = (id: number, meta?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: `t${id}` }, ...(meta ? { _meta: meta } : {}) } });
      const answer = await rpc(fg, 'lab', token, [entry(7), entry(8), entry(9, { idempotencyKey: 'mine' })], { ...RPC_HEADERS, 'Idempotency-Key': 'batch-1' });
      const replies = answer.body as unknown as { id: number; result: { structuredContent: { idempotencyKey: string } } }[];
      assert.deepEqual(replies.map((r) => [r.id, r.result.structuredContent.idempotencyKey]), [[7, 'batch-1:0'], [8, 'batch-1:1'], [9, 'mine']]);
      const single = await rpc(fg, 'lab', token, [entry(1)], { ...RPC_HEADERS, 'Idempotency-Key': 'batch-2' });
      assert.equal((single.body as unknown as { result: { structuredContent: { idempotencyKey: string } } }[])[0]?.result.structuredContent.idempotencyKey, 'batch-2');
    });

    it('refuses an idempotency key that could not travel as a header: 400 for the header, -32602 for _meta', async () => {
      const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } };
      const header = await rpc(fg, 'lab', token, call, { ...RPC_HEADERS, 'Idempotency-Key': 'x'.repeat(256) });
      assert.equal(header.status, 400);
      assert.equal(header.body?.error?.code, -32600);
      assert.match(header.body?.error?.message ?? '', /Idempotency-Key must be 1 to 255 visible ASCII characters/);
      for (const bad of ['line\r\nbreak', 42, '']) {
        const meta = await rpc(fg, 'lab', token, { ...call, params: { ...call.params, _meta: { idempotencyKey: bad } } });
        assert.equal(meta.body?.error?.code, -32602, JSON.stringify(bad));
        assert.match(meta.body?.error?.message ?? '', /params\._meta\.idempotencyKey must be/);
      }
    });
  });

  describe('/mcp: listServers, capabilities_discover, capability_details', () => {
    it('lists the servers with name, path, description, embedded and tools', async () => {
      const answer = await callTool(fg, 'mcp', token, 'listServers');
      const servers = (answer.body?.result as { structuredContent: { servers: { name: string; path: string; description: string; embedded: boolean; tools: string[] }[] } }).structuredContent.servers;
      const byName = new Map(servers.map((s) => [s.name, s]));
      assert.deepEqual(byName.get('web-search'), { name: 'web-search', path: '/web-search', description: byName.get('web-search')?.description, embedded: true, tools: ['search'] });
      assert.deepEqual(byName.get('mail')?.tools, ['mail_send_message', 'mail_list_folders', 'mail_list_messages', 'mail_read_message']);
      assert.equal(byName.get('lab')?.embedded, false);
      assert.ok(byName.has('mcp'));
      for (const s of servers) assert.deepEqual(Object.keys(s).sort(), ['description', 'embedded', 'name', 'path', 'tools']);
    });

    it('finds the best tools for a task in words, with confidence, server and matching connections', async () => {
      const created = await fg.admin<{ PCID: string }>('POST', '/api/v1/connections', {
        application: 'mail', name: 'support inbox', credentials: { from: 'support@example.org', smtp: { host: '127.0.0.1', port: 2525, security: 'none' } },
      });
      assert.equal(created.status, 201);
      const web = await callTool(fg, 'mcp', token, 'capabilities_discover', { task: 'search the web for recent news about Temporal' });
      const found = (web.body?.result as { structuredContent: { tools: { server: string; tool: string; confidence: number }[]; connections: unknown[] } }).structuredContent;
      assert.equal(found.tools[0]?.server, 'web-search');
      assert.equal(found.tools[0]?.tool, 'search');
      assert.ok((found.tools[0]?.confidence ?? 0) > 0 && (found.tools[0]?.confidence ?? 0) <= 1);

      const mail = await callTool(fg, 'mcp', token, 'capabilities_discover', { task: 'send an email with a file attached to a customer' });
      const mailFound = (mail.body?.result as { structuredContent: { tools: { server: string; tool: string; confidence: number; requiresConnection?: string }[]; connections: { PCID: string; application: string }[] } }).structuredContent;
      assert.equal(mailFound.tools[0]?.tool, 'mail_send_message');
      assert.equal(mailFound.tools[0]?.requiresConnection, 'mail');
      assert.ok(mailFound.connections.some((c) => c.PCID === created.body.PCID && c.application === 'mail'));
      const confidences = mailFound.tools.map((t) => t.confidence);
      assert.deepEqual(confidences, [...confidences].sort((a, b) => b - a));

      const read = await callTool(fg, 'mcp', token, 'capabilities_discover', { task: 'read the messages in my inbox', limit: 2 });
      const readFound = (read.body?.result as { structuredContent: { tools: { tool: string }[] } }).structuredContent.tools;
      assert.equal(readFound.length, 2);
      assert.ok(['mail_read_message', 'mail_list_messages'].includes(readFound[0]?.tool ?? ''));
    });

    it('gives full schemas of named tools and names the unknown ones', async () => {
      const answer = await callTool(fg, 'mcp', token, 'capability_details', { tools: ['web-search/search', 'mail_send_message', 'nope/none'] });
      const details = (answer.body?.result as { structuredContent: { tools: { server: string; name: string; inputSchema: { required: string[] } }[]; unknown: string[] } }).structuredContent;
      assert.deepEqual(details.tools.map((t) => `${t.server}/${t.name}`), ['web-search/search', 'mail/mail_send_message']);
      assert.deepEqual(details.tools[1]?.inputSchema.required, ['PCID', 'to', 'subject']);
      assert.deepEqual(details.unknown, ['nope/none']);
    });
  });

  describe('organization scoping', () => {
    it('keeps an organization\'s connections and custom servers from another organization', async () => {
      acme = await createOrg(fg, 'Acme');
      const acmeToken = (await runtimeToken(fg, acme.adminToken)).token;
      const mine = await fetch(`${fg.url}/api/v1/connections`, {
        method: 'POST', headers: { Authorization: `Bearer ${acme.adminToken}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ application: 'mail', name: 'acme mail', credentials: { from: 'ops@acme.test', smtp: { host: '127.0.0.1', port: 1, security: 'none' } } }),
      });
      const acmePcid = ((await mine.json()) as { PCID: string }).PCID;

      // Acme sees and calls its own custom server
      const acmeServers = await callTool(fg, 'mcp', acmeToken, 'listServers');
      const acmeNames = (acmeServers.body?.result as { structuredContent: { servers: { name: string }[] } }).structuredContent.servers.map((s) => s.name);
      assert.ok(acmeNames.includes('acme-crm'));
      assert.ok(!acmeNames.includes('lab'), 'the default org\'s custom server is not Acme\'s');
      assert.deepEqual((await callTool(fg, 'acme-crm', acmeToken, 'crm_find_customer', { company: 'X' })).body?.result?.structuredContent, { company: 'X', tier: 'gold' });

      // the default organization cannot see, list, call or discover it
      const defaultServers = await callTool(fg, 'mcp', token, 'listServers');
      assert.ok(!(defaultServers.body?.result as { structuredContent: { servers: { name: string }[] } }).structuredContent.servers.some((s) => s.name === 'acme-crm'));
      assert.equal((await rpc(fg, 'acme-crm', token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status, 404);
      assert.equal((await callTool(fg, 'acme-crm', token, 'crm_find_customer', { company: 'X' })).status, 404);
      const discovered = await callTool(fg, 'mcp', token, 'capabilities_discover', { task: 'find a customer account in the crm' });
      assert.ok(!(discovered.body?.result as { structuredContent: { tools: { server: string }[] } }).structuredContent.tools.some((t) => t.server === 'acme-crm'));
      assert.equal(((await callTool(fg, 'mcp', token, 'capability_details', { tools: ['acme-crm/crm_find_customer'] })).body?.result?.structuredContent as { unknown: string[] }).unknown.length, 1);

      // nor use, list or read its connection
      const useIt = await callTool(fg, 'mail', token, 'mail_list_folders', { PCID: acmePcid });
      assert.equal(useIt.body?.error?.code, -32000);
      assert.match(useIt.body?.error?.message ?? '', /no connection/);
      const listed = await fg.admin<{ connections: { PCID: string }[] }>('GET', '/api/v1/connections');
      assert.ok(!listed.body.connections.some((c) => c.PCID === acmePcid));
      assert.equal((await fg.admin('GET', `/api/v1/connections/${acmePcid}`)).status, 404);
      assert.equal((await fg.admin('DELETE', `/api/v1/connections/${acmePcid}`)).status, 404);
      const mailDiscovery = await callTool(fg, 'mcp', token, 'capabilities_discover', { task: 'send an email' });
      assert.ok(!(mailDiscovery.body?.result as { structuredContent: { connections: { PCID: string }[] } }).structuredContent.connections.some((c) => c.PCID === acmePcid));
    });
  });

  describe('connections', () => {
    it('stores credentials encrypted and never hands them back', async () => {
      const created = await fg.admin<Record<string, unknown>>('POST', '/api/v1/connections', {
        application: 'mail', name: 'ops', credentials: { from: 'ops@example.org', imap: { host: '127.0.0.1', port: 143, user: 'ops', password: 'hunter2-very-secret', security: 'none' } },
      });
      assert.equal(created.status, 201);
      assert.match(String(created.body.PCID), /^pc_/);
      assert.equal(created.body.id, created.body.PCID);
      assert.deepEqual(Object.keys(created.body).sort(), ['PCID', 'application', 'createdAt', 'id', 'name', 'status']);
      const got = await fg.admin<Record<string, unknown>>('GET', `/api/v1/connections/${String(created.body.PCID)}`);
      assert.doesNotMatch(JSON.stringify(got.body), /hunter2/);
      const file = readFileSync(path.join(fg.dataDir, 'registry.sqlite'));
      assert.ok(!file.includes('hunter2-very-secret'), 'the password is not in the database file in clear');
      assert.equal((await fg.admin('DELETE', `/api/v1/connections/${String(created.body.PCID)}`)).status, 204);
      assert.equal((await fg.admin('GET', `/api/v1/connections/${String(created.body.PCID)}`)).status, 404);
    });

    it('refuses an unknown application, bad credentials, and a missing admin token', async () => {
      const unknown = await fg.admin<{ error: string; message: string }>('POST', '/api/v1/connections', { application: 'fax', credentials: {} });
      assert.equal(unknown.status, 400);
      assert.equal(unknown.body.error, 'unknown_application');
      const bad = await fg.admin<{ error: string; message: string }>('POST', '/api/v1/connections', { application: 'mail', credentials: { from: 'x@y.z', smtp: { host: 'h', port: 'no', password: 'p4ss-secret' } } });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error, 'invalid_credentials');
      assert.doesNotMatch(bad.body.message, /p4ss-secret/);
      assert.equal((await fg.request('/api/v1/connections', { method: 'GET' })).status, 401);
    });

    it('answers -32000 for a missing PCID and for a connection without the settings the tool needs', async () => {
      const other = await fg.admin<{ PCID: string }>('POST', '/api/v1/connections', {
        application: 'mail', credentials: { from: 'a@example.org', smtp: { host: '127.0.0.1', port: 1, security: 'none' } },
      });
      const missing = await callTool(fg, 'mail', token, 'mail_list_folders', {});
      assert.equal(missing.body?.error?.code, -32000, 'PCID is required');
      const wrongKind = await callTool(fg, 'mail', token, 'mail_list_folders', { PCID: other.body.PCID });
      assert.equal(wrongKind.body?.error?.code, -32000, 'a mail connection without IMAP settings');
      assert.match(wrongKind.body?.error?.message ?? '', /no IMAP settings/);
    });
  });
});

describe('tool gateway without a search URL', () => {
  let fg: TestFlowgate;
  before(async () => {
    fg = await startToolFlowgate({ FLOWGATE_TOOLS_BASE_PATH: '/mcp-gw' });
  });
  after(async () => {
    await fg?.stop();
  });

  it('does not list web-search, and serves under the configured base path', async () => {
    const { token } = await runtimeToken(fg);
    const answer = await rpc(fg, 'mcp', token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'listServers', arguments: {} } }, RPC_HEADERS, '/mcp-gw');
    const names = (answer.body?.result as { structuredContent: { servers: { name: string }[] } }).structuredContent.servers.map((s) => s.name);
    assert.ok(!names.includes('web-search'));
    assert.ok(names.includes('mail'));
    assert.equal((await rpc(fg, 'web-search', token, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, RPC_HEADERS, '/mcp-gw')).status, 404);
    assert.equal((await fg.request('/tools/mcp', { method: 'POST' })).status, 404);
  });
});
