/**
 * API keys limited to a role (issue 34; docs/people-and-roles.md "API keys with a role"): a key
 * created with `role` triggers runs only when the role may operate them, and the runtime tokens
 * minted from it are held to the same role on the tool gateway; an unrestricted key keeps its reach.
 */
import assert from 'node:assert/strict';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';

const HELLO = { name: 'key-roles', steps: [{ name: 'Hi', type: 'template', format: 'plaintext', template: 'hi' }] };

describe('API keys limited to a role', () => {
  let fg: TestFlowgate;
  before(async () => {
    fg = await startTestFlowgate();
  });
  after(async () => {
    await fg?.stop();
  });

  const createKey = async (role?: string): Promise<{ id: string; key: string; role?: string }> => {
    const created = await fg.admin<{ id: string; key: string; role?: string }>('POST', '/api/v1/api-keys', { name: `key ${role ?? 'full'}`, ...(role ? { role } : {}) });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body;
  };
  const rpc = async (token: string, method: string, params: Record<string, unknown>) => {
    const answer = await fg.request('/tools/mcp', {
      method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    });
    assert.equal(answer.status, 200);
    return (await answer.json()) as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
  };
  const tokenOf = async (key: string): Promise<string> => {
    const minted = await fg.request('/auth/token', { method: 'POST', headers: { 'X-API-KEY': key } });
    assert.equal(minted.status, 200);
    return ((await minted.json()) as { token: string }).token;
  };

  it('a viewer key cannot start a run (403 naming the permission); an operator key and an unrestricted one can', async () => {
    const p = await publishWorkflow(fg, HELLO);
    const viewer = await createKey('viewer');
    assert.equal(viewer.role, 'viewer');
    const refused = await trigger(fg, { ...p, apiKey: viewer.key }, {});
    assert.equal(refused.status, 403);
    assert.deepEqual(await refused.json(), { error: 'permission_denied', message: 'the viewer role lacks the permission runs.operate' });
    const operator = await createKey('operator');
    assert.equal((await trigger(fg, { ...p, apiKey: operator.key }, {})).status, 200);
    assert.equal((await trigger(fg, p, {})).status, 200, 'the unrestricted key works as before');
    const listed = await fg.admin<{ apiKeys: { id: string; role: string | null }[] }>('GET', '/api/v1/api-keys');
    assert.equal(listed.body.apiKeys.find((k) => k.id === viewer.id)?.role, 'viewer');
    assert.equal(listed.body.apiKeys.find((k) => k.id === p.apiKeyId)?.role, null);
  });

  it('refuses an unknown role with a 400', async () => {
    const bad = await fg.admin<{ error: string; message: string }>('POST', '/api/v1/api-keys', { name: 'x', role: 'owner' });
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.match(bad.body.message, /role/);
  });

  it('a runtime token of a viewer key lists tools but is refused an action naming the permission; an unrestricted key\'s is not', async () => {
    const viewerToken = await tokenOf((await createKey('viewer')).key);
    assert.ok((await rpc(viewerToken, 'tools/list', {})).result, 'a viewer may list');
    const refused = await rpc(viewerToken, 'tasks/cancel', { taskId: 'no-such-task' });
    assert.deepEqual(refused.error, {
      code: -32003, message: 'permission_denied: the viewer role lacks the permission runs.operate', data: { permission: 'runs.operate', role: 'viewer' },
    });
    const fullToken = await tokenOf((await createKey()).key);
    const allowed = await rpc(fullToken, 'tasks/cancel', { taskId: 'no-such-task' });
    assert.notEqual(allowed.error?.code, -32003, JSON.stringify(allowed));
  });
});
