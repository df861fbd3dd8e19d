/**
 * The MCP endpoint apart from HTTP and Temporal: the method table, the error mapping and batches,
 * against a dispatcher that answers from memory (the gateway tests run the same through HTTP).
 */
import assert from 'node:assert/strict';
import { LazyAbortController } from '../../src/common/lazy-abort';
import { silentLogger } from '../../src/observability/logger';
import { ToolCallError, type ToolResult, type ToolServer } from '../../src/tools/server';
import type { ToolDispatcher } from '../../src/tools/dispatcher';
import { McpEndpoint, type McpCall } from '../../src/tools/mcp/endpoint';

const server: ToolServer = {
  name: 'echo', description: 'Echoes its arguments.', embedded: true,
  listTools: () => Promise.reject(new Error('listed through the dispatcher only')),
  callTool: () => Promise.reject(new Error('called through the dispatcher only')),
};

/** What the fake dispatcher was asked: tool name and idempotency key per call. */
interface Seen { tool: string; key: string | undefined }

function endpointWith(seen: Seen[]): McpEndpoint {
  const tools: Pick<ToolDispatcher, 'list' | 'call'> = {
    list: (_orgId, path) => Promise.resolve(path === server.name ? [{ name: 'echo', description: 'echo', inputSchema: { type: 'object', properties: {}, required: [] } }] : []),
    call(_orgId, _target, tool, args, options = {}): Promise<ToolResult> {
      seen.push({ tool, key: options.idempotencyKey });
      if (tool === 'missing') return Promise.reject(new ToolCallError('UNKNOWN_TOOL', 'no tool missing'));
      if (tool === 'slow') return Promise.reject(new ToolCallError('TIMEOUT', 'too slow'));
      if (tool === 'broken') return Promise.reject(new Error('a secret detail'));
      return Promise.resolve({ isError: false, value: { ...args } });
    },
  };
  return new McpEndpoint({ tools, log: silentLogger });
}

const call: McpCall = {
  server, principal: { orgId: 'org', keyId: 'key' }, caller: new LazyAbortController(), requestId: 'req-1', forwardHeaders: () => ({}),
};

describe('the MCP endpoint (method table)', () => {
  it('answers the methods of its table and -32601 for any other, notifications never', async () => {
    const endpoint = endpointWith([]);
    assert.deepEqual(await endpoint.answer({ jsonrpc: '2.0', id: 1, method: 'ping' }, call), { jsonrpc: '2.0', id: 1, result: {} });
    const init = await endpoint.answer({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-06-18' } }, call);
    assert.deepEqual(init && 'result' in init ? init.result : undefined, {
      protocolVersion: '2025-06-18', capabilities: { tools: { listChanged: false } }, serverInfo: { name: 'flowgate/echo', version: '0.1.0' }, instructions: 'Echoes its arguments.',
    });
    assert.deepEqual(await endpoint.answer({ jsonrpc: '2.0', id: 3, method: 'resources/list' }, call),
      { jsonrpc: '2.0', id: 3, error: { code: -32601, message: 'method not found: resources/list' } });
    // without tasks, the task methods are not in the table
    assert.deepEqual(await endpoint.answer({ jsonrpc: '2.0', id: 4, method: 'tasks/get', params: { taskId: 't' } }, call),
      { jsonrpc: '2.0', id: 4, error: { code: -32601, message: 'method not found: tasks/get' } });
    assert.equal(await endpoint.answer({ jsonrpc: '2.0', method: 'notifications/initialized' }, call), undefined);
    assert.equal(await endpoint.answer({ jsonrpc: '2.0', method: 'no/such/method' }, call), undefined);
    assert.deepEqual(await endpoint.answer({ jsonrpc: '1.0', id: 'x', method: 'ping' }, call), {
      jsonrpc: '2.0', id: 'x', error: { code: -32600, message: 'not a JSON-RPC 2.0 request: needs jsonrpc "2.0", a method and an integer or string id' },
    });
  });

  it('maps what a call throws to its JSON-RPC error, and hides an unexpected one behind the request id', async () => {
    const endpoint = endpointWith([]);
    const code = async (tool: string): Promise<unknown> => {
      const answer = await endpoint.answer({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } }, call);
      return answer && 'error' in answer ? answer.error : answer?.result;
    };
    assert.deepEqual(await code('missing'), { code: -32602, message: 'no tool missing' });
    assert.deepEqual(await code('slow'), { code: -32000, message: 'too slow' });
    assert.deepEqual(await code('broken'), { code: -32603, message: 'internal error (request req-1)' });
    assert.deepEqual(await code('echo'), { content: [{ type: 'text', text: '{}' }], structuredContent: {}, isError: false });
    const listed = await endpoint.answer({ jsonrpc: '2.0', id: 6, method: 'tools/list' }, call);
    assert.deepEqual(listed && 'result' in listed ? listed.result : undefined, { tools: [{ name: 'echo', description: 'echo', inputSchema: { type: 'object', properties: {}, required: [] } }] });
    const invalid = await endpoint.answer({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { arguments: {} } }, call);
    assert.equal(invalid && 'error' in invalid ? invalid.error.code : undefined, -32602);
  });

  it('answers a batch in order, each entry under its own idempotency key, and refuses the entries past the rate-limit grant', async () => {
    const seen: Seen[] = [];
    const endpoint = endpointWith(seen);
    const entries = [0, 1, 2, 3].map((i) => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { i } } }));
    const batch = await endpoint.answerBatch([...entries, { jsonrpc: '2.0', method: 'notifications/cancelled' }], call, 'k', () => Promise.resolve({ granted: 2, retryAfterSeconds: 7 }));
    assert.equal(batch.retryAfterSeconds, 7);
    assert.deepEqual(batch.answers.map((a) => (a && 'result' in a ? a.result.structuredContent : a?.error.code)), [{ i: 0 }, { i: 1 }, { i: 2 }, -32000, -32000]);
    assert.deepEqual(seen.map((s) => s.key).sort(), ['k:0', 'k:1', 'k:2']);
    const alone = await endpoint.answerBatch([entries[0]], call, 'k', undefined);
    assert.equal(alone.retryAfterSeconds, undefined);
    assert.equal(seen.at(-1)?.key, 'k');
  });
});
