/**
 * A member signs in to an MCP client through the organization's OpenID Connect provider
 * (docs/tool-gateway.md "Signing in by URL", docs/people-and-roles.md): the official SDK client's
 * OAuth flow, the authorization page's "Sign in with <provider>" (the organization named by the
 * authorize URL's `org`, or asked for first), a real oidc-provider on loopback, the consent
 * recorded as the member's, a tool called; then the member removed and their token refused.
 */
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { randomUUID } from 'node:crypto';
import { MemoryProvider, REDIRECT_URI } from '../support/oauth-client';
import { browse, CookieJar, startTestIssuer, type TestIssuer } from '../support/oidc-issuer';
import { publishWorkflow } from '../support/flowgate';
import { runtimeToken } from '../tools/support';

function hidden(page: string, name: string): string {
  const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(page);
  if (!match?.[1]) throw new Error(`no hidden ${name} on the page: ${page.slice(0, 500)}`);
  return match[1];
}

const unescape = (s: string): string => s.replace(/&amp;/g, '&').replace(/&#x?0*3[dD];/g, '=');

describe('members sign in to MCP clients through the organization\'s identity provider', () => {
  let fg: TestFlowgate;
  let idp: TestIssuer;
  let orgId = '';
  before(async () => {
    fg = await startTestFlowgate();
    idp = await startTestIssuer(`${fg.url}/oauth/oidc/callback`);
    idp.accounts.set('nora', { email: 'nora@corp.example', groups: ['ops'] });
    const set = await fg.admin<{ signInUrl: string }>('PUT', '/api/v1/identity-provider', {
      name: 'Test IdP', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret,
      roleRules: [{ group: 'ops', role: 'operator' }, { group: 'approvers', role: 'approver' }],
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    orgId = new URL(set.body.signInUrl).searchParams.get('org') ?? '';
  });
  after(async () => {
    await fg?.stop();
    await idp?.stop();
  });

  /** What the person does in the browser: the organization step, "Sign in with Test IdP", allow. The redirect back to the client. */
  async function signInAsMember(authorizationUrl: URL, account = 'nora'): Promise<URL> {
    const jar = new CookieJar();
    const host = new URL(fg.url).host;
    const opened = await browse(authorizationUrl.href, jar);
    assert.equal(opened.response.status, 200, opened.body);
    assert.match(opened.body, /Organization ID/, 'without `org`, the page asks for the organization');
    const post = async (path: string, form: Record<string, string>): Promise<Response> => {
      const url = new URL(path, fg.url);
      const answer = await fetch(url, {
        method: 'POST', redirect: 'manual', body: new URLSearchParams(form),
        headers: { Cookie: jar.header(url), Origin: fg.url, 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      jar.take(url, answer);
      return answer;
    };
    const orgStep = await post('/oauth/authorize', { csrf: hidden(opened.body, 'csrf'), request: hidden(opened.body, 'request'), org: orgId, step: 'org' });
    const withProvider = await orgStep.text();
    assert.equal(orgStep.status, 200, withProvider);
    const link = /<a id="oidc-sign-in" href="([^"]+)">Sign in with Test IdP<\/a>/.exec(withProvider)?.[1];
    assert.ok(link, `the page offers the organization's provider: ${withProvider.slice(0, 800)}`);
    idp.signInAs(account);
    const consent = await browse(new URL(unescape(link), fg.url).href, jar);
    assert.equal(consent.url.pathname, '/oauth/oidc/callback', `ended at ${consent.url.href}: ${consent.body.slice(0, 300)}`);
    assert.equal(consent.response.status, 200, consent.body);
    assert.match(consent.body, /until you are removed from the organization/);
    assert.ok(jar.get(host, 'fg_oauth'));
    const allowed = await post('/oauth/consent', { csrf: hidden(consent.body, 'csrf'), consent: hidden(consent.body, 'consent'), decision: 'allow' });
    assert.equal(allowed.status, 303);
    return new URL(allowed.headers.get('location') ?? '');
  }

  it('signs a member in through the provider, calls a tool as them, and refuses their token once they are removed', async () => {
    const provider = new MemoryProvider();
    const serverUrl = new URL(`${fg.url}/tools/mcp`);
    const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
    await assert.rejects(new Client({ name: 'member-test', version: '1.0.0' }).connect(transport), UnauthorizedError);
    assert.ok(provider.authorizationUrl, 'the SDK was sent to the authorization page');
    const back = await signInAsMember(provider.authorizationUrl);
    assert.equal(back.origin + back.pathname, REDIRECT_URI);
    await transport.finishAuth(back.searchParams.get('code') ?? '');
    const access = provider.saved?.access_token ?? '';
    assert.ok(access.startsWith('fgat_'));

    const client = new Client({ name: 'member-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
    try {
      const listed = await client.callTool({ name: 'listServers', arguments: {} });
      assert.notEqual(listed.isError, true, JSON.stringify(listed));
    } finally {
      await client.close();
    }

    // the member was created with the role the provider's groups map to, and the consent is theirs
    const members = await fg.admin<{ members: { id: string; email: string; role: string }[] }>('GET', '/api/v1/members');
    const nora = members.body.members.find((m) => m.email === 'nora@corp.example');
    assert.equal(nora?.role, 'operator');
    type Records = { records: { actor: string; action: string; credential: { kind: string } }[] };
    const consents = (await fg.admin<Records>('GET', '/api/v1/audit?action=oauth.authorized')).body.records;
    assert.ok(consents.some((r) => r.actor === `member:${nora?.id}`), `the consent names the member: ${JSON.stringify(consents)}`);

    // the member's current role applies to what their token may do: an operator may cancel a task (this one does not
    // exist), a viewer may not (refused naming the permission, within the verifier's one-second cache) but still lists
    const rpc = async (method: string, params: Record<string, unknown>): Promise<{ status: number; body: { result?: unknown; error?: { code: number; message: string; data?: unknown } } }> => {
      const answer = await fetch(serverUrl, {
        method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
        headers: { Authorization: `Bearer ${access}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      });
      return { status: answer.status, body: (await answer.json()) as { result?: unknown; error?: { code: number; message: string } } };
    };
    const asOperator = await rpc('tasks/cancel', { taskId: 'no-such-task' });
    assert.notEqual(asOperator.body.error?.code, -32003, JSON.stringify(asOperator.body));
    assert.equal((await fg.admin('PATCH', `/api/v1/members/${nora?.id}`, { role: 'viewer' })).status, 200);
    let refusal: Awaited<ReturnType<typeof rpc>> | undefined;
    for (const until = Date.now() + 15_000; Date.now() < until;) {
      refusal = await rpc('tasks/cancel', { taskId: 'no-such-task' });
      if (refusal.body.error?.code === -32003) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.deepEqual(refusal?.body.error, {
      code: -32003, message: 'permission_denied: the viewer role lacks the permission runs.operate', data: { permission: 'runs.operate', role: 'viewer' },
    });
    const listedAsViewer = await rpc('tools/list', {});
    assert.ok(listedAsViewer.body.result, JSON.stringify(listedAsViewer.body));

    // removed: their grant ends (within the verifier's one-second cache)
    assert.equal((await fg.admin('DELETE', `/api/v1/members/${nora?.id}`)).status, 200);
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < deadline) {
      const answer = await fetch(serverUrl, {
        method: 'POST', body: JSON.stringify(list),
        headers: { Authorization: `Bearer ${access}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      });
      await answer.arrayBuffer();
      status = answer.status;
      if (status === 401) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.equal(status, 401, 'a removed member\'s token is refused');
  });
  it('an approver signed in by URL decides through tasks/update only what is addressed to them, as themselves, and is named in the audit trail', async () => {
    idp.accounts.set('apu', { email: 'apu@corp.example', groups: ['approvers'] });
    const provider = new MemoryProvider();
    const serverUrl = new URL(`${fg.url}/tools/workflows`);
    const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
    await assert.rejects(new Client({ name: 'approver-test', version: '1.0.0' }).connect(transport), UnauthorizedError);
    assert.ok(provider.authorizationUrl);
    const back = await signInAsMember(provider.authorizationUrl, 'apu');
    await transport.finishAuth(back.searchParams.get('code') ?? '');
    const memberToken = provider.saved?.access_token ?? '';
    assert.ok(memberToken.startsWith('fgat_'));
    const members = await fg.admin<{ members: { id: string; email: string; role: string }[] }>('GET', '/api/v1/members');
    const apu = members.body.members.find((m) => m.email === 'apu@corp.example');
    assert.equal(apu?.role, 'approver');

    // two workflow tools, one asking apu and one asking someone else; each started as a task by an API key
    const tool = async (approvers: string[]): Promise<string> => {
      const name = `pay_${randomUUID().slice(0, 8)}`;
      await publishWorkflow(fg, {
        name: `pay-${randomUUID()}`,
        steps: [
          { name: 'Ask', type: 'approval', approvers, message: 'Pay invoice {{inputs.invoice}}?' },
          { name: 'Paid', type: 'template', template: 'paid {{inputs.invoice}}' },
        ],
      }, { tool: { name, description: `tool ${name}` } });
      return name;
    };
    const mine = await tool(['apu@corp.example', 'bob@corp.example']);
    const others = await tool(['bob@corp.example']);
    const { token: keyToken } = await runtimeToken(fg);
    const V2026 = '2026-07-28';
    const TASKS = 'io.modelcontextprotocol/tasks';
    const rpc = async (bearer: string, method: string, params: Record<string, unknown>, name?: string): Promise<{ status: number; body: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } } }> => {
      const answer = await fetch(serverUrl, {
        method: 'POST',
        body: JSON.stringify({
          jsonrpc: '2.0', id: randomUUID(), method,
          params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': V2026, 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } }, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } } },
        }),
        headers: {
          Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': V2026, 'Mcp-Method': method, ...(name === undefined ? {} : { 'Mcp-Name': name }),
        },
      });
      return { status: answer.status, body: (await answer.json()) as never };
    };
    const startTask = async (name: string): Promise<{ taskId: string; key: string }> => {
      const created = await rpc(keyToken, 'tools/call', { name, arguments: { invoice: 'INV-7' } }, name);
      assert.equal(created.body.result?.resultType, 'task', JSON.stringify(created.body));
      const taskId = String(created.body.result?.taskId);
      for (let i = 0; i < 80; i++) {
        const seen = await rpc(memberToken, 'tasks/get', { taskId }, taskId);
        const requests = seen.body.result?.inputRequests as Record<string, unknown> | undefined;
        if (seen.body.result?.status === 'input_required' && requests) return { taskId, key: Object.keys(requests)[0]! };
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      throw new Error(`task ${taskId} never waited on its approval`);
    };
    const answer = (key: string, content: Record<string, unknown>): Record<string, unknown> => ({ [key]: { action: 'accept', content } });

    // not addressed to apu: refused as permission_denied naming why; so is naming another approver on one that is
    const theirs = await startTask(others);
    const notMine = await rpc(memberToken, 'tasks/update', { taskId: theirs.taskId, inputResponses: answer(theirs.key, { decision: 'approve' }) }, theirs.taskId);
    assert.equal(notMine.body.error?.code, -32003, JSON.stringify(notMine.body));
    assert.match(notMine.body.error?.message ?? '', /^not_an_approver: apu@corp\.example is not an approver of step/);
    assert.deepEqual(notMine.body.error?.data, { refusal: 'NOT_AN_APPROVER' });
    const asBob = await rpc(memberToken, 'tasks/update', { taskId: theirs.taskId, inputResponses: answer(theirs.key, { decision: 'approve', approver: 'bob@corp.example' }) }, theirs.taskId);
    assert.equal(asBob.body.error?.code, -32003, JSON.stringify(asBob.body));
    assert.match(asBob.body.error?.message ?? '', /a member decides as themselves \(apu@corp\.example\), not as bob@corp\.example/);
    const stillWaiting = await rpc(memberToken, 'tasks/get', { taskId: theirs.taskId }, theirs.taskId);
    assert.equal(stillWaiting.body.result?.status, 'input_required', 'a refused answer decides nothing');

    // addressed to apu: decided as apu (the approver is their e-mail, the actor the member), the run completes
    const own = await startTask(mine);
    const decided = await rpc(memberToken, 'tasks/update', { taskId: own.taskId, inputResponses: answer(own.key, { decision: 'approve', comment: 'ok' }) }, own.taskId);
    assert.equal(decided.status, 200, JSON.stringify(decided.body));
    assert.equal(decided.body.error, undefined, JSON.stringify(decided.body));
    let done: Record<string, unknown> | undefined;
    for (let i = 0; i < 80 && done?.status !== 'completed'; i++) {
      done = (await rpc(memberToken, 'tasks/get', { taskId: own.taskId }, own.taskId)).body.result;
      if (done?.status !== 'completed') await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(done?.status, 'completed', JSON.stringify(done));
    const value = (done?.result as { structuredContent: { results: { stepIndex: number; result: string }[] } }).structuredContent;
    const approval = JSON.parse(value.results.find((r) => r.stepIndex === 1)!.result) as { outcome: string; decisions: { approver: string; actor: string; via: string }[] };
    assert.equal(approval.outcome, 'approved');
    assert.deepEqual(approval.decisions.map((d) => [d.approver, d.actor, d.via]), [['apu@corp.example', `member:${apu?.id}`, 'api']]);

    // the audit trail has each answer, refused or not, as the member's
    type Records = { records: { actor: string; actorName: string | null; outcome: string; target: { id: string }; credential: { kind: string } }[] };
    const records = (await fg.admin<Records>('GET', '/api/v1/audit?action=approval.decided')).body.records.filter((r) => r.actor === `member:${apu?.id}`);
    assert.deepEqual(records.map((r) => [r.target.id, r.outcome]).sort(), [[own.taskId, 'success'], [theirs.taskId, 'refused'], [theirs.taskId, 'refused']].sort());
    assert.ok(records.every((r) => r.actorName === 'apu@corp.example' && r.credential.kind === 'oauth_token'), JSON.stringify(records));

    // the organization's administrator sees apu's grant (never a token) and revokes it: apu's token is refused at once
    type Grants = { grants: { id: string; clientId: string; resource: string; subject: string; member: { id: string; email: string; role: string } | null; expiresAt: string }[] };
    const listed = await fg.admin<Grants>('GET', '/api/v1/oauth/grants');
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const grant = listed.body.grants.find((g) => g.member?.id === apu?.id);
    assert.ok(grant, JSON.stringify(listed.body));
    assert.deepEqual([grant.member, grant.subject], [{ id: apu?.id, email: 'apu@corp.example', role: 'approver' }, `member:${apu?.id}`]);
    assert.ok(Date.parse(grant.expiresAt) > Date.now());
    assert.doesNotMatch(JSON.stringify(listed.body), /fgat_|fgrt_/, 'no token is shown');
    const pat = await fg.admin<{ token: string }>('POST', `/api/v1/members/${apu?.id}/tokens`);
    const asApprover = await fetch(`${fg.url}/api/v1/oauth/grants`, { headers: { Authorization: `Bearer ${pat.body.token}` } });
    assert.equal(asApprover.status, 403);
    assert.deepEqual(await asApprover.json(), { error: 'permission_denied', message: 'the approver role lacks the permission org.manage' });
    assert.equal((await fg.admin('DELETE', `/api/v1/oauth/grants/${grant.id}`)).status, 204);
    assert.equal((await rpc(memberToken, 'tasks/get', { taskId: own.taskId }, own.taskId)).status, 401, 'a revoked grant\'s token is refused');
    assert.equal((await fg.admin('DELETE', `/api/v1/oauth/grants/${grant.id}`)).status, 404, 'no longer live');
    assert.ok(!(await fg.admin<Grants>('GET', '/api/v1/oauth/grants')).body.grants.some((g) => g.id === grant.id));
    const revocations = (await fg.admin<Records>('GET', '/api/v1/audit?action=oauth_grant.revoked')).body.records;
    assert.ok(revocations.some((r) => r.target.id === grant.id && r.outcome === 'success'), JSON.stringify(revocations));
  });
});
