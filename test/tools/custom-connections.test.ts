import assert from 'node:assert/strict';
import { API_KEY, BASIC_PASSWORD, BASIC_USER, CLIENT_ID, CLIENT_SECRET, startFakeCustomerApi, type FakeCustomerApi } from '../support/fake-customer-api';
import type { TestFlowgate } from '../support/flowgate';
import { asAdmin, createCustomConnection, createServer, PETSTORE } from './custom-support';
import { callTool, runtimeToken, startToolFlowgate } from './support';

interface ConnectionBody {
  id: string;
  PCID: string;
  status: string;
  error?: string;
}

describe('custom connections', () => {
  let fg: TestFlowgate;
  let api: FakeCustomerApi;
  let token: string;

  before(async () => {
    api = await startFakeCustomerApi();
    fg = await startToolFlowgate();
    token = (await runtimeToken(fg)).token;
  });
  after(async () => {
    await fg?.stop();
    await api?.close();
  });

  const base = (): string => `${api.url}/api/v3`;

  it('stores API-key and basic credentials encrypted, shows status connected and never a secret, and tests them', async () => {
    const key = await createCustomConnection(fg, fg.adminToken, { baseUrl: base(), testPath: '/health', auth: { kind: 'api_key', in: 'query', name: 'api_key', value: API_KEY } });
    const basic = await createCustomConnection(fg, fg.adminToken, { baseUrl: base(), testPath: '/health', auth: { kind: 'basic', username: BASIC_USER, password: BASIC_PASSWORD } });
    const listed = await asAdmin<{ connections: ConnectionBody[] }>(fg, fg.adminToken, 'GET', '/api/v1/connections?application=custom');
    const mine = listed.body.connections.filter((c) => c.id === key || c.id === basic);
    assert.deepEqual(mine.map((c) => c.status), ['connected', 'connected']);
    assert.doesNotMatch(JSON.stringify(listed.body), new RegExp(`${API_KEY}|${BASIC_PASSWORD}`));

    const tested = await asAdmin<{ ok: boolean; status: number }>(fg, fg.adminToken, 'POST', `/api/v1/connections/${key}/test`);
    assert.deepEqual([tested.status, tested.body.ok, tested.body.status], [200, true, 200]);
    assert.equal(api.requests[api.requests.length - 1]?.query.api_key, API_KEY, 'the key went as a query parameter');
    const testedBasic = await asAdmin<{ ok: boolean }>(fg, fg.adminToken, 'POST', `/api/v1/connections/${basic}/test`);
    assert.equal(testedBasic.body.ok, true);
    assert.match(String(api.requests[api.requests.length - 1]?.headers.authorization), /^Basic /);
  });

  it('answers what the provider said when the test fails', async () => {
    const wrong = await createCustomConnection(fg, fg.adminToken, { baseUrl: base(), testPath: '/health', auth: { kind: 'basic', username: BASIC_USER, password: 'wrong' } });
    const tested = await asAdmin<{ ok: boolean; status: number; body: unknown }>(fg, fg.adminToken, 'POST', `/api/v1/connections/${wrong}/test`);
    assert.equal(tested.status, 200);
    assert.deepEqual([tested.body.ok, tested.body.status, tested.body.body], [false, 401, { code: 401, type: 'error', message: 'not authorized' }]);
    const unknown = await asAdmin(fg, fg.adminToken, 'POST', '/api/v1/connections/pc_nothing/test');
    assert.equal(unknown.status, 404);
  });

  it('client credentials: one token request for many concurrent calls, reused until it expires, renewed on a 401', async () => {
    const pcid = await createCustomConnection(fg, fg.adminToken, {
      baseUrl: base(), testPath: '/health',
      auth: { kind: 'oauth2_client_credentials', tokenUrl: `${api.url}/oauth/token`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: ['read:pets'] },
    });
    const server = await createServer(fg, fg.adminToken, { connection: pcid, document: PETSTORE });
    api.tokenDelayMs = 200;
    const before = api.tokenRequests.length;
    const calls = await Promise.all(Array.from({ length: 8 }, () => callTool(fg, server.id, token, 'getPetById', { PCID: pcid, petId: 10 })));
    api.tokenDelayMs = 0;
    assert.ok(calls.every((c) => c.body?.result?.isError === false), JSON.stringify(calls.map((c) => c.body)));
    const issued = api.tokenRequests.slice(before);
    assert.equal(issued.length, 1, 'concurrent calls share one token request');
    assert.equal(issued[0]?.grant, 'client_credentials');
    assert.equal(issued[0]?.fields.scope, 'read:pets');
    assert.match(issued[0]?.authorization ?? '', /^Basic /);

    await callTool(fg, server.id, token, 'getInventory', { PCID: pcid });
    assert.equal(api.tokenRequests.length, before + 1, 'the cached token is reused');

    api.revokeAccessTokens();
    const renewed = await callTool(fg, server.id, token, 'getPetById', { PCID: pcid, petId: 10 });
    assert.equal(renewed.body?.result?.isError, false);
    assert.equal(api.tokenRequests.length, before + 2, 'a 401 fetched one new token and the call was retried');
  });

  it('client credentials: a token that expires is fetched again', async () => {
    const pcid = await createCustomConnection(fg, fg.adminToken, {
      baseUrl: base(), auth: { kind: 'oauth2_client_credentials', tokenUrl: `${api.url}/oauth/token`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, clientAuth: 'body' },
    });
    const server = await createServer(fg, fg.adminToken, { connection: pcid, document: PETSTORE });
    api.expiresIn = 1;
    try {
      const before = api.tokenRequests.length;
      await callTool(fg, server.id, token, 'getInventory', { PCID: pcid });
      assert.equal(api.tokenRequests[before]?.fields.client_id, CLIENT_ID, 'client secret sent in the form when asked');
      // the behaviour under test is the token's age: let the 1 s token come within the refresh margin
      await new Promise((r) => setTimeout(r, 600));
      await callTool(fg, server.id, token, 'getInventory', { PCID: pcid });
      assert.equal(api.tokenRequests.length, before + 2);
    } finally {
      api.expiresIn = 3600;
    }
  });

  it('client credentials refused by the provider: the test says why and the connection shows error', async () => {
    const pcid = await createCustomConnection(fg, fg.adminToken, {
      baseUrl: base(), auth: { kind: 'oauth2_client_credentials', tokenUrl: `${api.url}/oauth/token`, clientId: CLIENT_ID, clientSecret: 'wrong' },
    });
    const tested = await asAdmin<{ ok: boolean; error: string; connectionStatus: string }>(fg, fg.adminToken, 'POST', `/api/v1/connections/${pcid}/test`);
    assert.equal(tested.body.ok, false);
    assert.equal(tested.body.connectionStatus, 'error');
    assert.match(tested.body.error, /invalid_client: Client authentication failed/);
    const got = await asAdmin<ConnectionBody>(fg, fg.adminToken, 'GET', `/api/v1/connections/${pcid}`);
    assert.deepEqual([got.body.status, got.body.error], ['error', 'invalid_client: Client authentication failed']);
  });

  it('authorization code: pending until consent, PKCE and state on the way, connected after the callback, error when refresh is refused', async () => {
    const pcid = await createCustomConnection(fg, fg.adminToken, {
      baseUrl: base(), testPath: '/health',
      auth: { kind: 'oauth2_authorization_code', authorizeUrl: `${api.url}/oauth/authorize`, tokenUrl: `${api.url}/oauth/token`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: ['read:pets', 'write:pets'] },
    });
    const server = await createServer(fg, fg.adminToken, { connection: pcid, document: PETSTORE });
    assert.equal((await asAdmin<ConnectionBody>(fg, fg.adminToken, 'GET', `/api/v1/connections/${pcid}`)).body.status, 'pending');
    const early = await callTool(fg, server.id, token, 'getInventory', { PCID: pcid });
    assert.equal(early.body?.error?.code, -32000);
    assert.match(early.body?.error?.message ?? '', /waiting for consent/);

    const start = await asAdmin(fg, fg.adminToken, 'GET', `/api/v1/connections/${pcid}/oauth/authorize`);
    assert.equal(start.status, 302);
    const authorize = new URL(start.headers.get('location') ?? '');
    assert.equal(authorize.origin + authorize.pathname, `${api.url}/oauth/authorize`);
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authorize.searchParams.get('scope'), 'read:pets write:pets');
    assert.equal(authorize.searchParams.get('redirect_uri'), `${fg.url}/api/v1/oauth/callback`);

    // the user consents at the provider, which redirects the browser to the callback
    const consent = await fetch(authorize, { redirect: 'manual' });
    const callback = consent.headers.get('location') ?? '';
    const forged = new URL(callback);
    forged.searchParams.set('state', `${forged.searchParams.get('state') ?? ''}x`);
    assert.equal((await fetch(forged)).status, 400, 'a state this gateway did not hand out is refused');
    const finished = await fetch(callback);
    assert.equal(finished.status, 200, await finished.clone().text());
    assert.equal((await fetch(callback)).status, 400, 'a callback is good once');
    const exchange = api.tokenRequests.filter((t) => t.grant === 'authorization_code').pop();
    assert.ok(exchange?.fields.code_verifier, 'the code was exchanged with its PKCE verifier');
    assert.equal((await asAdmin<ConnectionBody>(fg, fg.adminToken, 'GET', `/api/v1/connections/${pcid}`)).body.status, 'connected');

    const called = await callTool(fg, server.id, token, 'getPetById', { PCID: pcid, petId: 10 });
    assert.equal(called.body?.result?.isError, false, JSON.stringify(called.body));

    // the access token is revoked; the refresh token renews it
    api.revokeAccessTokens();
    const refreshed = await callTool(fg, server.id, token, 'getPetById', { PCID: pcid, petId: 10 });
    assert.equal(refreshed.body?.result?.isError, false);
    assert.equal(api.tokenRequests[api.tokenRequests.length - 1]?.grant, 'refresh_token');

    api.refuseRefresh = true;
    try {
      api.revokeAccessTokens();
      const refused = await callTool(fg, server.id, token, 'getPetById', { PCID: pcid, petId: 10 });
      assert.equal(refused.body?.error?.code, -32000);
      assert.match(refused.body?.error?.message ?? '', /invalid_grant: Token has been expired or revoked/);
      const got = await asAdmin<ConnectionBody>(fg, fg.adminToken, 'GET', `/api/v1/connections/${pcid}`);
      assert.deepEqual([got.body.status, got.body.error], ['error', 'invalid_grant: Token has been expired or revoked.']);
      assert.doesNotMatch(JSON.stringify(got.body), /rt-|at-/, 'no token is shown');
    } finally {
      api.refuseRefresh = false;
    }
  });

  it('authorization code: a consent the user refuses marks the connection error with the reason', async () => {
    const pcid = await createCustomConnection(fg, fg.adminToken, {
      baseUrl: base(),
      auth: { kind: 'oauth2_authorization_code', authorizeUrl: `${api.url}/oauth/authorize`, tokenUrl: `${api.url}/oauth/token`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: ['forbidden'] },
    });
    const start = await asAdmin(fg, fg.adminToken, 'GET', `/api/v1/connections/${pcid}/oauth/authorize`);
    const consent = await fetch(start.headers.get('location') ?? '', { redirect: 'manual' });
    const finished = await fetch(consent.headers.get('location') ?? '');
    assert.equal(finished.status, 400);
    assert.match(((await finished.json()) as { message: string }).message, /access_denied: The user denied access/);
    const got = await asAdmin<ConnectionBody>(fg, fg.adminToken, 'GET', `/api/v1/connections/${pcid}`);
    assert.deepEqual([got.body.status, got.body.error], ['error', 'access_denied: The user denied access']);
  });

  it('refuses to delete a connection a server still calls with', async () => {
    const pcid = await createCustomConnection(fg, fg.adminToken, { baseUrl: base(), auth: { kind: 'api_key', name: 'api_key', value: API_KEY } });
    const server = await createServer(fg, fg.adminToken, { connection: pcid, document: PETSTORE });
    assert.equal((await asAdmin(fg, fg.adminToken, 'DELETE', `/api/v1/connections/${pcid}`)).status, 409);
    assert.equal((await asAdmin(fg, fg.adminToken, 'DELETE', `/api/v1/servers/${server.id}`)).status, 204);
    assert.equal((await asAdmin(fg, fg.adminToken, 'DELETE', `/api/v1/connections/${pcid}`)).status, 204);
  });
});
