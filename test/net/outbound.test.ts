import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  OutboundRefusedError, OutboundTimeoutError, ResponseTooLargeError, TooManyRedirectsError,
  assertUrlAllowed, guardedLookup, isPrivateAddress, outboundRequest, type OutboundRequest,
} from '../../src/net/outbound';
import { missingPeer } from '../support/ci';

interface TestServer {
  url: string;
  port: number;
  /** TCP connections accepted, to prove a refused request never reached the server */
  connections: number;
  requests: http.IncomingMessage[];
  bodies: string[];
  close(): Promise<void>;
}

async function startServer(handler: http.RequestListener, host = '127.0.0.1'): Promise<TestServer> {
  const server = http.createServer();
  const state: TestServer = {
    url: '', port: 0, connections: 0, requests: [], bodies: [],
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  server.on('connection', () => { state.connections++; });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    state.requests.push(req);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.bodies.push(Buffer.concat(chunks).toString('utf8'));
      handler(req, res);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  state.port = (server.address() as AddressInfo).port;
  state.url = `http://${host}:${state.port}`;
  return state;
}

function request(overrides: Partial<OutboundRequest> & { url: string }): OutboundRequest {
  return { method: 'GET', headers: {}, timeoutMs: 5000, maxResponseBytes: 1024 * 1024, allowPrivateNetwork: false, ...overrides };
}

describe('isPrivateAddress', () => {
  const privateAddresses = [
    '127.0.0.1', '127.255.255.254', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1',
    '100.127.255.255', '169.254.169.254', '0.0.0.0', '224.0.0.1', '255.255.255.255',
    '::1', '::', '[::1]', 'fe80::1', 'fe80::1%eth0', 'fc00::1', 'fd12:3456::1', 'ff02::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', '0:0:0:0:0:ffff:c0a8:0101',
    '64:ff9b::10.0.0.1', '2002:0a00:0001::1', '64:ff9b:1::8.8.8.8', '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001:2::1', '2001:10::1', '2001:20::1', '100::1',
  ];
  for (const ip of privateAddresses) {
    it(`counts ${ip} as private`, () => {
      assert.equal(isPrivateAddress(ip), true);
    });
  }

  const publicAddresses = ['8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.1', '172.15.255.255', '172.32.0.1',
    '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8'];
  for (const ip of publicAddresses) {
    it(`counts ${ip} as public`, () => {
      assert.equal(isPrivateAddress(ip), false);
    });
  }

  it('fails closed on text that is not an IP address', () => {
    assert.equal(isPrivateAddress('example.com'), true);
    assert.equal(isPrivateAddress('1.2.3'), true);
    assert.equal(isPrivateAddress('1.2.3.256'), true);
  });
});

describe('assertUrlAllowed', () => {
  const policy = { allowPrivateNetwork: false };

  it('refuses schemes other than http and https', () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'gopher://example.com/', 'data:text/plain,x']) {
      assert.throws(() => assertUrlAllowed(new URL(url), policy), OutboundRefusedError);
    }
  });

  it('refuses private IP literals, including bracketed and IPv4-mapped IPv6 forms', () => {
    for (const url of ['http://127.0.0.1/', 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'https://[fe80::1]/', 'http://0x7f000001/', 'http://2130706433/']) {
      assert.throws(() => assertUrlAllowed(new URL(url), policy), OutboundRefusedError, url);
    }
  });

  it('lets names through to the guarded lookup, and public literals through', () => {
    assertUrlAllowed(new URL('https://example.com/'), policy);
    assertUrlAllowed(new URL('http://8.8.8.8/'), policy);
  });

  it('allows private literals when private networks are allowed', () => {
    assertUrlAllowed(new URL('http://127.0.0.1/'), { allowPrivateNetwork: true });
  });
});

describe('guardedLookup', () => {
  function resolve(hostname: string, all: boolean, policy = { allowPrivateNetwork: false }): Promise<unknown> {
    return new Promise((res, rej) => {
      guardedLookup(policy)(hostname, { all }, (err, address) => (err ? rej(err) : res(address)));
    });
  }

  it('refuses a name that resolves to loopback before any connection', async () => {
    await assert.rejects(resolve('localhost', false), OutboundRefusedError);
    await assert.rejects(resolve('localhost', true), OutboundRefusedError);
  });

  it('answers in the shape the caller asked for when allowed', async () => {
    const one = await resolve('localhost', false, { allowPrivateNetwork: true });
    assert.equal(typeof one, 'string');
    const all = await resolve('localhost', true, { allowPrivateNetwork: true });
    assert.ok(Array.isArray(all) && all.length > 0);
  });
});

describe('outboundRequest', () => {
  let servers: TestServer[] = [];
  async function serve(handler: http.RequestListener, host?: string): Promise<TestServer> {
    const s = await startServer(handler, host);
    servers.push(s);
    return s;
  }
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });

  it('returns status, headers, body and final URL when private networks are allowed', async () => {
    const s = await serve((_req, res) => { res.setHeader('x-test', 'yes'); res.end('hello'); });
    const res = await outboundRequest(request({ url: `${s.url}/a?b=1`, allowPrivateNetwork: true }));
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-test'], 'yes');
    assert.equal(res.body.toString(), 'hello');
    assert.equal(res.url, `${s.url}/a?b=1`);
  });

  it('sends method, headers and body', async () => {
    const s = await serve((_req, res) => res.end());
    await outboundRequest(request({ url: s.url, method: 'PUT', headers: { 'x-key': 'k' }, body: 'payload', allowPrivateNetwork: true }));
    assert.equal(s.requests[0]?.method, 'PUT');
    assert.equal(s.requests[0]?.headers['x-key'], 'k');
    assert.equal(s.bodies[0], 'payload');
  });

  it('refuses 127.0.0.1 without ever connecting', async () => {
    const s = await serve((_req, res) => res.end('secret'));
    await assert.rejects(outboundRequest(request({ url: s.url })), OutboundRefusedError);
    assert.equal(s.connections, 0);
  });

  it('refuses localhost (a name resolving to loopback) without ever connecting', async () => {
    const s = await serve((_req, res) => res.end('secret'));
    await assert.rejects(outboundRequest(request({ url: `http://localhost:${s.port}/` })), OutboundRefusedError);
    assert.equal(s.connections, 0);
  });

  for (const url of ['http://[::1]:9/', 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/', 'http://[::ffff:127.0.0.1]:9/']) {
    it(`refuses ${url}`, async () => {
      await assert.rejects(outboundRequest(request({ url, timeoutMs: 2000 })), OutboundRefusedError);
    });
  }

  it('refuses a non-http scheme', async () => {
    await assert.rejects(outboundRequest(request({ url: 'file:///etc/passwd', allowPrivateNetwork: true })), OutboundRefusedError);
  });

  it('follows redirects and reports the final URL', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/start') res.writeHead(302, { location: '/middle' }).end();
      else if (req.url === '/middle') res.writeHead(307, { location: '/end' }).end();
      else res.end(`at ${req.url}`);
    });
    const res = await outboundRequest(request({ url: `${s.url}/start`, allowPrivateNetwork: true }));
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), 'at /end');
    assert.equal(res.url, `${s.url}/end`);
  });

  it('turns a POST into a GET without body on 303, and keeps them on 307', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/see-other') res.writeHead(303, { location: '/done' }).end();
      else if (req.url === '/temporary') res.writeHead(307, { location: '/done' }).end();
      else res.end(req.method);
    });
    const seeOther = await outboundRequest(request({ url: `${s.url}/see-other`, method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' }, allowPrivateNetwork: true }));
    assert.equal(seeOther.body.toString(), 'GET');
    assert.equal(s.requests[1]?.headers['content-type'], undefined);
    const temporary = await outboundRequest(request({ url: `${s.url}/temporary`, method: 'POST', body: 'x', allowPrivateNetwork: true }));
    assert.equal(temporary.body.toString(), 'POST');
    assert.equal(s.bodies[3], 'x');
  });

  it('drops credentials when a redirect changes origin', async () => {
    const target = await serve((_req, res) => res.end());
    const origin = await serve((_req, res) => res.writeHead(302, { location: `${target.url}/` }).end());
    await outboundRequest(request({ url: origin.url, headers: { authorization: 'Bearer secret', 'x-other': 'kept' }, allowPrivateNetwork: true }));
    assert.equal(origin.requests[0]?.headers.authorization, 'Bearer secret');
    assert.equal(target.requests[0]?.headers.authorization, undefined);
    assert.equal(target.requests[0]?.headers['x-other'], 'kept');
  });

  it('re-checks every redirect hop and refuses one that leads to a blocked address', async function () {
    // Two loopback servers stand in for a public host and a private one: the policy blocks only
    // 127.0.0.2, so the first hop is allowed and the redirect must be judged on its own.
    let inner: TestServer;
    try {
      inner = await serve((_req, res) => res.end('internal'), '127.0.0.2');
    } catch (error) {
      missingPeer(this, 'the redirect re-check test (needs 127.0.0.2 on loopback)', `cannot listen on 127.0.0.2: ${error instanceof Error ? error.message : String(error)}`);
    }
    const outer = await serve((_req, res) => res.writeHead(302, { location: `${inner.url}/admin` }).end());
    const isBlockedAddress = (ip: string): boolean => ip === '127.0.0.2';
    await assert.rejects(outboundRequest(request({ url: outer.url, isBlockedAddress })), OutboundRefusedError);
    assert.equal(outer.requests.length, 1);
    assert.equal(inner.connections, 0);
  });

  it('gives up after maxRedirects', async () => {
    const s = await serve((_req, res) => res.writeHead(301, { location: '/again' }).end());
    await assert.rejects(outboundRequest(request({ url: s.url, maxRedirects: 2, allowPrivateNetwork: true })), TooManyRedirectsError);
    assert.equal(s.requests.length, 3);
  });

  it('aborts a body over maxResponseBytes, declared or streamed', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/declared') res.end('x'.repeat(5000));
      else {
        res.write('x'.repeat(600));
        res.write('x'.repeat(600));
        res.end();
      }
    });
    await assert.rejects(outboundRequest(request({ url: `${s.url}/declared`, maxResponseBytes: 1000, allowPrivateNetwork: true })), ResponseTooLargeError);
    await assert.rejects(outboundRequest(request({ url: `${s.url}/streamed`, maxResponseBytes: 1000, allowPrivateNetwork: true })), ResponseTooLargeError);
  });

  it('times out on a server that never answers', async () => {
    const s = await serve(() => { /* never answers */ });
    const started = Date.now();
    await assert.rejects(outboundRequest(request({ url: s.url, timeoutMs: 300, allowPrivateNetwork: true })), OutboundTimeoutError);
    assert.ok(Date.now() - started < 2000);
  });

  it('stops when the caller aborts, without calling it a timeout', async () => {
    const s = await serve(() => { /* never answers */ });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(
      outboundRequest(request({ url: s.url, allowPrivateNetwork: true, signal: controller.signal })),
      (error: unknown) => error instanceof Error && !(error instanceof OutboundTimeoutError),
    );
  });
});
