import assert from 'node:assert/strict';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';

const waiting = {
  name: 'waits-for-approval',
  steps: [
    { name: 'Prepare', type: 'template', template: 'x' },
    { name: 'Sign-off', type: 'approval', approvers: ['ann@example.com'], timeout: '5m' },
  ],
};

describe('management API: listing, deleting and cancelling', () => {
  let fg: TestFlowgate;
  let other: string;
  before(async () => {
    fg = await startTestFlowgate();
    const org = await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: `other-${Date.now()}` });
    other = org.body.adminToken;
  });
  after(() => fg?.stop());

  const asOther = async (method: string, pathname: string) => (await fg.request(pathname, { method, headers: { Authorization: `Bearer ${other}` } })).status;

  it('lists and deletes workflows, triggers and API keys of the token\'s organization only', async () => {
    const p = await publishWorkflow(fg, waiting);
    const workflows = await fg.admin<{ workflows: { id: string; publishedVersion: number }[] }>('GET', '/api/v1/workflows');
    assert.equal(workflows.body.workflows.find((w) => w.id === p.workflowId)?.publishedVersion, 1);
    const triggers = await fg.admin<{ triggers: { id: string }[] }>('GET', `/api/v1/triggers?workflowId=${p.workflowId}`);
    assert.deepEqual(triggers.body.triggers.map((t) => t.id), [p.triggerId]);
    const keys = await fg.admin<{ apiKeys: { id: string; revokedAt: string | null }[] }>('GET', '/api/v1/api-keys');
    assert.equal(keys.body.apiKeys.find((k) => k.id === p.apiKeyId)?.revokedAt, null);
    assert.doesNotMatch(JSON.stringify(keys.body), /fgk_/, 'never a key or its hash');

    // Another organization sees none of them and cannot delete them.
    const otherList = await fg.request('/api/v1/workflows', { headers: { Authorization: `Bearer ${other}` } });
    assert.deepEqual(await otherList.json(), { workflows: [] });
    assert.equal(await asOther('DELETE', `/api/v1/triggers/${p.triggerId}`), 404);
    assert.equal(await asOther('DELETE', `/api/v1/workflows/${p.workflowId}`), 404);

    assert.equal((await fg.admin('DELETE', `/api/v1/triggers/${p.triggerId}`)).status, 204);
    assert.equal((await fg.admin('DELETE', `/api/v1/triggers/${p.triggerId}`)).status, 404);
    assert.equal((await trigger(fg, p, {})).status, 404, 'a deleted trigger starts nothing');

    const second = await fg.admin<{ id: string }>('POST', '/api/v1/triggers', { workflowId: p.workflowId });
    assert.equal((await fg.admin('DELETE', `/api/v1/workflows/${p.workflowId}`)).status, 204);
    assert.equal((await fg.admin('GET', `/api/v1/workflows/${p.workflowId}`)).status, 404);
    const after = await fg.admin<{ triggers: { id: string }[] }>('GET', '/api/v1/triggers');
    assert.ok(!after.body.triggers.some((t) => t.id === second.body.id), 'its triggers went with it');
  });

  it('shows and cancels a run: the run ends FAILED with "the run was cancelled" and reasonCode CANCELLED; another organization gets 404', async () => {
    const p = await publishWorkflow(fg, waiting);
    const runId = (await trigger(fg, p, {})).headers.get('X-Pf-Run-Id') ?? '';
    let status = '';
    for (let i = 0; i < 40 && status !== 'PAUSED'; i++) {
      status = (await fg.admin<{ status: string }>('GET', `/api/v1/runs/${runId}`)).body.status;
      if (status !== 'PAUSED') await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal(status, 'PAUSED');
    assert.equal(await asOther('GET', `/api/v1/runs/${runId}`), 404);
    assert.equal(await asOther('POST', `/api/v1/runs/${runId}/cancel`), 404);

    const cancel = await fg.admin<{ cancelRequested: boolean }>('POST', `/api/v1/runs/${runId}/cancel`);
    assert.equal(cancel.status, 202);
    let final: { status: string; error?: string; reasonCode?: string } = { status: '' };
    for (let i = 0; i < 40; i++) {
      final = (await fg.admin<{ status: string; error?: string; reasonCode?: string }>('GET', `/api/v1/runs/${runId}`)).body;
      if (final.status === 'FAILED') break;
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal(final.status, 'FAILED');
    assert.match(final.error ?? '', /cancel/i);
    assert.equal(final.reasonCode, 'CANCELLED', 'the contract\'s FAILED, with why');
    assert.equal((await fg.admin('POST', `/api/v1/runs/${runId}/cancel`)).status, 409, 'an ended run cannot be cancelled');
    const results = await fg.admin<{ status: string }>('GET', `/api/v1/runs/${runId}/results`);
    assert.equal(results.body.status, 'FAILED');
  });
});
