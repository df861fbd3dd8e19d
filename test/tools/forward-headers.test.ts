import assert from 'node:assert/strict';
import { forwardableHeaders } from '../../src/tools/forward-headers';

describe('forwardableHeaders (contract 4.7)', () => {
  it('forwards X-Pf-Forward-<name> as <name> lowercased, and nothing else', () => {
    assert.deepEqual(forwardableHeaders({
      'x-pf-forward-x-tenant': 'blue', 'x-pf-forward-Trace-Id': 'abc', authorization: 'Bearer caller', 'x-tenant': 'direct', cookie: 'a=b',
      'x-api-key': 'k', 'x-pf-run-id': 'r',
    }), { 'x-tenant': 'blue', 'trace-id': 'abc' });
  });

  it('never forwards a credential, cookie or transport header, even through the prefix', () => {
    for (const name of ['authorization', 'Authorization', 'proxy-authorization', 'cookie', 'host', 'content-length', 'transfer-encoding', 'connection', 'mcp-session-id', 'x-api-key']) {
      assert.deepEqual(forwardableHeaders({ [`x-pf-forward-${name}`]: 'v' }), {}, name);
    }
    assert.deepEqual(forwardableHeaders({ 'x-pf-forward-x-pf-forward-x': 'nested', 'x-pf-forward-': 'empty' }), {});
  });

  it('never forwards an MCP protocol header: Mcp-Method, Mcp-Name, the Mcp-Param-* headers a 2026 call mirrors its arguments into', () => {
    for (const name of ['mcp-method', 'Mcp-Name', 'mcp-protocol-version', 'Mcp-Param-Region', 'mcp-param-tenant-id']) {
      assert.deepEqual(forwardableHeaders({ [`x-pf-forward-${name}`]: 'v' }), {}, name);
    }
    assert.deepEqual(forwardableHeaders({ 'x-pf-forward-mcp-parameters': 'v' }), { 'mcp-parameters': 'v' }, 'a name that only begins like one');
  });

  it('joins repeated headers and drops values with control characters', () => {
    assert.deepEqual(forwardableHeaders({ 'x-pf-forward-a': ['1', '2'], 'x-pf-forward-b': 'bad\r\nx-injected: 1' }), { a: '1, 2' });
  });
});
