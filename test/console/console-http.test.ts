/**
 * The console and hosted forms over real HTTP (docs/console.md): sessions are per organization and
 * refuse forged, expired and rotated-out cookies; state-changing requests need this origin and the
 * session's CSRF token; a revoked form URL is a 404; an agent edit keeps the limits its form does not
 * show.
 */
import assert from 'node:assert/strict';
import { hashSecret, randomToken } from '../../src/crypto/secrets';
import { asAdminOf, pollStatus, publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';

interface Session {
  cookie: string;
  csrf: string;
}

describe('console over HTTP: sessions, organizations, CSRF, hosted forms', () => {
  let fg: TestFlowgate;
  let p: Published;
  let runId: string;
  let otherToken: string;

  const signIn = async (token: string): Promise<Session> => {
    const response = await fg.request('/console/sign-in', {
      method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: fg.url }, body: new URLSearchParams({ token }),
    });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), '/console/runs');
    const setCookie = response.headers.get('set-cookie') ?? '';
    assert.match(setCookie, /^fg_console=fgs_[A-Za-z0-9_-]+; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=28800$/);
    const cookie = setCookie.split(';')[0] ?? '';
    const runs = await fg.request('/console/runs', { headers: { Cookie: cookie } });
    assert.equal(runs.status, 200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(await runs.text())?.[1] ?? '';
    assert.ok(csrf.length > 20);
    return { cookie, csrf };
  };

  /** A form POST; `origin` null sends no Origin header. */
  const post = (s: Partial<Session>, pathname: string, form: Record<string, string>, origin: string | null = fg.url, headers: Record<string, string> = {}) => fg.request(pathname, {
    method: 'POST', redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...(s.cookie ? { Cookie: s.cookie } : {}), ...(origin === null ? {} : { Origin: origin }), ...headers },
    body: new URLSearchParams({ ...(s.csrf ? { csrf: s.csrf } : {}), ...form }),
  });

  before(async () => {
    fg = await startTestFlowgate();
    p = await publishWorkflow(fg, {
      name: 'console-approval',
      inputSchema: { type: 'object', properties: { title: { type: 'string', title: 'Title' }, count: { type: 'integer' } }, required: ['title'] },
      steps: [
        { name: 'Sign-off', type: 'approval', approvers: ['carol@example.com'], message: 'Ship {{inputs.title}}?', timeout: '5m' },
        { name: 'Done', type: 'template', template: 'shipped {{inputs.title}}' },
      ],
    });
    runId = (await trigger(fg, p, { title: 'v1' })).headers.get('X-Pf-Run-Id') ?? '';
    await pollStatus(fg, p, runId, (s) => s.status === 'PAUSED', 30_000);
    const org = await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: 'other' });
    assert.equal(org.status, 201);
    otherToken = org.body.adminToken;
  });
  after(async () => {
    await fg?.stop();
  });

  it('serves its pages with a strict CSP and its own assets; refuses a wrong token', async () => {
    const signInPage = await fg.request('/console/sign-in');
    assert.equal(signInPage.status, 200);
    const csp = signInPage.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    const text = await signInPage.text();
    assert.doesNotMatch(text, /<script>|<style>|style="|https?:\/\//, 'no inline code, nothing from elsewhere');
    for (const name of ['console.css', 'console.js']) {
      const asset = await fg.request(`/console/assets/${name}`);
      assert.equal(asset.status, 200);
      assert.ok((await asset.text()).length > 200);
    }
    assert.equal((await fg.request('/console/assets/nope.js')).status, 404);
    const refused = await post({}, '/console/sign-in', { token: 'fga_not_a_real_token_at_all' });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('set-cookie'), null);
    const crossSite = await post({}, '/console/sign-in', { token: fg.adminToken }, 'https://evil.example');
    assert.equal(crossSite.status, 403);
  });

  it('shows the organization\'s runs, filtered, and a run with its approval', async () => {
    const s = await signIn(fg.adminToken);
    const list = await (await fg.request(`/console/runs?workflowId=${p.workflowId}&triggerId=${p.triggerId}&since=1h`, { headers: { Cookie: s.cookie } })).text();
    assert.ok(list.includes(`/console/runs/${runId}`), 'the run is listed');
    const none = await (await fg.request('/console/runs?triggerId=trg_none&since=1h', { headers: { Cookie: s.cookie } })).text();
    assert.ok(!none.includes(`/console/runs/${runId}`), 'the trigger filter leaves it out');
    const run = await fg.request(`/console/runs/${runId}`, { headers: { Cookie: s.cookie } });
    assert.equal(run.status, 200);
    const body = await run.text();
    assert.match(body, /Ship v1\?/);
    assert.match(body, /value="approve"/);
  });

  it('a session of one organization can neither read nor act on another\'s runs (404)', async () => {
    const other = await signIn(otherToken);
    assert.equal((await fg.request(`/console/runs/${runId}`, { headers: { Cookie: other.cookie } })).status, 404);
    assert.equal((await fg.request(`/console/runs/${runId}/events`, { headers: { Cookie: other.cookie } })).status, 404);
    const list = await (await fg.request('/console/runs', { headers: { Cookie: other.cookie } })).text();
    assert.ok(!list.includes(runId));
    for (const action of ['decision', 'cancel', 'rerun', 'resume']) {
      const response = await post(other, `/console/runs/${runId}/${action}`, { decision: 'approve', approver: 'carol@example.com' });
      assert.equal(response.status, 404, action);
    }
    assert.equal((await pollStatus(fg, p, runId, () => true)).status, 'PAUSED', 'nothing happened to the run');
    // the forms of another organization's trigger are not its to make
    const forms = await asAdminOf(fg, otherToken).admin('POST', `/api/v1/triggers/${p.triggerId}/forms`, {});
    assert.equal(forms.status, 404);
  });

  it('refuses forged, expired and rotated-out sessions', async () => {
    const forged = `fg_console=${randomToken('fgs_')}`;
    const page = await fg.request('/console/runs', { redirect: 'manual', headers: { Cookie: forged, Accept: 'text/html' } });
    assert.equal(page.status, 303);
    assert.equal(page.headers.get('location'), '/console/sign-in');
    assert.equal((await post({ cookie: forged, csrf: 'x'.repeat(43) }, `/console/runs/${runId}/cancel`, {})).status, 401);
    assert.equal((await fg.request(`/console/runs/${runId}/events`, { headers: { Cookie: forged } })).status, 401);

    const expiredId = randomToken('fgs_');
    await fg.registry.consoleSessions.create(hashSecret(expiredId), {
      orgId: 'org_default', tokenHash: hashSecret(fg.adminToken), csrfToken: 'csrf-of-the-expired-session',
      createdAt: new Date(Date.now() - 7200_000).toISOString(), expiresAt: new Date(Date.now() - 1000).toISOString(),
    });
    const expired = await fg.request('/console/runs', { redirect: 'manual', headers: { Cookie: `fg_console=${expiredId}` } });
    assert.equal(expired.status, 303);
    assert.equal((await post({ cookie: `fg_console=${expiredId}`, csrf: 'csrf-of-the-expired-session' }, `/console/runs/${runId}/cancel`, {})).status, 401);

    const other = await signIn(otherToken);
    const rotated = await asAdminOf(fg, otherToken).admin('POST', '/api/v1/admin-token/rotate');
    assert.equal(rotated.status, 201);
    assert.equal((await fg.request('/console/runs', { redirect: 'manual', headers: { Cookie: other.cookie } })).status, 303, 'rotating the token ends its sessions');
    otherToken = (rotated.body as { adminToken: string }).adminToken;
  });

  it('refuses a cross-site POST and one without the CSRF token (403); signs out', async () => {
    const s = await signIn(fg.adminToken);
    assert.equal((await post(s, `/console/runs/${runId}/cancel`, {}, 'https://evil.example')).status, 403);
    assert.equal((await post({ cookie: s.cookie }, `/console/runs/${runId}/cancel`, {})).status, 403);
    assert.equal((await post({ cookie: s.cookie, csrf: 'A'.repeat(43) }, `/console/runs/${runId}/cancel`, {})).status, 403);
    assert.equal((await post(s, `/console/runs/${runId}/cancel`, {}, null, { 'Sec-Fetch-Site': 'cross-site' })).status, 403);
    assert.equal((await pollStatus(fg, p, runId, () => true)).status, 'PAUSED', 'nothing was cancelled');

    const decided = await post(s, `/console/runs/${runId}/decision`, { decision: 'approve', approver: 'carol@example.com', comment: 'fine' });
    assert.equal(decided.status, 303);
    assert.equal(decided.headers.get('location'), `/console/runs/${runId}?done=approve`);
    assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');

    assert.equal((await post(s, '/console/sign-out', {})).status, 303);
    assert.equal((await fg.request('/console/runs', { redirect: 'manual', headers: { Cookie: s.cookie } })).status, 303, 'signed out');
  });

  it('lists the organization\'s workflows and publishes a draft through the same service as the API', async () => {
    const s = await signIn(fg.adminToken);
    const list = await (await fg.request('/console/workflows', { headers: { Cookie: s.cookie } })).text();
    assert.ok(list.includes(`/console/workflows/${p.workflowId}`));
    const other = await signIn(otherToken);
    assert.ok(!(await (await fg.request('/console/workflows', { headers: { Cookie: other.cookie } })).text()).includes(p.workflowId));
    assert.equal((await fg.request(`/console/workflows/${p.workflowId}`, { headers: { Cookie: other.cookie } })).status, 404);
    assert.equal((await post(other, `/console/workflows/${p.workflowId}/publish`, {})).status, 404);
    assert.equal((await post(s, `/console/workflows/${p.workflowId}/publish`, {}, 'https://evil.example')).status, 403);
    assert.equal((await fg.admin('GET', `/api/v1/workflows/${p.workflowId}`) as { body: { versions: number[] } }).body.versions.length, 1, 'nothing published by a refused request');

    const page = await (await fg.request(`/console/workflows/${p.workflowId}`, { headers: { Cookie: s.cookie } })).text();
    assert.match(page, /Publish the draft as version 2/);
    assert.ok(page.includes(`/ext/triggers/${p.triggerId}</code>`), "the trigger's URL");
    const published = await post(s, `/console/workflows/${p.workflowId}/publish`, {});
    assert.equal(published.status, 303);
    assert.equal(published.headers.get('location'), `/console/workflows/${p.workflowId}?done=publish`);
    const after = await fg.admin<{ publishedVersion: number; versions: number[] }>('GET', `/api/v1/workflows/${p.workflowId}`);
    assert.deepEqual([after.body.publishedVersion, after.body.versions], [2, [1, 2]]);
  });

  it('records its changes in the audit trail as the console session, refused ones too, with no secret', async () => {
    const s = await signIn(fg.adminToken);
    const runOf = async (title: string): Promise<string> => {
      const id = (await trigger(fg, p, { title })).headers.get('X-Pf-Run-Id') ?? '';
      await pollStatus(fg, p, id, (st) => st.status === 'PAUSED', 30_000);
      return id;
    };
    const approved = await runOf('audit-approve');
    const cancelled = await runOf('audit-cancel');
    const comment = `comment-${randomToken('')}`;
    assert.equal((await post(s, `/console/runs/${approved}/decision`, { decision: 'approve', approver: 'mallory@example.com' })).status, 403, 'not an approver');
    assert.equal((await post(s, `/console/runs/${approved}/decision`, { decision: 'approve', approver: 'carol@example.com', comment })).status, 303);
    assert.equal((await post({ cookie: s.cookie }, `/console/runs/${cancelled}/cancel`, {})).status, 403, 'no CSRF token');
    assert.equal((await post(s, `/console/runs/${cancelled}/cancel`, {})).status, 303);
    assert.equal((await post(s, `/console/workflows/${p.workflowId}/publish`, {})).status, 303);
    assert.equal((await post({}, '/console/sign-in', { token: fg.adminToken }, 'https://evil.example')).status, 403, 'a cross-site sign-in');
    assert.equal((await post(s, '/console/sign-out', {})).status, 303);

    interface Rec { actor: string; action: string; outcome: string; status: number; credential: { kind: string; id: string }; target: { type: string; id: string | null } | null; details: Record<string, unknown> }
    const response = await fg.request('/api/v1/audit?limit=50', { headers: { Authorization: `Bearer ${fg.adminToken}` } });
    assert.equal(response.status, 200);
    const raw = await response.text();
    const records = ((JSON.parse(raw) as { records: Rec[] }).records).filter((r) => r.details.via === 'console').reverse();
    const mine = records.filter((r) => r.target?.id === approved || r.target?.id === cancelled || r.target?.id === p.workflowId || r.target?.type === 'console_session');
    const sessionId = /^fg_console=(.+)$/.exec(s.cookie)?.[1] ?? '';
    const fingerprint = `cs_${hashSecret(sessionId).slice(0, 12)}`;
    const sessionRecords = mine.filter((r) => r.credential.kind === 'console_session' && r.credential.id === fingerprint);
    assert.deepEqual(sessionRecords.map((r) => [r.action, r.outcome, r.status, r.target?.id]), [
      ['console.signed_in', 'success', 303, fingerprint],
      ['approval.decided', 'refused', 403, approved],
      ['approval.decided', 'success', 303, approved],
      ['run.cancelled', 'refused', 403, cancelled],
      ['run.cancelled', 'success', 303, cancelled],
      ['workflow.published', 'success', 303, p.workflowId],
      ['console.signed_out', 'success', 303, fingerprint],
    ]);
    for (const r of sessionRecords) {
      assert.equal(r.actor, 'instance-admin', 'the admin principal the session signed in as');
      assert.equal(r.details.adminToken, `adm_${hashSecret(fg.adminToken).slice(0, 12)}`);
    }
    const [, refusedDecision, decision] = sessionRecords;
    assert.equal(refusedDecision?.details.refusal, 'NOT_AN_APPROVER');
    assert.deepEqual([decision?.details.decision, decision?.details.approver, decision?.details.via], ['approve', 'carol@example.com', 'console']);
    assert.equal(typeof sessionRecords[5]?.details.version, 'number');
    const crossSite = mine.find((r) => r.action === 'console.sign_in_refused');
    assert.deepEqual([crossSite?.outcome, crossSite?.status, crossSite?.credential.kind], ['refused', 403, 'admin_token']);
    for (const secret of [sessionId, s.csrf, fg.adminToken, comment]) assert.ok(!raw.includes(secret), 'no cookie value, CSRF token, admin token or comment');

    const others = await fg.request('/api/v1/audit?limit=50', { headers: { Authorization: `Bearer ${otherToken}` } });
    assert.ok(!(await others.text()).includes(fingerprint), 'another organization sees none of it');
  });

  it('offers a hosted form at a URL, refuses bad inputs with the form again, and answers 404 once it is revoked', async () => {
    const created = await fg.admin<{ id: string; url: string }>('POST', `/api/v1/triggers/${p.triggerId}/forms`, {});
    assert.equal(created.status, 201);
    assert.match(created.body.url, /\/forms\/fgf_[A-Za-z0-9_-]+$/);
    const formPath = new URL(created.body.url).pathname;
    const form = await fg.request(formPath);
    assert.equal(form.status, 200);
    assert.equal(form.headers.get('referrer-policy'), 'no-referrer', 'the form\'s secret URL is never sent on as a referrer');
    const html = await form.text();
    assert.match(html, /<label for="f0">Title <span aria-hidden="true">\*<\/span><\/label>/);
    assert.match(html, /type="number" step="1" name="count"/);
    assert.match(html, /type="file" name="file" multiple/);

    const missing = await fg.request(formPath, { method: 'POST', body: new URLSearchParams({ count: '' }), headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    assert.equal(missing.status, 422);
    assert.match(await missing.text(), /title/);
    const sent = new FormData();
    sent.set('title', 'from a form');
    sent.set('count', '');
    sent.set('file', new Blob(['hello']), 'note.txt');
    const accepted = await fg.request(formPath, { method: 'POST', body: sent });
    assert.equal(accepted.status, 200);
    const confirmation = await accepted.text();
    assert.match(confirmation, /Thank you/);
    const started = /<code>([^<]+)<\/code>/.exec(confirmation)?.[1] ?? '';
    const inputs = await fg.admin<{ automationId: string }>('GET', `/api/v1/runs/${started}`);
    assert.equal(inputs.status, 200);

    const listed = await fg.admin<{ forms: { id: string; revokedAt: string | null }[] }>('GET', `/api/v1/triggers/${p.triggerId}/forms`);
    assert.deepEqual(listed.body.forms.map((f) => [f.id, f.revokedAt]), [[created.body.id, null]]);
    assert.equal((await fg.admin('DELETE', `/api/v1/triggers/${p.triggerId}/forms/${created.body.id}`)).status, 204);
    assert.equal((await fg.request(formPath)).status, 404);
    assert.equal((await fg.request(formPath, { method: 'POST', body: sent })).status, 404);
    assert.equal((await fg.request('/forms/fgf_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).status, 404);
    assert.equal((await fg.admin('DELETE', `/api/v1/triggers/${p.triggerId}/forms/${created.body.id}`)).status, 404);
  });

  it('saves an agent edit whose form shows some of the limits: the others keep their stored values (the API merges a partial limits)', async () => {
    const limits = { maxTurns: 4, maxToolCalls: 7, timeoutSeconds: 120, toolResultChars: 2000, maxTokens: 5000, maxCostUsd: 2 };
    const created = await fg.admin<{ id: string }>('POST', '/api/v1/agents', { name: 'Limited', instructions: 'Be brief.', limits });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const s = await signIn(fg.adminToken);
    const saved = await post(s, `/console/agents/${created.body.id}/edit`, {
      name: 'Limited', instructions: 'Be brief.', maxTurns: '6', maxToolCalls: '', timeoutSeconds: '120',
    });
    assert.equal(saved.status, 303, await saved.text());
    const read = await fg.admin<{ limits: Record<string, unknown> }>('GET', `/api/v1/agents/${created.body.id}`);
    assert.deepEqual(read.body.limits, { ...limits, maxTurns: 6 }, 'toolResultChars, maxTokens and maxCostUsd kept; the emptied maxToolCalls kept too');
  });
});
