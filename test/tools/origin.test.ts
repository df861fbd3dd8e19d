/**
 * DNS rebinding protection (docs/tool-gateway.md "Origin and Host"): the MCP endpoints (a
 * built-in server, the discovery server `mcp`, an organization's custom server, under any tools
 * base path) and the OAuth endpoints and documents refuse a present Origin that is not allowed,
 * and a Host that names none of the gateway's names, with 403 before the credential is looked at;
 * requests without an Origin, from the public URL's origin or one of FLOWGATE_ALLOWED_ORIGINS go on.
 * Hosts are sent over raw HTTP (fetch does not let a caller choose its Host header).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { TestFlowgate } from '../support/flowgate';
import { API_KEY, startFakeCustomerApi, type FakeCustomerApi } from '../support/fake-customer-api';
import { RPC_HEADERS, rpc, runtimeToken, startToolFlowgate, type RpcAnswer } from './support';
import { createCustomConnection, createServer, PETSTORE } from './custom-support';

const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
const EVIL = 'http://evil.example';

/** A POST of `body` to `url` with exactly these headers (Host included), over node:http. */
function rawPost(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

function assertRefused(answer: RpcAnswer, header: 'Origin' | 'Host', where: string): void {
  assert.equal(answer.status, 403, `${where}: ${answer.text}`);
  assert.equal(answer.body?.error?.code, -32000, where);
  assert.match(answer.body?.error?.message ?? '', new RegExp(`^forbidden: ${header} `), where);
}

describe('DNS rebinding protection: Origin and Host of the MCP and OAuth endpoints', () => {
  let fg: TestFlowgate;
  let api: FakeCustomerApi;
  let token = '';
  /** the organization's own custom server's path */
  let custom = '';

  before(async () => {
    api = await startFakeCustomerApi();
    fg = await startToolFlowgate({ FLOWGATE_ALLOWED_ORIGINS: 'https://app.example.com,http://localhost:6274' });
    token = (await runtimeToken(fg)).token;
    const pcid = await createCustomConnection(fg, fg.adminToken, { baseUrl: `${api.url}/api/v3`, testPath: '/health', auth: { kind: 'api_key', name: 'api_key', value: API_KEY } });
    custom = (await createServer(fg, fg.adminToken, { connection: pcid, document: PETSTORE })).path.replace(/^\/+/, '');
  });
  after(async () => {
    await fg?.stop();
    await api?.close();
  });

  it('refuses a valid token from Origin http://evil.example with 403 and a JSON-RPC error on /tools/mcp, a built-in server and a custom server', async () => {
    for (const server of ['mcp', 'mail', custom]) {
      assertRefused(await rpc(fg, server, token, LIST, { ...RPC_HEADERS, Origin: EVIL }), 'Origin', server);
      // the same request without an Origin (a non-browser client) goes on
      assert.equal((await rpc(fg, server, token, LIST)).status, 200, server);
    }
    // refused before the credential is looked at: without a token too, not a 401
    assertRefused(await rpc(fg, 'mcp', undefined, LIST, { ...RPC_HEADERS, Origin: EVIL }), 'Origin', 'no token');
  });

  it('takes the public URL\'s origin (under each loopback name), FLOWGATE_ALLOWED_ORIGINS, and Origin: null only from a same-origin page', async () => {
    const port = new URL(fg.url).port;
    for (const origin of [fg.url, `http://localhost:${port}`, `http://[::1]:${port}`, 'https://app.example.com', 'http://localhost:6274']) {
      const answer = await rpc(fg, 'mcp', token, LIST, { ...RPC_HEADERS, Origin: origin });
      assert.equal(answer.status, 200, `${origin}: ${answer.text}`);
    }
    for (const origin of [`https://127.0.0.1:${port}`, `http://localhost:${Number(port) + 1}`, 'https://app.example.com:8443', 'not an origin', 'null']) {
      assertRefused(await rpc(fg, 'mcp', token, LIST, { ...RPC_HEADERS, Origin: origin }), 'Origin', origin);
    }
    assert.equal((await rpc(fg, 'mcp', token, LIST, { ...RPC_HEADERS, Origin: 'null', 'Sec-Fetch-Site': 'same-origin' })).status, 200);
    assertRefused(await rpc(fg, 'mcp', token, LIST, { ...RPC_HEADERS, Origin: 'null', 'Sec-Fetch-Site': 'cross-site' }), 'Origin', 'null cross-site');
  });

  it('refuses a Host that is none of the gateway\'s names; listening on loopback, any loopback name on any port is one', async () => {
    const headers = { ...RPC_HEADERS, Authorization: `Bearer ${token}` };
    const url = `${fg.url}/tools/mcp`;
    const evil = await rawPost(url, { ...headers, Host: 'evil.example.com' }, JSON.stringify(LIST));
    assert.equal(evil.status, 403, evil.text);
    assert.match((JSON.parse(evil.text) as { error: { message: string } }).error.message, /^forbidden: Host evil\.example\.com /);
    // the conformance suite's pair: both rebinding headers at once
    assert.equal((await rawPost(url, { ...headers, Host: 'evil.example.com', Origin: 'http://evil.example.com' }, JSON.stringify(LIST))).status, 403);
    for (const host of ['localhost:1234', '127.0.0.1', '[::1]:80', 'app.example.com', 'localhost:6274']) {
      const answer = await rawPost(url, { ...headers, Host: host }, JSON.stringify(LIST));
      assert.equal(answer.status, 200, `${host}: ${answer.text}`);
    }
  });

  it('refuses an origin that is not allowed on the OAuth endpoints and documents, in the OAuth error shape; allowed origins get CORS', async () => {
    const register = JSON.stringify({ client_name: 'browser client', redirect_uris: ['http://127.0.0.1:9/cb'] });
    const refusals = [
      await fetch(`${fg.url}/oauth/register`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: EVIL }, body: register }),
      await fetch(`${fg.url}/oauth/token`, { method: 'POST', headers: { Origin: EVIL }, body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'y' }) }),
      await fetch(`${fg.url}/oauth/token`, { method: 'OPTIONS', headers: { Origin: EVIL, 'Access-Control-Request-Method': 'POST' } }),
      await fetch(`${fg.url}/.well-known/oauth-protected-resource/tools/mcp`, { headers: { Origin: EVIL } }),
      await fetch(`${fg.url}/.well-known/oauth-authorization-server`, { headers: { Origin: EVIL } }),
      await fetch(`${fg.url}/OAUTH/authorize`, { headers: { Origin: EVIL } }),
    ];
    for (const refused of refusals) {
      assert.equal(refused.status, 403, refused.url);
      const body = await refused.json() as { error: string; error_description: string };
      assert.equal(body.error, 'invalid_request');
      assert.match(body.error_description, /^forbidden: Origin http:\/\/evil\.example /);
    }
    const registered = await fetch(`${fg.url}/oauth/register`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: 'http://localhost:6274' }, body: register });
    assert.equal(registered.status, 201);
    assert.equal(registered.headers.get('access-control-allow-origin'), '*');
    const metadata = await fetch(`${fg.url}/.well-known/oauth-protected-resource/tools/mcp`, { headers: { Origin: fg.url } });
    assert.equal(metadata.status, 200);
  });
});

describe('DNS rebinding protection behind a public URL, under another tools base path', () => {
  let fg: TestFlowgate;
  let token = '';
  before(async () => {
    fg = await startToolFlowgate({ FLOWGATE_PUBLIC_URL: 'https://flowgate.example.com', FLOWGATE_TOOLS_BASE_PATH: '/gw', FLOWGATE_ALLOWED_HOSTS: 'gw-1.internal:8080' });
    token = (await runtimeToken(fg)).token;
  });
  after(async () => {
    await fg?.stop();
  });

  it('takes the public origin and host and FLOWGATE_ALLOWED_HOSTS; the listener\'s own origin is no longer the public one', async () => {
    assert.equal((await rpc(fg, 'mcp', token, LIST, { ...RPC_HEADERS, Origin: 'https://flowgate.example.com' }, '/gw')).status, 200);
    assertRefused(await rpc(fg, 'mcp', token, LIST, { ...RPC_HEADERS, Origin: fg.url }, '/gw'), 'Origin', 'the listener');
    assertRefused(await rpc(fg, 'mail', token, LIST, { ...RPC_HEADERS, Origin: EVIL }, '/gw'), 'Origin', 'mail under /gw');
    const headers = { ...RPC_HEADERS, Authorization: `Bearer ${token}` };
    for (const host of ['flowgate.example.com', 'flowgate.example.com:443', 'gw-1.internal:8080']) {
      const answer = await rawPost(`${fg.url}/gw/mcp`, { ...headers, Host: host }, JSON.stringify(LIST));
      assert.equal(answer.status, 200, `${host}: ${answer.text}`);
    }
    for (const host of ['evil.example.com', 'gw-1.internal:8081', 'flowgate.example.com.evil.example']) {
      assert.equal((await rawPost(`${fg.url}/gw/mcp`, { ...headers, Host: host }, JSON.stringify(LIST))).status, 403, host);
    }
  });
});
