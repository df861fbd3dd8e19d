/**
 * The console's Connections and Tool servers pages in a real browser (Debian's Chromium through
 * playwright-core) against a real OAuth authorization server on loopback (the fake customer API):
 * signs in, creates an authorization-code connection, presses Connect, and the browser goes to the
 * provider's consent and back through the gateway's callback to the console, which shows it
 * connected; then tests it, opens the custom tool server generated from the Petstore document,
 * fills the tool's generated form and reads the result. Over plain HTTP: another organization's
 * connection, server and tool are 404 pages, and a POST without the CSRF token is refused (403).
 * FLOWGATE_CONSOLE_SCREENSHOTS=<dir> keeps the pages docs/console.md shows.
 */
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchChromium, shot } from '../support/chromium';
import { startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { CLIENT_ID, CLIENT_SECRET, startFakeCustomerApi, type FakeCustomerApi } from '../support/fake-customer-api';
import { asAdmin, createCustomConnection, createServer, PETSTORE } from '../tools/custom-support';

interface Session {
  cookie: string;
  csrf: string;
}

describe('console connections and tool servers in a browser', () => {
  let fg: TestFlowgate;
  let api: FakeCustomerApi;
  let browser: Browser;
  let pcid = '';
  let serverName = '';

  before(async () => {
    browser = await launchChromium();
    api = await startFakeCustomerApi();
    fg = await startTestFlowgate();
  });
  after(async () => {
    await browser?.close();
    await fg?.stop();
    await api?.close();
  });

  it('creates an OAuth connection, connects it at the provider and back, tests it, and tries a tool from its generated form', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
    page.on('pageerror', (error) => problems.push(error.message));

    await page.goto(`${fg.url}/console/sign-in`);
    await page.fill('#token', fg.adminToken);
    await Promise.all([page.waitForURL('**/console/runs'), page.click('button[type="submit"]')]);

    await page.click('nav >> text=Connections');
    await page.waitForURL('**/console/connections');
    await page.fill('#c-name', 'Pets (OAuth)');
    await page.fill('#c-base', `${api.url}/api/v3`);
    await page.fill('#c-test', '/health');
    await page.selectOption('#c-kind', 'oauth2_authorization_code');
    await page.fill('#c-authorize', `${api.url}/oauth/authorize`);
    await page.fill('#c-token', `${api.url}/oauth/token`);
    await page.fill('#c-client', CLIENT_ID);
    await page.fill('#c-secret', CLIENT_SECRET);
    await page.fill('#c-scopes', 'read:pets write:pets');
    await Promise.all([page.waitForURL(/\/console\/connections\/[^/?]+\?done=created$/), page.click('text=Create connection >> nth=0')]);
    pcid = decodeURIComponent(new URL(page.url()).pathname.split('/').pop() ?? '');
    assert.equal(await page.textContent('[data-connection-status]'), 'pending', 'waiting for consent');
    assert.ok(!(await page.content()).includes(CLIENT_SECRET), 'the secret is never shown');

    // Connect: the browser goes to the provider's consent (a real OAuth redirect with state and PKCE),
    // back to the gateway's callback, and on to the console's connection page
    const consents = api.requests.filter((r) => r.path === '/oauth/authorize').length;
    await Promise.all([page.waitForURL(/\/console\/connections\/[^/?]+\?done=connected$/, { timeout: 30_000 }), page.click('button:text-is("Connect")')]);
    const authorize = api.requests.filter((r) => r.path === '/oauth/authorize');
    assert.equal(authorize.length, consents + 1, 'the browser went to the provider');
    assert.equal(authorize[authorize.length - 1]?.query.redirect_uri, `${fg.url}/api/v1/oauth/callback`);
    assert.equal(authorize[authorize.length - 1]?.query.code_challenge_method, 'S256');
    assert.match(await page.textContent('.notice') ?? '', /Connected/);
    assert.equal(await page.textContent('[data-connection-status]'), 'connected');
    assert.equal(api.tokenRequests.filter((t) => t.grant === 'authorization_code').length, 1, 'the code was exchanged');
    await shot(page, 'console-connections');

    await Promise.all([page.waitForNavigation(), page.click('button:text-is("Test")')]);
    assert.match(await page.textContent('[data-test-outcome]') ?? '', /Passed.*answered 200/);

    // the API's view agrees
    const viaApi = await asAdmin<{ status: string }>(fg, fg.adminToken, 'GET', `/api/v1/connections/${pcid}`);
    assert.equal(viaApi.body.status, 'connected');

    const server = await createServer(fg, fg.adminToken, { name: 'Petstore', connection: pcid, document: PETSTORE });
    serverName = server.path.replace(/^\//, '');
    await page.click('nav >> text=Tool servers');
    await page.waitForURL('**/console/servers');
    assert.match(await page.textContent('main table') ?? '', /built-in/, 'the built-in servers are listed');
    await Promise.all([page.waitForURL(`**/console/servers/${serverName}`), page.click(`a:text-is("${serverName}")`)]);
    await Promise.all([page.waitForURL('**/tools/getPetById'), page.click('a:text-is("getPetById")')]);
    // the generated form: PCID a choice of this organization's custom connections, petId a number
    assert.deepEqual(await page.$$eval('select[name="PCID"] option', (options) => options.map((o) => (o as unknown as { value: string }).value).filter(Boolean)), [pcid]);
    assert.equal(await page.getAttribute('input[name="petId"]', 'type'), 'number');
    await page.fill('input[name="petId"]', '10');
    await Promise.all([page.waitForNavigation(), page.click('button:text-is("Call getPetById")')]);
    assert.equal(await page.getAttribute('[data-tool-outcome]', 'data-tool-outcome'), 'ok');
    const result = JSON.parse(await page.textContent('[data-tool-result]') ?? '{}') as Record<string, unknown>;
    assert.equal(JSON.stringify(result).includes('doggie'), true, JSON.stringify(result));
    assert.equal(await page.inputValue('input[name="petId"]'), '10', 'the form keeps what was sent');
    await shot(page, 'console-tool-try');

    // a pet that is not there: the tool ran and failed, shown as an error
    await page.fill('input[name="petId"]', '999');
    await Promise.all([page.waitForNavigation(), page.click('button:text-is("Call getPetById")')]);
    assert.equal(await page.getAttribute('[data-tool-outcome]', 'data-tool-outcome'), 'error');
    assert.deepEqual(problems, [], 'no script errors or CSP violations');
    await context.close();

    const audit = await asAdmin<{ records: { action: string; target: { id: string | null } | null; details: Record<string, unknown> }[] }>(fg, fg.adminToken, 'GET', '/api/v1/audit?limit=100');
    const viaConsole = audit.body.records.filter((r) => r.details.via === 'console');
    for (const action of ['connection.created', 'connection.consent_started', 'connection.tested', 'tool.called']) {
      assert.ok(viaConsole.some((r) => r.action === action), `${action} recorded: ${viaConsole.map((r) => r.action).join(', ')}`);
    }
    assert.ok(viaConsole.some((r) => r.action === 'tool.called' && r.target?.id === `${serverName}/getPetById`));
    assert.ok(viaConsole.some((r) => r.action === 'connection.created' && r.target?.id === pcid));
  });

  it('another organization sees 404 pages; a POST without the CSRF token is refused; a refused consent comes back said', async () => {
    assert.ok(pcid && serverName, 'the first test made them');
    const org = await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: 'other' });
    assert.equal(org.status, 201);
    const signIn = async (token: string): Promise<Session> => {
      const response = await fg.request('/console/sign-in', {
        method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: fg.url }, body: new URLSearchParams({ token }),
      });
      assert.equal(response.status, 303);
      const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      const csrf = /name="csrf" value="([^"]+)"/.exec(await (await fg.request('/console/connections', { headers: { Cookie: cookie } })).text())?.[1] ?? '';
      assert.ok(csrf.length > 20);
      return { cookie, csrf };
    };
    const post = (s: Session, pathname: string, form: Record<string, string>) => fg.request(pathname, {
      method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: s.cookie, Origin: fg.url }, body: new URLSearchParams(form),
    });
    const other = await signIn(org.body.adminToken);
    const get = (pathname: string) => fg.request(pathname, { headers: { Cookie: other.cookie } });
    assert.equal((await get(`/console/connections/${pcid}`)).status, 404);
    assert.equal((await get(`/console/servers/${serverName}`)).status, 404);
    assert.equal((await get(`/console/servers/${serverName}/tools/getPetById`)).status, 404);
    assert.doesNotMatch(await (await get('/console/connections')).text(), new RegExp(pcid), 'not in its list');
    for (const action of ['test', 'connect', 'delete']) {
      assert.equal((await post(other, `/console/connections/${pcid}/${action}`, { csrf: other.csrf })).status, 404, action);
    }
    assert.equal((await post(other, `/console/servers/${serverName}/tools/getPetById`, { csrf: other.csrf, PCID: pcid, petId: '10' })).status, 404);

    const own = await signIn(fg.adminToken);
    assert.equal((await post(own, `/console/connections/${pcid}/delete`, {})).status, 403, 'no CSRF token');
    assert.equal((await post(own, `/console/servers/${serverName}/tools/getPetById`, { PCID: pcid, petId: '10' })).status, 403, 'no CSRF token');
    assert.equal((await post(own, '/console/connections', { application: 'custom' })).status, 403, 'no CSRF token');
    assert.equal((await asAdmin(fg, fg.adminToken, 'GET', `/api/v1/connections/${pcid}`)).status, 200, 'still there');
    // in use by the server: the console says so (409), as the API does
    assert.equal((await post(own, `/console/connections/${pcid}/delete`, { csrf: own.csrf })).status, 409);
    // bad input: a clear 400 page
    assert.equal((await post(own, '/console/connections', { csrf: own.csrf, application: 'custom', baseUrl: 'ftp://x', authKind: 'basic' })).status, 400);
    assert.equal((await get('/console/servers/nope')).status, 404);

    // a consent the user refuses at the provider: back on the connection page, which says so
    const refusedPcid = await createCustomConnection(fg, fg.adminToken, {
      baseUrl: `${api.url}/api/v3`,
      auth: { kind: 'oauth2_authorization_code', authorizeUrl: `${api.url}/oauth/authorize`, tokenUrl: `${api.url}/oauth/token`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: ['forbidden'] },
    });
    const refreshOf = (body: string): string => (/<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec(body)?.[1] ?? '').replaceAll('&amp;', '&');
    const connecting = await post(own, `/console/connections/${refusedPcid}/connect`, { csrf: own.csrf });
    assert.equal(connecting.status, 200);
    const consent = await fetch(refreshOf(await connecting.text()), { redirect: 'manual' });
    const callback = await fetch(consent.headers.get('location') ?? '', { redirect: 'manual' });
    assert.equal(callback.status, 400);
    const back = refreshOf(await callback.text());
    assert.equal(back, `/console/connections/${refusedPcid}?error=refused`);
    const shown = await (await fg.request(back, { headers: { Cookie: own.cookie } })).text();
    assert.match(shown, /The provider refused the consent/);
    assert.match(shown, /access_denied: The user denied access/);
  });
});
