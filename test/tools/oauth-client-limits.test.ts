/**
 * The limits on dynamically registered OAuth clients over real HTTP (docs/tool-gateway.md
 * "Registered clients: expiry and limits"): past FLOWGATE_OAUTH_PENDING_CLIENTS clients that have
 * not signed in, `POST /oauth/register` is an RFC 7591 error, 429 `too_many_requests` with
 * Retry-After, which the official SDK client reports as such; a client that signs in leaves the
 * pool; past FLOWGATE_OAUTH_CLIENTS_PER_ORG clients holding grants in an organization, the
 * consent goes back to the client as `access_denied`, saying why.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { MemoryProvider, REDIRECT_URI } from '../support/oauth-client';

function hidden(page: string, name: string): string {
  const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(page);
  if (!match?.[1]) throw new Error(`no hidden ${name} on the page: ${page.slice(0, 500)}`);
  return match[1];
}

describe('registered OAuth clients: limits over HTTP', () => {
  let fg: TestFlowgate;
  before(async () => {
    fg = await startTestFlowgate({ FLOWGATE_OAUTH_PENDING_CLIENTS: '2', FLOWGATE_OAUTH_CLIENTS_PER_ORG: '1' });
  });
  after(async () => {
    await fg?.stop();
  });

  const register = (): Promise<Response> => fetch(`${fg.url}/oauth/register`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ client_name: 'limits', redirect_uris: [REDIRECT_URI] }),
  });
  const registered = async (): Promise<string> => {
    const response = await register();
    assert.equal(response.status, 201);
    return z.object({ client_id: z.string() }).parse(await response.json()).client_id;
  };

  /** Opens the authorization URL, signs in with the admin token and allows: the redirect back to the client. */
  const signInAndAllow = async (clientId: string): Promise<{ back: URL; verifier: string }> => {
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(`${fg.url}/oauth/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, state: 'st', resource: `${fg.url}/tools`,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    }).toString();
    const opened = await fetch(url, { redirect: 'manual' });
    const signInPage = await opened.text();
    assert.equal(opened.status, 200, signInPage);
    const cookie = /fg_oauth=([^;]+)/.exec(opened.headers.get('set-cookie') ?? '')?.[0] ?? '';
    const post = (path: string, form: Record<string, string>): Promise<Response> => fetch(`${fg.url}${path}`, {
      method: 'POST', redirect: 'manual', body: new URLSearchParams(form), headers: { Cookie: cookie, Origin: fg.url, 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    const signedIn = await post('/oauth/authorize', { csrf: hidden(signInPage, 'csrf'), request: hidden(signInPage, 'request'), token: fg.adminToken });
    const consentPage = await signedIn.text();
    assert.equal(signedIn.status, 200, consentPage);
    const allowed = await post('/oauth/consent', { csrf: hidden(consentPage, 'csrf'), consent: hidden(consentPage, 'consent'), decision: 'allow' });
    assert.equal(allowed.status, 303);
    return { back: new URL(allowed.headers.get('location') ?? ''), verifier };
  };

  it('refuses a registration past the pool of clients not signed in yet with a clear 429, and counts per organization the clients holding grants', async () => {
    const first = await registered();
    await registered();

    const refused = await register();
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('cache-control'), 'no-store');
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter > 23 * 3600 && retryAfter <= 24 * 3600, `Retry-After ${retryAfter}: when the oldest expires`);
    const body = z.record(z.string(), z.unknown()).parse(await refused.json());
    assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
    assert.equal(body.error, 'too_many_requests');
    assert.match(String(body.error_description), /2 registered clients that have not signed in yet.*FLOWGATE_OAUTH_PENDING_CLIENTS/);

    // the official SDK client, sent to register, reports the refusal with its description
    const transport = new StreamableHTTPClientTransport(new URL(`${fg.url}/tools/mcp`), { authProvider: new MemoryProvider() });
    await assert.rejects(new Client({ name: 'limits-test', version: '1.0.0' }).connect(transport), /FLOWGATE_OAUTH_PENDING_CLIENTS/);

    // a client that signs in leaves the pool: registration reopens
    const { back, verifier } = await signInAndAllow(first);
    const exchanged = await fetch(`${fg.url}/oauth/token`, {
      method: 'POST', body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code') ?? '', code_verifier: verifier, client_id: first, redirect_uri: REDIRECT_URI }),
    });
    assert.equal(exchanged.status, 200, await exchanged.clone().text());
    const second = await registered();

    // the organization holds one registered client's grant, its limit: another client's consent is refused back to it
    const denied = await signInAndAllow(second);
    assert.equal(denied.back.origin + denied.back.pathname, REDIRECT_URI);
    assert.equal(denied.back.searchParams.get('error'), 'access_denied');
    assert.match(denied.back.searchParams.get('error_description') ?? '', /1 registered MCP clients signed in.*FLOWGATE_OAUTH_CLIENTS_PER_ORG/);
    assert.equal(denied.back.searchParams.get('code'), null);
    assert.equal(denied.back.searchParams.get('state'), 'st');
    const trail = await fg.admin<{ records: { action: string; outcome: string; target: { id: string | null } | null; details: Record<string, unknown> }[] }>('GET', '/api/v1/audit?action=oauth.');
    const consent = trail.body.records.find((r) => r.target?.id === second);
    assert.equal(consent?.action, 'oauth.authorized');
    assert.equal(consent.outcome, 'refused', 'an allowed consent the limit refused is recorded as refused');
    assert.equal(consent.details.error, 'access_denied');
    // the client already holding a grant there signs in again
    assert.ok((await signInAndAllow(first)).back.searchParams.get('code'));
  });
});
