/**
 * The console's workflow, trigger, schedule and API-key actions over real HTTP (docs/console.md
 * "Workflows"): another organization's workflow, trigger and key answer 404 and are left as they
 * were; a POST without the CSRF token is a 403 that changes nothing; a draft is refused with the
 * same problems as the API's, and every action is in the audit trail under the API's action name.
 */
import assert from 'node:assert/strict';
import { consoleHttp } from '../support/console-http';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';


describe('console workflows over HTTP: organizations, CSRF, validation, audit', () => {
  let fg: TestFlowgate;
  let p: Published;
  let otherToken: string;
  let scheduledId: string;

  const { signIn, get, post } = consoleHttp(() => fg, '/console/workflows');
  const draftOf = async (): Promise<unknown> => (await fg.admin<{ draft: unknown }>('GET', `/api/v1/workflows/${p.workflowId}`)).body.draft;

  before(async () => {
    fg = await startTestFlowgate();
    p = await publishWorkflow(fg, { name: 'console-wf-http', steps: [{ name: 'Only', type: 'template', template: 'hi' }] });
    const scheduled = await fg.admin<{ id: string }>('POST', '/api/v1/triggers', { workflowId: p.workflowId, schedule: { interval: { every: '1h' } } });
    assert.equal(scheduled.status, 201);
    scheduledId = scheduled.body.id;
    const org = await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: 'other-wf' });
    otherToken = org.body.adminToken;
  });
  after(async () => {
    await fg?.stop();
  });

  it('answers 404 for another organization\'s workflow, trigger, schedule and key, and changes nothing', async () => {
    const other = await signIn(otherToken);
    const draft = JSON.stringify({ name: 'hijacked', steps: [{ name: 'x', type: 'template', template: 'x' }] });
    for (const pathname of [`/console/workflows/${p.workflowId}`, `/console/workflows/${p.workflowId}/draft`, `/console/workflows/${p.workflowId}/diff`]) {
      assert.equal((await get(other, pathname)).status, 404, pathname);
    }
    assert.equal((await post(other, `/console/workflows/${p.workflowId}/draft`, { definition: draft })).status, 404);
    assert.equal((await post(other, `/console/workflows/${p.workflowId}/triggers`, { kind: 'http' })).status, 404);
    assert.equal((await post(other, `/console/triggers/${scheduledId}/schedule/pause`, {})).status, 404);
    assert.equal((await post(other, `/console/triggers/${p.triggerId}/delete`, {})).status, 404);
    assert.equal((await post(other, `/console/workflows/${p.workflowId}/delete`, {})).status, 404);
    const key = await fg.admin<{ id: string }>('GET', '/api/v1/api-keys') as unknown as { body: { apiKeys: { id: string }[] } };
    const keyId = key.body.apiKeys[0]?.id ?? '';
    assert.equal((await post(other, `/console/api-keys/${keyId}/revoke`, {})).status, 404);
    assert.ok(!(await (await get(other, '/console/api-keys')).text()).includes(keyId), 'another organization\'s keys are not listed');

    assert.equal((await draftOf() as { name: string }).name, 'console-wf-http');
    assert.equal((await fg.admin('GET', `/api/v1/triggers/${p.triggerId}`)).status, 200);
    const state = await fg.admin<{ schedule: { state: { paused: boolean } } }>('GET', `/api/v1/triggers/${scheduledId}`);
    assert.equal(state.body.schedule.state.paused, false);
    const keys = await fg.admin<{ apiKeys: { id: string; revokedAt: string | null }[] }>('GET', '/api/v1/api-keys');
    assert.equal(keys.body.apiKeys.find((k) => k.id === keyId)?.revokedAt, null);
  });

  it('refuses every POST without the CSRF token (403) and changes nothing', async () => {
    const s = await signIn(fg.adminToken);
    const noToken = { cookie: s.cookie };
    const draft = JSON.stringify({ name: 'forged', steps: [{ name: 'x', type: 'template', template: 'x' }] });
    const attempts: [string, Record<string, string>][] = [
      ['/console/workflows', { definition: draft }],
      [`/console/workflows/${p.workflowId}/draft`, { definition: draft }],
      [`/console/workflows/${p.workflowId}/triggers`, { kind: 'http' }],
      [`/console/triggers/${scheduledId}/schedule/pause`, {}],
      [`/console/triggers/${p.triggerId}/delete`, {}],
      [`/console/workflows/${p.workflowId}/delete`, {}],
      ['/console/api-keys', { name: 'forged' }],
    ];
    for (const [pathname, form] of attempts) assert.equal((await post(noToken, pathname, form)).status, 403, pathname);
    assert.equal((await post({ cookie: s.cookie, csrf: 'x'.repeat(43) }, `/console/workflows/${p.workflowId}/draft`, { definition: draft })).status, 403, 'a wrong token');
    assert.equal((await draftOf() as { name: string }).name, 'console-wf-http');
    const workflows = await fg.admin<{ workflows: { name: string }[] }>('GET', '/api/v1/workflows');
    assert.ok(!workflows.body.workflows.some((w) => w.name === 'forged'));
    assert.equal((await fg.admin<{ triggers: unknown[] }>('GET', `/api/v1/triggers?workflowId=${p.workflowId}`)).body.triggers.length, 2);
    const keys = await fg.admin<{ apiKeys: { name: string | null }[] }>('GET', '/api/v1/api-keys');
    assert.ok(!keys.body.apiKeys.some((k) => k.name === 'forged'));
  });

  it('refuses a draft with the API\'s problems, placed by path and line; saves a valid one; audits both', async () => {
    const s = await signIn(fg.adminToken);
    const invalid = JSON.stringify({ name: 'console-wf-http', steps: [{ name: 'Only', type: 'template', template: 'hi' }, { name: 'Fetch', type: 'http', url: 42 }] }, null, 2);
    const api = await fg.admin<{ message: string }>('PUT', `/api/v1/workflows/${p.workflowId}`, JSON.parse(invalid));
    assert.equal(api.status, 400);
    assert.match(api.body.message, /steps\.1\.url: /);
    const refused = await post(s, `/console/workflows/${p.workflowId}/draft`, { definition: invalid });
    assert.equal(refused.status, 400);
    const page = await refused.text();
    const line = invalid.split('\n').findIndex((l) => l.includes('"url": 42')) + 1;
    assert.ok(page.includes(`<a href="#line-${line}"><code>steps[1].url</code></a> (line ${line})`), 'the problem, its path and its line');
    const apiMessage = api.body.message.replace(/^steps\.1\.url: /, '');
    assert.ok(page.includes(apiMessage.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')), 'the API\'s own message');
    const syntax = await post(s, `/console/workflows/${p.workflowId}/draft`, { definition: '{\n  "name": "x",\n  "steps": [\n}' });
    assert.equal(syntax.status, 400);
    assert.match(await syntax.text(), /<code>JSON<\/code><\/a> \(line 4\): not valid JSON/);

    const valid = JSON.stringify({ name: 'console-wf-http', steps: [{ name: 'Only', type: 'template', template: 'changed' }] });
    const saved = await post(s, `/console/workflows/${p.workflowId}/draft`, { definition: valid });
    assert.equal(saved.status, 303);
    assert.equal(saved.headers.get('location'), `/console/workflows/${p.workflowId}?done=saved`);
    assert.equal((await draftOf() as { steps: { template: string }[] }).steps[0]?.template, 'changed');

    interface Rec { action: string; outcome: string; status: number; target: { type: string; id: string | null } | null; details: Record<string, unknown> }
    const audit = await fg.admin<{ records: Rec[] }>('GET', '/api/v1/audit?limit=50');
    const updates = audit.body.records.filter((r) => r.details.via === 'console' && r.action === 'workflow.updated' && r.target?.id === p.workflowId).reverse();
    assert.deepEqual(updates.slice(-3).map((r) => [r.outcome, r.status]), [['refused', 400], ['refused', 400], ['success', 303]]);
    const refusedAtCsrf = audit.body.records.filter((r) => r.details.via === 'console' && r.status === 403 && r.action === 'api_key.created');
    assert.ok(refusedAtCsrf.length >= 1, 'a refused (no CSRF) key creation is recorded');
  });
  it('deletes a workflow with its triggers and schedules, as DELETE /api/v1/workflows/{id}, audited', async () => {
    const s = await signIn(fg.adminToken);
    const doomed = await publishWorkflow(fg, { name: 'console-doomed', steps: [{ name: 'Only', type: 'template', template: 'bye' }] });
    const scheduled = await fg.admin<{ id: string }>('POST', '/api/v1/triggers', { workflowId: doomed.workflowId, schedule: { interval: { every: '1h' } } });
    assert.equal(scheduled.status, 201);
    assert.match(await (await get(s, `/console/workflows/${doomed.workflowId}`)).text(), /Delete the workflow/);
    const deleted = await post(s, `/console/workflows/${doomed.workflowId}/delete`, {});
    assert.equal(deleted.status, 303);
    assert.equal(deleted.headers.get('location'), '/console/workflows?done=deleted');
    assert.match(await (await get(s, '/console/workflows?done=deleted')).text(), /The workflow was deleted/);
    assert.equal((await fg.admin('GET', `/api/v1/workflows/${doomed.workflowId}`)).status, 404);
    assert.equal((await fg.admin('GET', `/api/v1/triggers/${scheduled.body.id}`)).status, 404);
    assert.equal((await post(s, `/console/workflows/${doomed.workflowId}/delete`, {})).status, 404, 'gone');
    type Records = { records: { action: string; outcome: string; target: { id: string | null } | null }[] };
    const trail = (await fg.admin<Records>('GET', '/api/v1/audit?action=workflow.deleted')).body.records.filter((r) => r.target?.id === doomed.workflowId);
    assert.deepEqual(trail.map((r) => r.outcome).sort(), ['refused', 'success']);
  });
});
