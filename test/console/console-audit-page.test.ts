/**
 * The console's audit page (docs/console.md "Audit"): a signed-in session sees its organization's
 * audit trail newest first, filtered and paged, and never another organization's records.
 */
import assert from 'node:assert/strict';
import { startTestFlowgate, type TestFlowgate } from '../support/flowgate';

describe('console: the audit page', () => {
  let fg: TestFlowgate;
  let otherToken: string;

  const signIn = async (token: string): Promise<string> => {
    const response = await fg.request('/console/sign-in', {
      method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: fg.url }, body: new URLSearchParams({ token }),
    });
    assert.equal(response.status, 303);
    return (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  };
  const auditPage = async (cookie: string, query = ''): Promise<{ status: number; text: string }> => {
    const response = await fg.request(`/console/audit${query}`, { headers: { Cookie: cookie }, redirect: 'manual' });
    return { status: response.status, text: await response.text() };
  };

  before(async () => {
    fg = await startTestFlowgate();
    const org = await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: 'audit-page-other' });
    assert.equal(org.status, 201);
    otherToken = org.body.adminToken;
  });
  after(async () => {
    await fg?.stop();
  });

  it('lists the organization\'s records newest first, filters and pages them, and shows none of another organization\'s', async () => {
    const created = await fg.admin<{ id: string; key: string }>('POST', '/api/v1/api-keys', { name: 'audit-page-key' });
    assert.equal(created.status, 201);
    const revoked = await fg.admin('DELETE', `/api/v1/api-keys/${created.body.id}`);
    assert.ok(revoked.status === 204 || revoked.status === 200, String(revoked.status));
    const cookie = await signIn(fg.adminToken);

    const all = await auditPage(cookie, '?action=api_key.*');
    assert.equal(all.status, 200);
    assert.match(all.text, /aria-current="page"[^>]*>Audit</);
    const table = all.text.slice(all.text.indexOf('<tbody>'));
    const revokedAt = table.indexOf('api_key.revoked');
    const createdAt = table.indexOf('api_key.created');
    assert.ok(revokedAt > 0 && createdAt > revokedAt, 'newest first: the revocation above the creation');
    assert.ok(all.text.includes(`api_key:${created.body.id}`));
    assert.ok(!all.text.includes(created.body.key), 'the key itself is nowhere');

    const onePage = await auditPage(cookie, '?action=api_key.*&outcome=success&cursor=');
    assert.equal(onePage.status, 200, 'an empty field of the filter form is no filter');
    const refused = await auditPage(cookie, '?outcome=refused&action=api_key.*');
    assert.ok(!refused.text.slice(refused.text.lastIndexOf('</form>')).includes('api_key.created'));

    const bad = await auditPage(cookie, '?action=NOT%20AN%20ACTION');
    assert.equal(bad.status, 400);
    assert.match(bad.text, /role="alert"/);

    const theirs = await auditPage(await signIn(otherToken), '?action=api_key.*');
    assert.equal(theirs.status, 200);
    assert.ok(!theirs.text.includes(created.body.id), 'another organization sees none of it');

    const signedOut = await fg.request('/console/audit', { redirect: 'manual' });
    assert.equal(signedOut.status, 303, 'no session: to the sign-in page');
  });
});
