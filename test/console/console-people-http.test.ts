/**
 * The console's People page over real HTTP (docs/console.md "People"): adding a member, changing
 * a role and removing one are the management API's changes, audited under its action names; a
 * POST without the CSRF token changes nothing; another organization's members answer 404; a
 * member whose role lacks members.manage is refused the page (403 naming the permission). An API
 * key an admin member creates in their session is theirs: removing them in the console revokes it,
 * and the page says when no admin token is left (docs/people-and-roles.md "Offboarding").
 */
import assert from 'node:assert/strict';
import { ConsoleSessions } from '../../src/console/sessions';
import { hashSecret } from '../../src/crypto/secrets';
import { consoleHttp, type ConsoleSession } from '../support/console-http';
import { asAdminOf, startTestFlowgate, type TestFlowgate } from '../support/flowgate';


interface Member {
  id: string;
  email: string;
  name: string | null;
  role: string;
}

describe('console People page over HTTP: members, CSRF, organizations, roles, audit', () => {
  let fg: TestFlowgate;
  let otherToken: string;

  const { signIn, get, post } = consoleHttp(() => fg, '/console/people');
  const members = async (): Promise<Member[]> => (await fg.admin<{ members: Member[] }>('GET', '/api/v1/members')).body.members;

  before(async () => {
    fg = await startTestFlowgate();
    const org = await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: 'other-people' });
    otherToken = org.body.adminToken;
  });
  after(async () => {
    await fg?.stop();
  });

  it('adds a member, changes their role and removes them, as the API would, each audited; refuses bad input, duplicates and a missing CSRF token', async () => {
    const admin = await signIn(fg.adminToken);
    const empty = await (await get(admin, '/console/people')).text();
    assert.match(empty, /<h1>People<\/h1>/);
    assert.match(empty, /aria-current="page">People</);
    assert.match(empty, /No identity provider/);

    assert.equal((await post({ cookie: admin.cookie }, '/console/people', { email: 'forged@example.com', role: 'admin' })).status, 403, 'no CSRF token');
    const invalid = await post(admin, '/console/people', { email: 'not-an-email', role: 'admin' });
    assert.equal(invalid.status, 400);
    assert.match(await invalid.text(), /The member was not added: email:/);
    const badRole = await post(admin, '/console/people', { email: 'dee@example.com', role: 'owner' });
    assert.equal(badRole.status, 400);
    assert.deepEqual(await members(), [], 'nothing was added');

    const added = await post(admin, '/console/people', { email: 'dee@example.com', name: 'Dee', role: 'operator' });
    assert.equal(added.status, 303);
    assert.equal(added.headers.get('location'), '/console/people?done=added');
    const [dee] = await members();
    assert.deepEqual(dee && { email: dee.email, name: dee.name, role: dee.role }, { email: 'dee@example.com', name: 'Dee', role: 'operator' });
    const listed = await (await get(admin, '/console/people?done=added')).text();
    assert.match(listed, /The member was added/);
    assert.match(listed, new RegExp(`<tr id="member-${dee!.id}"><td>dee@example\\.com</td><td>Dee</td>`));
    assert.equal((await post(admin, '/console/people', { email: 'DEE@example.com', role: 'viewer' })).status, 409, 'one member per e-mail');

    assert.equal((await post(admin, `/console/people/${dee!.id}/role`, { role: 'viewer' })).status, 303);
    assert.equal((await members())[0]?.role, 'viewer');
    assert.equal((await post(admin, `/console/people/${dee!.id}/role`, { role: 'root' })).status, 400);
    assert.equal((await post(admin, '/console/people/mem_nosuchmember/role', { role: 'viewer' })).status, 404);

    // another organization's session sees none of them and changes none
    const other = await signIn(otherToken);
    assert.doesNotMatch(await (await get(other, '/console/people')).text(), /dee@example\.com/);
    assert.equal((await post(other, `/console/people/${dee!.id}/role`, { role: 'admin' })).status, 404);
    assert.equal((await post(other, `/console/people/${dee!.id}/remove`, {})).status, 404);
    assert.equal((await post(other, '/console/people/grants/grt_nosuchgrant/revoke', {})).status, 404);
    assert.equal((await members())[0]?.role, 'viewer', 'left as it was');

    assert.equal((await post(admin, `/console/people/${dee!.id}/remove`, {})).status, 303);
    assert.deepEqual(await members(), []);

    type Records = { records: { action: string; outcome: string; target: { id: string | null } | null }[] };
    const trail = (await fg.admin<Records>('GET', '/api/v1/audit?action=member.*')).body.records;
    const mine = trail.filter((r) => r.target?.id === dee!.id).map((r) => `${r.action} ${r.outcome}`);
    for (const expected of ['member.created success', 'member.updated success', 'member.removed success', 'member.updated refused']) {
      assert.ok(mine.includes(expected), `${expected} in ${JSON.stringify(mine)}`);
    }
  });

  it('refuses the page and its actions to a member whose role lacks members.manage, and serves them to an admin member', async () => {
    const created = await fg.admin<Member>('POST', '/api/v1/members', { email: 'vic@example.com', role: 'viewer' });
    assert.equal(created.status, 201);
    const target = await fg.admin<Member>('POST', '/api/v1/members', { email: 'tia@example.com', role: 'operator' });
    const sessions = new ConsoleSessions({ registry: fg.registry, lifetimeMinutes: 10 });
    const asMember = async (member: Member): Promise<ConsoleSession> => {
      const grant = await fg.registry.orgs.findAdminToken(hashSecret(fg.adminToken));
      const record = grant && await fg.registry.members.get(grant.orgId, member.id);
      assert.ok(record);
      const opened = await sessions.signInMember(record);
      return { cookie: `fg_console=${opened.id}`, csrf: opened.session.csrfToken };
    };
    const viewer = await asMember(created.body);
    const refused = await get(viewer, '/console/people');
    assert.equal(refused.status, 403);
    assert.match(await refused.text(), /members\.manage/);
    assert.equal((await post(viewer, `/console/people/${target.body.id}/role`, { role: 'admin' })).status, 403);
    assert.equal((await members()).find((m) => m.id === target.body.id)?.role, 'operator');

    assert.equal((await fg.admin('PATCH', `/api/v1/members/${created.body.id}`, { role: 'admin' })).status, 200);
    const promoted = await asMember({ ...created.body, role: 'admin' });
    assert.equal((await get(promoted, '/console/people')).status, 200);
    assert.equal((await post(promoted, `/console/people/${target.body.id}/role`, { role: 'approver' })).status, 303);
    assert.equal((await members()).find((m) => m.id === target.body.id)?.role, 'approver');
  });

  it('revokes the API key a member created in their session when the console removes them, and says when no admin token is left', async () => {
    const org = await fg.admin<{ id: string; adminToken: string }>('POST', '/api/v1/orgs', { name: 'console-offboarding' });
    const asOrg = asAdminOf(fg, org.body.adminToken);
    const sessions = new ConsoleSessions({ registry: fg.registry, lifetimeMinutes: 10 });
    const adminMember = async (email: string): Promise<{ id: string; session: ConsoleSession }> => {
      const created = await asOrg.admin<Member>('POST', '/api/v1/members', { email, role: 'admin' });
      assert.equal(created.status, 201);
      const record = await fg.registry.members.get(org.body.id, created.body.id);
      assert.ok(record);
      const opened = await sessions.signInMember(record);
      return { id: created.body.id, session: { cookie: `fg_console=${opened.id}`, csrf: opened.session.csrfToken } };
    };
    const ada = await adminMember('ada@example.com');
    const bea = await adminMember('bea@example.com');
    // Ada rotates the organization's token (with a personal access token): the only one is now hers
    const pat = await asOrg.admin<{ token: string }>('POST', `/api/v1/members/${ada.id}/tokens`);
    const rotated = await asAdminOf(fg, pat.body.token).admin<{ adminToken: string }>('POST', '/api/v1/admin-token/rotate');
    assert.equal(rotated.status, 201);
    // and creates an API key in her console session
    assert.equal((await post(ada.session, '/console/api-keys', { name: 'adas-console-key' })).status, 303);
    const adasKey = (await fg.registry.apiKeys.list(org.body.id)).find((k) => k.name === 'adas-console-key');
    assert.equal(adasKey?.memberId, ada.id, 'the key names the member whose session created it');

    const removed = await post(bea.session, `/console/people/${ada.id}/remove`, {});
    assert.equal(removed.status, 303);
    assert.equal(removed.headers.get('location'), '/console/people?done=removed&adminTokensLeft=0');
    const page = await (await get(bea.session, removed.headers.get('location') ?? '')).text();
    assert.match(page, /The member was removed/);
    assert.match(page, /no admin token reaches the organization any more/);
    assert.ok((await fg.registry.apiKeys.list(org.body.id)).find((k) => k.id === adasKey.id)?.revokedAt, 'her key is revoked');
    assert.equal((await asAdminOf(fg, rotated.body.adminToken).admin('GET', '/api/v1/workflows')).status, 401);
    const trail = await fg.registry.audit.list(org.body.id, { action: 'member.removed' }, 10);
    assert.equal(trail[0]?.actor, `member:${bea.id}`);
    assert.deepEqual(trail[0]?.details.endedApiKeys, [adasKey.id]);
    assert.equal(trail[0]?.details.via, 'console');
  });
});
