/**
 * MCP clients sign in by URL (docs/tool-gateway.md "Signing in by URL"): the official SDK client,
 * given only the tool gateway's URL, gets the 401, discovers the metadata, registers, is sent to
 * the authorization page (driven here with fetch and form posts, as a browser would: cookie,
 * Origin, the page's hidden fields), exchanges the code and calls a tool. Then the token's
 * bindings: resource, organization, PKCE, single-use codes, refresh rotation, and a client named
 * by a client ID metadata document.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { TestFlowgate } from '../support/flowgate';
import { MemoryProvider, REDIRECT_URI } from '../support/oauth-client';
import { API_KEY, startFakeCustomerApi, type FakeCustomerApi } from '../support/fake-customer-api';
import { createOrg, rpc, runtimeToken, startToolFlowgate } from './support';
import { createCustomConnection, createServer, PETSTORE, type ServerBody } from './custom-support';

const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

function hidden(page: string, name: string): string {
  const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(page);
  if (!match?.[1]) throw new Error(`no hidden ${name} on the page: ${page.slice(0, 500)}`);
  return match[1];
}

/** What a person does in the browser: open the authorization URL, paste the admin token, allow. Answers the redirect back to the client. */
async function signInAndAllow(fg: TestFlowgate, authorizationUrl: URL | string, adminToken: string, decision = 'allow'): Promise<URL> {
  const opened = await fetch(authorizationUrl, { redirect: 'manual' });
  const signInPage = await opened.text();
  assert.equal(opened.status, 200, signInPage);
  const cookie = /fg_oauth=([^;]+)/.exec(opened.headers.get('set-cookie') ?? '')?.[0];
  assert.ok(cookie, 'the sign-in page sets its CSRF cookie');
  const post = (path: string, form: Record<string, string>): Promise<Response> => fetch(`${fg.url}${path}`, {
    method: 'POST', redirect: 'manual', body: new URLSearchParams(form),
    headers: { Cookie: cookie, Origin: fg.url, 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  const signedIn = await post('/oauth/authorize', { csrf: hidden(signInPage, 'csrf'), request: hidden(signInPage, 'request'), token: adminToken });
  const consentPage = await signedIn.text();
  assert.equal(signedIn.status, 200, consentPage);
  const allowed = await post('/oauth/consent', { csrf: hidden(consentPage, 'csrf'), consent: hidden(consentPage, 'consent'), decision });
  assert.equal(allowed.status, 303);
  return new URL(allowed.headers.get('location') ?? '');
}

/** A hand-made authorization request (what the SDK does, spelled out): PKCE pair and URL. */
function authorizationRequest(fg: TestFlowgate, clientId: string, resource: string, redirectUri = REDIRECT_URI, scope?: string): { url: URL; verifier: string } {
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(`${fg.url}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 'st-1', resource,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', ...(scope === undefined ? {} : { scope }),
  }).toString();
  return { url, verifier };
}

async function token(fg: TestFlowgate, form: Record<string, string>): Promise<{ status: number; body: Record<string, string> }> {
  const response = await fetch(`${fg.url}/oauth/token`, { method: 'POST', body: new URLSearchParams(form) });
  return { status: response.status, body: await response.json() as Record<string, string> };
}

async function register(fg: TestFlowgate, redirectUri = REDIRECT_URI): Promise<string> {
  const response = await fetch(`${fg.url}/oauth/register`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ client_name: 'by hand', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
  });
  assert.equal(response.status, 201);
  return ((await response.json()) as { client_id: string }).client_id;
}

/** Registers, signs in as `adminToken` for `resource` and exchanges the code: a fresh token pair. */
async function tokensFor(fg: TestFlowgate, adminToken: string, resource: string, scope?: string): Promise<{ access_token: string; refresh_token: string; clientId: string; scope?: string }> {
  const clientId = await register(fg);
  const { url, verifier } = authorizationRequest(fg, clientId, resource, REDIRECT_URI, scope);
  const back = await signInAndAllow(fg, url, adminToken);
  const exchanged = await token(fg, { grant_type: 'authorization_code', code: back.searchParams.get('code') ?? '', code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT_URI, resource });
  assert.equal(exchanged.status, 200, JSON.stringify(exchanged.body));
  return { access_token: exchanged.body.access_token ?? '', refresh_token: exchanged.body.refresh_token ?? '', clientId, ...(exchanged.body.scope ? { scope: exchanged.body.scope } : {}) };
}

describe('MCP clients sign in by URL (OAuth)', () => {
  let fg: TestFlowgate;
  let api: FakeCustomerApi;
  let petstore: ServerBody;
  /** the organization's own custom server, as it appears under /tools */
  let own = '';
  before(async () => {
    api = await startFakeCustomerApi();
    fg = await startToolFlowgate();
    const pcid = await createCustomConnection(fg, fg.adminToken, { baseUrl: `${api.url}/api/v3`, testPath: '/health', auth: { kind: 'api_key', name: 'api_key', value: API_KEY } });
    petstore = await createServer(fg, fg.adminToken, { connection: pcid, document: PETSTORE });
    own = petstore.path.replace(/^\/+/, '');
  });
  after(async () => {
    await fg?.stop();
    await api?.close();
  });

  it('the official SDK client, knowing only the URL, discovers, registers, signs in, and calls a tool', async () => {
    const provider = new MemoryProvider();
    const serverUrl = new URL(`${fg.url}/tools/mcp`);
    const first = new Client({ name: 'oauth-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
    await assert.rejects(first.connect(transport), UnauthorizedError);
    assert.ok(provider.client?.client_id.startsWith('fgc_'), 'registered dynamically');
    const authorizationUrl = provider.authorizationUrl;
    assert.ok(authorizationUrl, 'the SDK was sent to the authorization page');
    assert.equal(authorizationUrl.origin + authorizationUrl.pathname, `${fg.url}/oauth/authorize`);
    assert.equal(authorizationUrl.searchParams.get('resource'), serverUrl.href);
    assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');

    const back = await signInAndAllow(fg, authorizationUrl, fg.adminToken);
    assert.equal(back.origin + back.pathname, REDIRECT_URI);
    assert.equal(back.searchParams.get('iss'), fg.url);
    assert.equal(back.searchParams.get('state'), authorizationUrl.searchParams.get('state'));
    await transport.finishAuth(back.searchParams.get('code') ?? '');
    assert.ok(provider.saved?.access_token.startsWith('fgat_'));
    assert.ok(provider.saved?.refresh_token);

    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'listServers'));
      const listed = await client.callTool({ name: 'listServers', arguments: {} });
      const servers = (listed.structuredContent as { servers: { name: string }[] }).servers.map((s) => s.name);
      assert.ok(servers.includes(own), `the organization's own server is listed: ${servers.join(', ')}`);
      // the audit trail names the grant as the caller
      type Records = { records: { actor: string; credential: { kind: string; id: string } }[] };
      const deadline = Date.now() + 10_000;
      let audited: Records['records'] = [];
      while (audited.length === 0 && Date.now() < deadline) {
        audited = (await fg.admin<Records>('GET', '/api/v1/audit?action=tool.called&target=tool:mcp/listServers')).body.records.filter((r) => r.credential.kind === 'oauth_token');
      }
      assert.match(audited[0]?.actor ?? '', /^oauth:grant_/);
      const consented = await fg.admin<{ records: { actor: string; target: { type: string; id: string }; details: { resource: string } }[] }>('GET', `/api/v1/audit?action=oauth.authorized&target=oauth_client:${provider.client?.client_id ?? ''}`);
      assert.equal(consented.body.records[0]?.details.resource, serverUrl.href);
    } finally {
      await client.close();
    }
  });

  it('serves the metadata, and a 401 points at it', async () => {
    const refused = await rpc(fg, 'mcp', undefined, LIST);
    assert.equal(refused.status, 401);
    const challenge = refused.headers.get('www-authenticate') ?? '';
    assert.match(challenge, /^Bearer /);
    assert.ok(challenge.includes(`resource_metadata="${fg.url}/.well-known/oauth-protected-resource/tools/mcp"`), challenge);
    // the scope to ask for (the MCP authorization spec's scope selection), as the step-up challenge names it
    assert.ok(challenge.includes('scope="tools:call"'), challenge);
    const suffixed = await (await fetch(`${fg.url}/.well-known/oauth-protected-resource/tools/mcp`)).json() as Record<string, unknown>;
    assert.deepEqual([suffixed.resource, suffixed.authorization_servers], [`${fg.url}/tools/mcp`, [fg.url]]);
    const root = await (await fetch(`${fg.url}/.well-known/oauth-protected-resource`)).json() as Record<string, unknown>;
    assert.equal(root.resource, `${fg.url}/tools`);
    const as = await (await fetch(`${fg.url}/.well-known/oauth-authorization-server`)).json() as Record<string, unknown>;
    assert.equal(as.issuer, fg.url);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    assert.equal(as.client_id_metadata_document_supported, true);
    // a wrong token says so
    const wrong = await rpc(fg, 'mcp', 'fgat_not-a-real-token-at-all-000000', LIST);
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    assert.match(wrong.headers.get('www-authenticate') ?? '', /scope="tools:call"/);
  });

  it('serves protected-resource metadata only for server paths some organization has: 404 for the others, whoever asks', async () => {
    const metadataOf = (name: string): Promise<Response> => fetch(`${fg.url}/.well-known/oauth-protected-resource/tools/${name}`);
    // built-ins, the workflows server's fixed name, and the organization's custom server (by its id, no credential needed)
    for (const name of ['mcp', 'mail', 'workflows', own]) {
      const served = await metadataOf(name);
      assert.equal(served.status, 200, name);
      assert.equal((await served.json() as { resource: string }).resource, `${fg.url}/tools/${name}`);
    }
    // a name no server has, and one shaped like a custom server's id that no organization has
    for (const name of ['no-such-server', 'a'.repeat(20), 'bad%20name']) {
      const missing = await metadataOf(name);
      assert.equal(missing.status, 404, name);
      assert.equal((await missing.json() as { error: string }).error, 'not_found');
    }
  });

  it('a token is good only at its resource and for its organization; runtime tokens keep working', async () => {
    const forMcp = await tokensFor(fg, fg.adminToken, `${fg.url}/tools/mcp`);
    assert.equal((await rpc(fg, 'mcp', forMcp.access_token, LIST)).status, 200);
    // issued for /tools/mcp: refused at another server of the same gateway
    const elsewhere = await rpc(fg, own, forMcp.access_token, LIST);
    assert.equal(elsewhere.status, 401, elsewhere.text);
    // a resource that is not this gateway's is refused at the authorization step
    const clientId = await register(fg);
    const foreign = await fetch(authorizationRequest(fg, clientId, 'https://elsewhere.example/tools/mcp').url, { redirect: 'manual' });
    assert.equal(foreign.status, 303);
    assert.equal(new URL(foreign.headers.get('location') ?? '').searchParams.get('error'), 'invalid_target');

    // the whole gateway's token of organization A reaches A's own server; B's does not see it
    const gatewayA = await tokensFor(fg, fg.adminToken, `${fg.url}/tools`);
    assert.equal((await rpc(fg, own, gatewayA.access_token, LIST)).status, 200);
    const orgB = await createOrg(fg);
    const gatewayB = await tokensFor(fg, orgB.adminToken, `${fg.url}/tools`);
    const atA = await rpc(fg, own, gatewayB.access_token, LIST);
    assert.equal(atA.status, 404, atA.text);
    assert.equal((await rpc(fg, 'mcp', gatewayB.access_token, LIST)).status, 200);
    // rotating B's admin token (the credential B's grant was signed in with) ends B's grants
    const rotated = await fetch(`${fg.url}/api/v1/admin-token/rotate`, { method: 'POST', headers: { Authorization: `Bearer ${orgB.adminToken}` } });
    assert.equal(rotated.status, 201);
    const deadline = Date.now() + 10_000;
    let status = 200;
    while (status !== 401 && Date.now() < deadline) status = (await rpc(fg, 'mcp', gatewayB.access_token, LIST)).status;
    assert.equal(status, 401);

    const runtime = await runtimeToken(fg);
    assert.equal((await rpc(fg, 'mcp', runtime.token, LIST)).status, 200);
  });

  it('a grant for tools:read lists and reads but is refused a tool call with 403 insufficient_scope naming tools:call; an unknown scope is refused', async () => {
    const gateway = `${fg.url}/tools`;
    const asMeta = (await (await fetch(`${fg.url}/.well-known/oauth-authorization-server`)).json()) as { scopes_supported?: string[] };
    assert.deepEqual(asMeta.scopes_supported, ['tools:read', 'tools:call']);
    const prm = (await (await fetch(`${fg.url}/.well-known/oauth-protected-resource/tools/mcp`)).json()) as { scopes_supported?: string[] };
    assert.deepEqual(prm.scopes_supported, ['tools:read', 'tools:call']);

    const unknown = await fetch(authorizationRequest(fg, await register(fg), gateway, REDIRECT_URI, 'tools:read tools:admin').url, { redirect: 'manual' });
    assert.equal(unknown.status, 303);
    const refusedTo = new URL(unknown.headers.get('location') ?? '');
    assert.deepEqual([refusedTo.searchParams.get('error'), refusedTo.searchParams.get('error_description')],
      ['invalid_scope', 'unknown scope tools:admin: this server knows tools:read and tools:call']);

    const reader = await tokensFor(fg, fg.adminToken, gateway, 'tools:read');
    assert.equal(reader.scope, 'tools:read');
    assert.equal((await rpc(fg, 'mcp', reader.access_token, LIST)).status, 200);
    const catalog = await rpc(fg, 'mcp', reader.access_token, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'listServers', arguments: {} } });
    assert.equal(catalog.status, 200, catalog.text);
    assert.equal(catalog.body?.error, undefined, 'the catalog only reads');
    const act = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'anything', arguments: {} } };
    const refused = await rpc(fg, own, reader.access_token, act);
    assert.equal(refused.status, 403, refused.text);
    assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer realm="flowgate-tools", error="insufficient_scope", scope="tools:call", resource_metadata="[^"]+"$/);
    assert.deepEqual((refused.body?.error as { data?: unknown } | undefined)?.data, { scope: 'tools:call' });
    assert.equal(refused.body?.id, 3);
    assert.match(refused.body?.error?.message ?? '', /^insufficient_scope: this token's scope \(tools:read\) does not allow tools\/call; sign in again asking for tools:call$/);
    const batch = await rpc(fg, own, reader.access_token, [LIST, act]);
    assert.equal(batch.status, 403, 'a batch with one call beyond the scope');

    // asking for tools:call (or for nothing, as before) reaches what the admin token reaches
    const caller = await tokensFor(fg, fg.adminToken, gateway, 'tools:call tools:read');
    assert.equal(caller.scope, 'tools:read tools:call');
    const called = await rpc(fg, own, caller.access_token, act);
    assert.equal(called.status, 200, called.text);
    assert.notEqual(called.body?.error?.code, -32003);
  });

  it('refuses a PKCE mismatch and a reused code (which revokes what the code gave), and rotates refresh tokens', async () => {
    const resource = `${fg.url}/tools/mcp`;
    const clientId = await register(fg);
    const wrong = authorizationRequest(fg, clientId, resource);
    const wrongBack = await signInAndAllow(fg, wrong.url, fg.adminToken);
    const mismatch = await token(fg, { grant_type: 'authorization_code', code: wrongBack.searchParams.get('code') ?? '', code_verifier: randomBytes(32).toString('base64url'), client_id: clientId, redirect_uri: REDIRECT_URI });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.body.error, 'invalid_grant');
    assert.match(mismatch.body.error_description ?? '', /PKCE/);

    const { url, verifier } = authorizationRequest(fg, clientId, resource);
    const back = await signInAndAllow(fg, url, fg.adminToken);
    const exchange = { grant_type: 'authorization_code', code: back.searchParams.get('code') ?? '', code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT_URI };
    const first = await token(fg, exchange);
    assert.equal(first.status, 200);
    assert.equal((await rpc(fg, 'mcp', first.body.access_token, LIST)).status, 200);
    const again = await token(fg, exchange);
    assert.equal(again.status, 400);
    assert.equal(again.body.error, 'invalid_grant');
    const deadline = Date.now() + 10_000;
    let status = 200;
    while (status !== 401 && Date.now() < deadline) status = (await rpc(fg, 'mcp', first.body.access_token, LIST)).status;
    assert.equal(status, 401, 'the reused code\'s tokens are revoked');

    const pair = await tokensFor(fg, fg.adminToken, resource);
    const refreshed = await token(fg, { grant_type: 'refresh_token', refresh_token: pair.refresh_token, client_id: pair.clientId });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.notEqual(refreshed.body.refresh_token, pair.refresh_token);
    assert.equal((await rpc(fg, 'mcp', refreshed.body.access_token, LIST)).status, 200);
    const otherClient = await token(fg, { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token ?? '', client_id: clientId });
    assert.equal(otherClient.body.error, 'invalid_grant');
    const replayed = await token(fg, { grant_type: 'refresh_token', refresh_token: pair.refresh_token, client_id: pair.clientId });
    assert.equal(replayed.body.error, 'invalid_grant');
    const afterReplay = await token(fg, { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token ?? '', client_id: pair.clientId });
    assert.equal(afterReplay.body.error, 'invalid_grant', 'replaying a traded refresh token revokes the grant');

    // revocation (RFC 7009) ends the grant: its access token at once, its refresh token too
    const revocable = await tokensFor(fg, fg.adminToken, resource);
    const byOther = await fetch(`${fg.url}/oauth/revoke`, { method: 'POST', body: new URLSearchParams({ token: revocable.access_token, client_id: clientId }) });
    assert.equal(byOther.status, 200);
    assert.equal((await rpc(fg, 'mcp', revocable.access_token, LIST)).status, 200, 'another client cannot revoke it');
    const revoked = await fetch(`${fg.url}/oauth/revoke`, { method: 'POST', body: new URLSearchParams({ token: revocable.access_token, client_id: revocable.clientId }) });
    assert.equal(revoked.status, 200);
    assert.equal((await rpc(fg, 'mcp', revocable.access_token, LIST)).status, 401);
    assert.equal((await token(fg, { grant_type: 'refresh_token', refresh_token: revocable.refresh_token, client_id: revocable.clientId })).body.error, 'invalid_grant');
  });

  it('refuses a sign-in form posted from another site or without the CSRF cookie', async () => {
    const clientId = await register(fg);
    const opened = await fetch(authorizationRequest(fg, clientId, `${fg.url}/tools/mcp`).url, { redirect: 'manual' });
    const page = await opened.text();
    const cookie = /fg_oauth=([^;]+)/.exec(opened.headers.get('set-cookie') ?? '')?.[0] ?? '';
    const form = new URLSearchParams({ csrf: hidden(page, 'csrf'), request: hidden(page, 'request'), token: fg.adminToken });
    const crossSite = await fetch(`${fg.url}/oauth/authorize`, { method: 'POST', body: form, headers: { Cookie: cookie, Origin: 'https://evil.example' } });
    assert.equal(crossSite.status, 403);
    const noCookie = await fetch(`${fg.url}/oauth/authorize`, { method: 'POST', body: form, headers: { Origin: fg.url } });
    assert.equal(noCookie.status, 403);
    const badToken = await fetch(`${fg.url}/oauth/authorize`, { method: 'POST', body: new URLSearchParams({ ...Object.fromEntries(form), token: 'fga_not-an-admin-token-000' }), headers: { Cookie: cookie, Origin: fg.url } });
    assert.equal(badToken.status, 401);
    // an unknown client or a redirect URI it did not register: a page, never a redirect
    const unknown = await fetch(authorizationRequest(fg, 'fgc_unknown', `${fg.url}/tools/mcp`).url, { redirect: 'manual' });
    assert.equal(unknown.status, 400);
    const otherRedirect = await fetch(authorizationRequest(fg, clientId, `${fg.url}/tools/mcp`, 'http://127.0.0.1:9/elsewhere').url, { redirect: 'manual' });
    assert.equal(otherRedirect.status, 400);
  });

  it('takes a client named by a client ID metadata document (fetched through the outbound client)', async () => {
    let documentUrl = '';
    const host = http.createServer((req, res) => {
      if (req.url !== '/client.json') return void res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ client_id: documentUrl, client_name: 'Document client', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' }));
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    documentUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}/client.json`;
    try {
      const resource = `${fg.url}/tools/mcp`;
      const { url, verifier } = authorizationRequest(fg, documentUrl, resource);
      const back = await signInAndAllow(fg, url, fg.adminToken);
      const exchanged = await token(fg, { grant_type: 'authorization_code', code: back.searchParams.get('code') ?? '', code_verifier: verifier, client_id: documentUrl, redirect_uri: REDIRECT_URI, resource });
      assert.equal(exchanged.status, 200, JSON.stringify(exchanged.body));
      assert.equal((await rpc(fg, 'mcp', exchanged.body.access_token, LIST)).status, 200);
      // a document that names another client is refused
      const impostor = await fetch(authorizationRequest(fg, `${documentUrl}?x=1`, resource).url, { redirect: 'manual' });
      assert.equal(impostor.status, 400);
    } finally {
      await new Promise<void>((resolve) => host.close(() => resolve()));
    }
  });
});
