/**
 * Which protocol era a message speaks (src/tools/mcp/era.ts), without a gateway: the body decides,
 * a 2025 request is never refused for its headers, and a 2026 request is refused, with the
 * specification's code, for a malformed envelope, a version flowgate does not speak, or standard
 * headers missing or disagreeing with the body (spaces around a value allowed, Base64 form decoded).
 */
import assert from 'node:assert/strict';
import { classify, type Era } from '../../src/tools/mcp/era';

const envelope = (version = '2026-07-28', extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  _meta: { 'io.modelcontextprotocol/protocolVersion': version, 'io.modelcontextprotocol/clientCapabilities': {}, ...extra },
});
const headers = (method: string, name?: string) => ({ protocolVersion: '2026-07-28', method, ...(name === undefined ? {} : { name }) });
const code = (era: Era): number | undefined => (era.era === 'refused' ? era.error.code : undefined);

describe('MCP protocol era of a message', () => {
  it('keeps a message without an envelope in the 2025 era, whatever 2025 headers it has', () => {
    assert.equal(classify('tools/list', {}, true, undefined).era, 'legacy');
    assert.equal(classify('tools/list', {}, true, { protocolVersion: '2025-11-25', method: 'other' }).era, 'legacy');
    assert.equal(classify('initialize', { protocolVersion: '2025-11-25' }, true, undefined).era, 'legacy');
    assert.equal(classify('tools/list', envelope('2025-06-18'), true, undefined).era, 'legacy', 'an envelope naming a 2025 version');
  });

  it('takes a 2026 request with its envelope and headers; notifications need no headers', () => {
    const era = classify('tools/call', { name: 'search', ...envelope() }, true, headers('tools/call', ' search\t'));
    assert.equal(era.era, 'modern');
    assert.equal(classify('tools/call', { name: 'ü', ...envelope() }, true, headers('tools/call', `=?base64?${Buffer.from('ü').toString('base64')}?=`)).era, 'modern');
    assert.equal(classify('notifications/cancelled', envelope(), false, undefined).era, 'modern');
  });

  it('refuses a 2026 request as the specification says', () => {
    const unsupported = classify('tools/list', envelope('2027-01-01'), true, { ...headers('tools/list'), protocolVersion: '2027-01-01' });
    assert.equal(code(unsupported), -32022);
    assert.deepEqual(unsupported.era === 'refused' && unsupported.error.data, { supported: ['2026-07-28'], requested: '2027-01-01' });
    assert.equal(code(classify('tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } }, true, headers('tools/list'))), -32602);
    assert.equal(code(classify('tools/list', {}, true, headers('tools/list'))), -32602, 'a 2026 header without an envelope');
    assert.equal(code(classify('tools/list', envelope(), true, { method: 'tools/list' })), -32020, 'no MCP-Protocol-Version');
    assert.equal(code(classify('tools/list', envelope(), true, { ...headers('tools/list'), protocolVersion: '2025-11-25' })), -32020);
    assert.equal(code(classify('tools/list', envelope(), true, { protocolVersion: '2026-07-28' })), -32020, 'no Mcp-Method');
    assert.equal(code(classify('tools/list', envelope(), true, headers('Tools/List'))), -32020, 'method values are case-sensitive');
    assert.equal(code(classify('tools/call', { name: 'a', ...envelope() }, true, headers('tools/call'))), -32020, 'no Mcp-Name');
    assert.equal(code(classify('tasks/get', { taskId: 't1', ...envelope() }, true, headers('tasks/get', 't2'))), -32020);
    assert.equal(code(classify('tools/call', { name: 'a', ...envelope() }, true, headers('tools/call', '=?base64?***?='))), -32020);
    assert.equal(code(classify('initialize', {}, true, headers('initialize'))), -32020, 'initialize with a 2026 header');
    for (const refused of [classify('tools/list', envelope('2027-01-01'), true, undefined)]) assert.equal(refused.era === 'refused' && refused.status, 400);
  });
});
