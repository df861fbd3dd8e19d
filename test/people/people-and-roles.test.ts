/**
 * People and roles over real HTTP (docs/people-and-roles.md): members created with the admin token,
 * their personal access tokens, each role allowed and refused on a sample of management routes
 * (403 naming the permission), an approver deciding only what is addressed to them, role changes
 * and removal taking effect at once; then sign-in to the console through a real OpenID Connect
 * provider on loopback (oidc-provider), with its claims mapped to roles.
 */
import assert from 'node:assert/strict';
import { publishWorkflow, pollStatus, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';
import { browse, CookieJar, startTestIssuer, type TestIssuer } from '../support/oidc-issuer';

const approval = {
  name: 'people-approval',
  steps: [{ name: 'Sign-off', type: 'approval', approvers: ['ann@example.com'], timeout: '5m' }],
};
const hello = { name: 'people-hello', steps: [{ name: 'Hi', type: 'template', template: 'hi' }] };

interface ErrorBody { error: string; message: string }

describe('people and roles', () => {
  let fg: TestFlowgate;
  const tokens: Record<string, string> = {};
  const ids: Record<string, string> = {};

  before(async () => {
    fg = await startTestFlowgate();
    for (const [who, email, role] of [
      ['viewer', 'vic@example.com', 'viewer'], ['editor', 'eve@example.com', 'editor'], ['operator', 'otto@example.com', 'operator'],
      ['ann', 'ann@example.com', 'approver'], ['bob', 'bob@example.com', 'approver'],
    ] as const) {
      const created = await fg.admin<{ id: string; role: string; email: string }>('POST', '/api/v1/members', { email, role });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.role, role);
      ids[who] = created.body.id;
      const token = await fg.admin<{ token: string }>('POST', `/api/v1/members/${created.body.id}/tokens`);
      assert.equal(token.status, 201);
      assert.match(token.body.token, /^fgp_/);
      tokens[who] = token.body.token;
    }
  });
  after(async () => {
    await fg?.stop();
  });

  const as = async (who: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> => {
    const response = await fg.request(path, {
      method, headers: { Authorization: `Bearer ${tokens[who] ?? who}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) as unknown : undefined };
  };
  const refused = (answer: { status: number; body: unknown }, permission: string, role: string): void => {
    assert.equal(answer.status, 403, JSON.stringify(answer.body));
    const body = answer.body as ErrorBody;
    assert.equal(body.error, 'permission_denied');
    assert.equal(body.message, `the ${role} role lacks the permission ${permission}`);
    assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
  };

  it('keeps the members API to admins; a duplicate e-mail is a conflict, a bad role a 400', async () => {
    const listed = await fg.admin<{ members: { email: string; role: string }[] }>('GET', '/api/v1/members');
    assert.deepEqual(listed.body.members.map((m) => `${m.email} ${m.role}`), [
      'ann@example.com approver', 'bob@example.com approver', 'eve@example.com editor', 'otto@example.com operator', 'vic@example.com viewer',
    ]);
    assert.equal((await fg.admin('POST', '/api/v1/members', { email: 'ANN@example.com', role: 'viewer' })).status, 409);
    assert.equal((await fg.admin('POST', '/api/v1/members', { email: 'zed@example.com', role: 'owner' })).status, 400);
    refused(await as('editor', 'GET', '/api/v1/members'), 'members.manage', 'editor');
    refused(await as('operator', 'POST', '/api/v1/members', { email: 'x@example.com', role: 'admin' }), 'members.manage', 'operator');
    refused(await as('viewer', 'POST', '/api/v1/api-keys', {}), 'api_keys.manage', 'viewer');
    refused(await as('editor', 'GET', '/api/v1/audit'), 'audit.read', 'editor');
    assert.equal((await as('fgp_not_a_real_token_0123456789', 'GET', '/api/v1/workflows')).status, 401);
  });

  it('lets a viewer read but not publish, cancel or approve', async () => {
    const p = await publishWorkflow(fg, approval);
    const runId = (await trigger(fg, p, {})).headers.get('X-Pf-Run-Id') ?? '';
    await pollStatus(fg, p, runId, (s) => s.status === 'PAUSED');
    assert.equal((await as('viewer', 'GET', '/api/v1/workflows')).status, 200);
    assert.equal((await as('viewer', 'GET', `/api/v1/runs/${runId}`)).status, 200);
    refused(await as('viewer', 'POST', `/api/v1/workflows/${p.workflowId}/publish`), 'workflows.write', 'viewer');
    refused(await as('viewer', 'POST', `/api/v1/runs/${runId}/cancel`), 'runs.operate', 'viewer');
    refused(await as('viewer', 'POST', `/api/v1/runs/${runId}/approval`, { decision: 'approve' }), 'approvals.decide', 'viewer');
    refused(await as('editor', 'POST', `/api/v1/runs/${runId}/approval`, { decision: 'approve' }), 'approvals.decide', 'editor');
    // the per-approver links decide as their approver: not for an approver who is someone else
    refused(await as('bob', 'GET', `/api/v1/runs/${runId}/approvals`), 'approvals.links', 'approver');

    // an approver decides only what is addressed to them, and only as themselves
    const bob = await as('bob', 'POST', `/api/v1/runs/${runId}/approval`, { decision: 'approve' });
    assert.equal(bob.status, 403, JSON.stringify(bob.body));
    assert.equal((bob.body as ErrorBody).error, 'not_an_approver');
    assert.equal((await as('bob', 'POST', `/api/v1/runs/${runId}/approval`, { decision: 'approve', approver: 'ann@example.com' })).status, 403);
    refused(await as('ann', 'POST', `/api/v1/runs/${runId}/cancel`), 'runs.operate', 'approver');
    const ann = await as('ann', 'POST', `/api/v1/runs/${runId}/approval`, { decision: 'approve', comment: 'fine' });
    assert.equal(ann.status, 200, JSON.stringify(ann.body));
    assert.equal((ann.body as { decision: { approver: string } }).decision.approver, 'ann@example.com');
    assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');
  });

  it('lets an operator cancel a run but not edit a workflow, and an editor publish but not cancel', async () => {
    const p: Published = await publishWorkflow(fg, approval);
    const runId = (await trigger(fg, p, {})).headers.get('X-Pf-Run-Id') ?? '';
    await pollStatus(fg, p, runId, (s) => s.status === 'PAUSED');
    refused(await as('operator', 'PUT', `/api/v1/workflows/${p.workflowId}`, hello), 'workflows.write', 'operator');
    refused(await as('operator', 'POST', '/api/v1/connections', { application: 'x' }), 'connections.write', 'operator');
    refused(await as('editor', 'POST', `/api/v1/runs/${runId}/cancel`), 'runs.operate', 'editor');
    const cancelled = await as('operator', 'POST', `/api/v1/runs/${runId}/cancel`);
    assert.equal(cancelled.status, 202, JSON.stringify(cancelled.body));
    assert.equal((await pollStatus(fg, p, runId)).status, 'FAILED');

    const created = await as('editor', 'POST', '/api/v1/workflows', hello);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = (created.body as { id: string }).id;
    assert.equal((await as('editor', 'POST', `/api/v1/workflows/${id}/publish`)).status, 201);
    assert.equal((await as('editor', 'POST', '/api/v1/triggers', { workflowId: id })).status, 201);
    refused(await as('operator', 'DELETE', `/api/v1/workflows/${id}`), 'workflows.write', 'operator');
  });

  it('applies a role change at once, ends a removed member\'s tokens, and records members\' actions as theirs', async () => {
    const p = await publishWorkflow(fg, hello);
    refused(await as('viewer', 'PUT', `/api/v1/workflows/${p.workflowId}`, hello), 'workflows.write', 'viewer');
    const changed = await fg.admin<{ role: string }>('PATCH', `/api/v1/members/${ids.viewer}`, { role: 'editor' });
    assert.equal(changed.status, 200);
    assert.equal(changed.body.role, 'editor');
    assert.equal((await as('viewer', 'PUT', `/api/v1/workflows/${p.workflowId}`, hello)).status, 200);
    const audit = await fg.admin<{ records: { action: string; actor: string; actorName: string | null; credential: { kind: string; id: string }; outcome: string }[] }>('GET', '/api/v1/audit?limit=20');
    const mine = audit.body.records.find((r) => r.action === 'workflow.updated' && r.actor === `member:${ids.viewer}`);
    assert.ok(mine, JSON.stringify(audit.body.records.slice(0, 5)));
    assert.equal(mine.actorName, 'vic@example.com');
    assert.equal(mine.credential.kind, 'member_token');
    assert.match(mine.credential.id, /^pat_[0-9a-f]{12}$/);
    const refusal = audit.body.records.find((r) => r.action === 'workflow.updated' && r.outcome === 'refused');
    assert.ok(refusal, 'a refused permission is in the audit trail');
    // the actor filter takes the member's e-mail address, in any case: only their records, refused ones too
    const byEmail = await fg.admin<{ records: { actor: string; outcome: string }[] }>('GET', '/api/v1/audit?limit=50&actor=VIC%40example.com');
    assert.equal(byEmail.status, 200);
    assert.ok(byEmail.body.records.length >= 2, JSON.stringify(byEmail.body));
    assert.ok(byEmail.body.records.every((r) => r.actor === `member:${ids.viewer}`), JSON.stringify(byEmail.body.records));
    assert.ok(byEmail.body.records.some((r) => r.outcome === 'refused'));

    assert.equal((await fg.admin('DELETE', `/api/v1/members/${ids.viewer}`)).status, 200);
    assert.equal((await as('viewer', 'GET', '/api/v1/workflows')).status, 401);
    assert.equal((await fg.admin('DELETE', `/api/v1/members/${ids.viewer}`)).status, 404);
    // the admin token keeps working for scripts
    assert.equal((await fg.admin('GET', '/api/v1/workflows')).status, 200);
  });

  describe('sign-in through the organization\'s OpenID Connect provider', () => {
    let idp: TestIssuer;
    let orgId: string;
    before(async () => {
      idp = await startTestIssuer(`${fg.url}/console/oidc/callback`);
      idp.accounts.set('ann', { email: 'ann@example.com', name: 'Ann' });
      idp.accounts.set('new-op', { email: 'nora@corp.example', groups: ['ops'] });
      idp.accounts.set('new-ed', { email: 'ed@corp.example', groups: ['builders', 'ops'] });
      idp.accounts.set('stranger', { email: 'sam@elsewhere.example' });
      idp.accounts.set('viewer', { email: 'vic@corp.example' });
      idp.accounts.set('unverified', { email: 'ann@example.com', emailVerified: false });
      const set = await fg.admin<{ redirectUri: string; signInUrl: string; clientSecret?: string }>('PUT', '/api/v1/identity-provider', {
        name: 'Test IdP', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret,
        roleRules: [{ group: 'builders', role: 'editor' }, { group: 'ops', role: 'operator' }, { emailDomain: 'corp.example', role: 'viewer' }],
      });
      assert.equal(set.status, 200, JSON.stringify(set.body));
      assert.equal(set.body.redirectUri, `${fg.url}/console/oidc/callback`);
      assert.equal(set.body.clientSecret, undefined, 'the secret is never shown');
      orgId = new URL(set.body.signInUrl).searchParams.get('org') ?? '';
    });
    after(async () => {
      await idp?.stop();
    });

    /** Signs in through the provider as `account`: the console session cookie, or the refusal page. */
    const signIn = async (account: string): Promise<{ session?: string; status: number; body: string }> => {
      idp.signInAs(account);
      const jar = new CookieJar();
      const page = await browse(`${fg.url}/console/sign-in?org=${orgId}`, jar);
      assert.match(page.body, /Sign in with Test IdP/);
      const end = await browse(`${fg.url}/console/oidc/start?org=${orgId}`, jar);
      assert.equal(end.url.pathname, '/console/oidc/callback', `ended at ${end.url.href}: ${end.body.slice(0, 300)}`);
      return { session: jar.get(new URL(fg.url).host, 'fg_console'), status: end.response.status, body: end.body };
    };
    const consoleGet = (session: string, path: string) => fetch(`${fg.url}${path}`, { redirect: 'manual', headers: { Cookie: `fg_console=${session}` } });

    it('signs an existing member in with their role; a provider config is admin only and its secret stays sealed', async () => {
      refused(await as('editor', 'PUT', '/api/v1/identity-provider', {}), 'org.manage', 'editor');
      const ann = await signIn('ann');
      assert.equal(ann.status, 200, ann.body);
      assert.match(ann.body, /ann@example\.com \(approver\)/);
      assert.ok(ann.session);
      assert.equal((await consoleGet(ann.session, '/console/runs')).status, 200);
    });

    it('maps group and e-mail domain claims to roles for new people, and refuses who no rule names', async () => {
      const ed = await signIn('new-ed');
      assert.match(ed.body, /ed@corp\.example \(editor\)/, 'the first matching rule wins');
      const nora = await signIn('new-op');
      assert.match(nora.body, /nora@corp\.example \(operator\)/);
      const members = await fg.admin<{ members: { email: string; role: string }[] }>('GET', '/api/v1/members');
      assert.ok(members.body.members.some((m) => m.email === 'nora@corp.example' && m.role === 'operator'));
      const sam = await signIn('stranger');
      assert.equal(sam.status, 403);
      assert.equal(sam.session, undefined);
      assert.match(sam.body, /no rule gives them a role/);
      const unverified = await signIn('unverified');
      assert.equal(unverified.status, 403);
      assert.match(unverified.body, /no verified e-mail/);
    });

    it('holds a member\'s console session to their role: an operator cannot publish, and removal ends it', async () => {
      const nora = await signIn('new-op');
      assert.ok(nora.session);
      const p = await publishWorkflow(fg, hello);
      const page = await (await consoleGet(nora.session, `/console/workflows/${p.workflowId}`)).text();
      const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
      const publish = await fetch(`${fg.url}/console/workflows/${p.workflowId}/publish`, {
        method: 'POST', redirect: 'manual',
        headers: { Cookie: `fg_console=${nora.session}`, 'Content-Type': 'application/x-www-form-urlencoded', Origin: fg.url },
        body: new URLSearchParams({ csrf }).toString(),
      });
      assert.equal(publish.status, 403);
      assert.match(await publish.text(), /the operator role lacks the permission workflows\.write/);
      // removing the member ends the session
      const members = await fg.admin<{ members: { id: string; email: string }[] }>('GET', '/api/v1/members');
      const id = members.body.members.find((m) => m.email === 'nora@corp.example')?.id ?? '';
      assert.equal((await fg.admin('DELETE', `/api/v1/members/${id}`)).status, 200);
      assert.equal((await consoleGet(nora.session, '/console/runs')).status, 303);
    });

    it('holds a viewer\'s console session to reading: no audit page, no agent chat, connection, or tool call', async () => {
      const vic = await signIn('viewer');
      assert.match(vic.body, /vic@corp\.example \(viewer\)/);
      assert.ok(vic.session);
      assert.equal((await consoleGet(vic.session, '/console/runs')).status, 200);
      const audit = await consoleGet(vic.session, '/console/audit');
      assert.equal(audit.status, 403);
      assert.match(await audit.text(), /the viewer role lacks the permission audit\.read/);
      const page = await (await consoleGet(vic.session, '/console/runs')).text();
      const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
      const post = (path: string, fields: Record<string, string>) => fetch(`${fg.url}${path}`, {
        method: 'POST', redirect: 'manual',
        headers: { Cookie: `fg_console=${vic.session}`, 'Content-Type': 'application/x-www-form-urlencoded', Origin: fg.url },
        body: new URLSearchParams({ csrf, ...fields }).toString(),
      });
      for (const [path, fields, permission] of [
        ['/console/agents/agt_any/chat', { message: 'hi' }, 'runs.operate'],
        ['/console/connections', { kind: 'custom', name: 'x' }, 'connections.write'],
        ['/console/servers/web-search/tools/web_search', { query: 'x' }, 'runs.operate'],
      ] as const) {
        const answer = await post(path, fields);
        assert.equal(answer.status, 403, path);
        assert.match(await answer.text(), new RegExp(`the viewer role lacks the permission ${permission.replace('.', '\\.')}`), path);
      }
    });

    it('answers 502 with a page when the provider cannot be reached, 404 for an organization without one', async () => {
      const other = await fg.admin<{ id: string; adminToken: string }>('POST', '/api/v1/orgs', { name: 'no-idp' });
      assert.equal((await fetch(`${fg.url}/console/oidc/start?org=${other.body.id}`, { redirect: 'manual' })).status, 404);
      const set = await fetch(`${fg.url}/api/v1/identity-provider`, {
        method: 'PUT', headers: { Authorization: `Bearer ${other.body.adminToken}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Gone', issuer: 'http://127.0.0.1:9', clientId: 'c', clientSecret: 's' }),
      });
      assert.equal(set.status, 200);
      const gone = await fetch(`${fg.url}/console/oidc/start?org=${other.body.id}`, { redirect: 'manual' });
      assert.equal(gone.status, 502);
      assert.match(await gone.text(), /identity provider is unreachable/);
    });

    it('refuses a callback without its pending sign-in (a forged or replayed one)', async () => {
      const forged = await fetch(`${fg.url}/console/oidc/callback?code=abc&state=def`);
      assert.equal(forged.status, 403);
      assert.match(await forged.text(), /expired or was started in another browser/);
    });
  });
});
