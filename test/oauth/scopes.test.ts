/** OAuth scopes of the tool gateway (src/oauth/scopes.ts): parsing, and what a read-only grant lets through. */
import assert from 'node:assert/strict';
import { beyondScope, parseScope, scopeAllows } from '../../src/oauth/scopes';

describe('OAuth scopes', () => {
  it('normalizes a requested scope and names the unknown ones', () => {
    assert.deepEqual(parseScope(undefined), { ok: true, scope: null });
    assert.deepEqual(parseScope('  '), { ok: true, scope: null });
    assert.deepEqual(parseScope('tools:call  tools:read tools:call'), { ok: true, scope: 'tools:read tools:call' });
    assert.deepEqual(parseScope('tools:read openid openid'), { ok: false, unknown: ['openid'] });
  });

  it('lets a read-only grant read and nothing more; no scope or tools:call reach everything', () => {
    assert.equal(scopeAllows('tools:read', 'tools/list', 'mcp', {}), true);
    assert.equal(scopeAllows('tools:read', 'tasks/get', 'workflows', {}), true);
    assert.equal(scopeAllows('tools:read', 'tools/call', 'mcp', { name: 'listServers' }), true);
    assert.equal(scopeAllows('tools:read', 'tools/call', 'agent-management', { name: 'agent_list' }), true);
    assert.equal(scopeAllows('tools:read', 'tools/call', 'agent-management', { name: 'agent_create' }), false);
    assert.equal(scopeAllows('tools:read', 'tools/call', 'mail', { name: 'send_mail' }), false);
    assert.equal(scopeAllows('tools:read', 'tasks/cancel', 'workflows', {}), false);
    assert.equal(scopeAllows('tools:read', 'tasks/update', 'workflows', {}), false);
    for (const scope of [null, undefined, 'tools:call', 'tools:read tools:call']) assert.equal(scopeAllows(scope, 'tools/call', 'mail', { name: 'send_mail' }), true);
  });

  it('finds the first message of a request beyond the scope, a client\'s response counting as tasks/update', () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const call = { jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'x' } };
    assert.equal(beyondScope('tools:read', list, 'mail'), undefined);
    assert.deepEqual(beyondScope('tools:read', [list, call], 'mail'), { id: 'c', method: 'tools/call' });
    assert.deepEqual(beyondScope('tools:read', { jsonrpc: '2.0', id: 'elicit-1', result: { action: 'accept' } }, 'workflows'), { id: 'elicit-1', method: 'tasks/update' });
    assert.equal(beyondScope(null, call, 'mail'), undefined);
  });
});
