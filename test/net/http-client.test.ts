import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { isPrivateAddress } from '../../src/net/address-policy';
import {
  httpAnswer, httpRequest, httpStream, OutboundRefusedError, OutboundTimeoutError, ResponseTooLargeError, TooManyRedirectsError,
  type HttpRequestOptions,
} from '../../src/net/http-client';

interface TestServer {
  url: string;
  port: number;
  /** TCP connections accepted, to prove a refused request never reached the server and pooled ones were reused */
  connections: number;
  sockets: Socket[];
  requests: http.IncomingMessage[];
  bodies: string[];
  close(): Promise<void>;
}

async function startServer(handler: http.RequestListener, host = '127.0.0.1'): Promise<TestServer> {
  const server = http.createServer();
  const state: TestServer = {
    url: '', port: 0, connections: 0, sockets: [], requests: [], bodies: [],
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  server.on('connection', (socket: Socket) => {
    state.connections++;
    state.sockets.push(socket);
  });
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

type Buffered = HttpRequestOptions & { maxResponseBytes: number };

function request(overrides: Partial<Buffered> & { url: string }): Buffered {
  return { method: 'GET', headers: {}, timeoutMs: 5000, maxResponseBytes: 1024 * 1024, allowPrivateNetwork: false, ...overrides };
}

/** Resolves when the socket closes, rejects if it is still open after `ms`. */
function closedWithin(socket: Socket, ms: number): Promise<number> {
  const started = Date.now();
  if (socket.destroyed) return Promise.resolve(0);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the socket was still open after ${ms} ms`)), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
  });
}

/** The next chunk of a stream, or a rejection when none arrives within `ms`. */
async function nextChunk(body: Readable, ms: number): Promise<string> {
  const iterator = body[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no chunk within ${ms} ms`)), ms);
  });
  try {
    const next = await Promise.race([iterator.next(), timeout]);
    assert.equal(next.done, false);
    return Buffer.from(next.value as Buffer).toString('utf8');
  } finally {
    clearTimeout(timer);
  }
}

async function readAll(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

describe('httpRequest, httpStream and httpAnswer', () => {
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

  describe('a buffered exchange', () => {
    it('returns status, headers, body and final URL when private networks are allowed', async () => {
      const s = await serve((_req, res) => { res.setHeader('x-test', 'yes'); res.end('hello'); });
      const res = await httpRequest(request({ url: `${s.url}/a?b=1`, allowPrivateNetwork: true }));
      assert.equal(res.status, 200);
      assert.equal(res.headers['x-test'], 'yes');
      assert.equal(res.body.toString(), 'hello');
      assert.equal(res.url, `${s.url}/a?b=1`);
    });

    it('sends method, headers and body, accepting a URL object', async () => {
      const s = await serve((_req, res) => res.end());
      await httpRequest(request({ url: `${s.url}/x`, method: 'put', headers: { 'x-key': 'k' }, body: 'payload', allowPrivateNetwork: true }));
      await httpRequest({ ...request({ url: '' }), url: new URL(`${s.url}/y`), body: Buffer.from('bytes'), method: 'POST', allowPrivateNetwork: true });
      assert.equal(s.requests[0]?.method, 'PUT');
      assert.equal(s.requests[0]?.headers['x-key'], 'k');
      assert.equal(s.bodies[0], 'payload');
      assert.equal(s.requests[1]?.url, '/y');
      assert.equal(s.bodies[1], 'bytes');
    });

    it('streams a Readable request body', async () => {
      const s = await serve((_req, res) => res.end());
      await httpRequest(request({ url: s.url, method: 'POST', body: Readable.from(['one ', 'two ', 'three']), allowPrivateNetwork: true }));
      assert.equal(s.bodies[0], 'one two three');
    });

    it('turns credentials in the URL into Basic authentication', async () => {
      const s = await serve((_req, res) => res.end());
      const res = await httpRequest(request({ url: `http://ada:p%40ss@127.0.0.1:${s.port}/`, allowPrivateNetwork: true }));
      assert.equal(s.requests[0]?.headers.authorization, `Basic ${Buffer.from('ada:p@ss').toString('base64')}`);
      assert.equal(res.url, `${s.url}/`);
    });

    it('leaves connection management headers to the client instead of failing', async () => {
      const s = await serve((_req, res) => res.end('ok'));
      const res = await httpRequest(request({ url: s.url, headers: { connection: 'close', 'keep-alive': '5', upgrade: 'h2c' }, allowPrivateNetwork: true }));
      assert.equal(res.body.toString(), 'ok');
      assert.equal(s.requests[0]?.headers.upgrade, undefined);
    });

    it('reuses one pooled connection for consecutive requests to the same origin', async () => {
      const s = await serve((_req, res) => res.end('pooled'));
      for (let i = 0; i < 3; i++) await httpRequest(request({ url: `${s.url}/${i}`, allowPrivateNetwork: true }));
      assert.equal(s.requests.length, 3);
      assert.equal(s.connections, 1);
    });

    it('reuses pooled connections under the address guard too', async () => {
      const s = await serve((_req, res) => res.end('pooled'));
      const isBlockedAddress = (ip: string): boolean => ip !== '127.0.0.1' && isPrivateAddress(ip);
      await httpRequest(request({ url: s.url, isBlockedAddress }));
      await httpRequest(request({ url: s.url, isBlockedAddress }));
      assert.equal(s.connections, 1);
    });
  });

  describe('the address guard', () => {
    it('refuses 127.0.0.1 without ever connecting', async () => {
      const s = await serve((_req, res) => res.end('secret'));
      await assert.rejects(httpRequest(request({ url: s.url })), OutboundRefusedError);
      await assert.rejects(httpStream(request({ url: s.url })), OutboundRefusedError);
      assert.equal(s.connections, 0);
    });

    it('refuses localhost (a name resolving to loopback) without ever connecting', async () => {
      const s = await serve((_req, res) => res.end('secret'));
      await assert.rejects(httpRequest(request({ url: `http://localhost:${s.port}/` })), OutboundRefusedError);
      assert.equal(s.connections, 0);
    });

    for (const url of ['http://[::1]:9/', 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/', 'http://[::ffff:127.0.0.1]:9/']) {
      it(`refuses ${url}`, async () => {
        await assert.rejects(httpRequest(request({ url, timeoutMs: 2000 })), OutboundRefusedError);
      });
    }

    it('refuses a non-http scheme', async () => {
      await assert.rejects(httpRequest(request({ url: 'file:///etc/passwd', allowPrivateNetwork: true })), OutboundRefusedError);
    });

    it('judges the connected address again in the connector, whatever the earlier checks said', async () => {
      // The first check (of the URL) passes and the connector's check refuses: the same split a DNS
      // answer that changes between check and connection would produce.
      const s = await serve((_req, res) => res.end('secret'));
      let calls = 0;
      const isBlockedAddress = (): boolean => ++calls > 1;
      await assert.rejects(httpRequest(request({ url: s.url, isBlockedAddress })), OutboundRefusedError);
      assert.equal(calls, 2);
      assert.equal(s.requests.length, 0);
    });

    it('re-checks every redirect hop and refuses one that leads to a blocked address', async () => {
      // Two loopback servers stand in for a public host and a private one: the policy blocks only
      // 127.0.0.2, so the first hop is allowed and the redirect must be judged on its own.
      const inner = await serve((_req, res) => res.end('internal'), '127.0.0.2');
      const outer = await serve((_req, res) => res.writeHead(302, { location: `${inner.url}/admin` }).end());
      const isBlockedAddress = (ip: string): boolean => ip === '127.0.0.2';
      await assert.rejects(httpRequest(request({ url: outer.url, isBlockedAddress })), OutboundRefusedError);
      assert.equal(outer.requests.length, 1);
      assert.equal(inner.connections, 0);
    });

    it('refuses a redirect to the cloud metadata address or another private literal', async () => {
      const outer = await serve((req, res) => {
        const location = req.url === '/metadata' ? 'http://169.254.169.254/latest/meta-data/' : `http://[::ffff:10.0.0.1]:${outer.port}/inside`;
        res.writeHead(301, { location }).end();
      });
      // everything private is blocked except the one loopback address standing in for a public host
      const isBlockedAddress = (ip: string): boolean => ip !== '127.0.0.1' && isPrivateAddress(ip);
      await assert.rejects(httpRequest(request({ url: `${outer.url}/metadata`, isBlockedAddress })), OutboundRefusedError);
      await assert.rejects(httpStream(request({ url: `${outer.url}/mapped`, isBlockedAddress })), OutboundRefusedError);
      assert.deepEqual(outer.requests.map((r) => r.url), ['/metadata', '/mapped']);
    });
  });

  describe('redirects', () => {
    it('follows redirects and reports the final URL', async () => {
      const s = await serve((req, res) => {
        if (req.url === '/start') res.writeHead(302, { location: '/middle' }).end();
        else if (req.url === '/middle') res.writeHead(307, { location: '/end' }).end('a body nobody reads');
        else res.end(`at ${req.url}`);
      });
      const res = await httpRequest(request({ url: `${s.url}/start`, allowPrivateNetwork: true }));
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
      const seeOther = await httpRequest(request({ url: `${s.url}/see-other`, method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' }, allowPrivateNetwork: true }));
      assert.equal(seeOther.body.toString(), 'GET');
      assert.equal(s.requests[1]?.headers['content-type'], undefined);
      const temporary = await httpRequest(request({ url: `${s.url}/temporary`, method: 'POST', body: 'x', allowPrivateNetwork: true }));
      assert.equal(temporary.body.toString(), 'POST');
      assert.equal(s.bodies[3], 'x');
    });

    it('refuses to follow a 307 that would need a streamed request body again', async () => {
      const s = await serve((req, res) => (req.url === '/temporary' ? res.writeHead(307, { location: '/done' }).end() : res.end()));
      await assert.rejects(httpRequest(request({ url: `${s.url}/temporary`, method: 'POST', body: Readable.from(['x']), allowPrivateNetwork: true })),
        /cannot be sent again/);
      assert.equal(s.requests.length, 1);
    });

    it('drops credentials when a redirect changes origin', async () => {
      const target = await serve((_req, res) => res.end());
      const origin = await serve((_req, res) => res.writeHead(302, { location: `${target.url}/` }).end());
      await httpRequest(request({ url: origin.url, headers: { authorization: 'Bearer secret', Cookie: 'a=b', 'x-other': 'kept' }, allowPrivateNetwork: true }));
      assert.equal(origin.requests[0]?.headers.authorization, 'Bearer secret');
      assert.equal(target.requests[0]?.headers.authorization, undefined);
      assert.equal(target.requests[0]?.headers.cookie, undefined);
      assert.equal(target.requests[0]?.headers['x-other'], 'kept');
    });

    it('gives up after maxRedirects', async () => {
      const s = await serve((_req, res) => res.writeHead(301, { location: '/again' }).end());
      await assert.rejects(httpRequest(request({ url: s.url, maxRedirects: 2, allowPrivateNetwork: true })), TooManyRedirectsError);
      assert.equal(s.requests.length, 3);
    });

    it('returns the 3xx as it is when maxRedirects is 0', async () => {
      const s = await serve((_req, res) => res.writeHead(302, { location: '/elsewhere' }).end('moved'));
      const res = await httpRequest(request({ url: s.url, maxRedirects: 0, allowPrivateNetwork: true }));
      assert.equal(res.status, 302);
      assert.equal(res.headers.location, '/elsewhere');
      assert.equal(res.body.toString(), 'moved');
      assert.equal(s.requests.length, 1);
    });
  });

  describe('limits', () => {
    it('aborts a body over maxResponseBytes, declared or streamed, and closes its connection', async () => {
      const s = await serve((req, res) => {
        if (req.url === '/declared') res.end('x'.repeat(5000));
        else {
          // no declared length and no end: the client must stop on what it counted
          res.write('x'.repeat(600));
          setTimeout(() => res.write('x'.repeat(600)), 50);
        }
      });
      await assert.rejects(httpRequest(request({ url: `${s.url}/declared`, maxResponseBytes: 1000, allowPrivateNetwork: true })), ResponseTooLargeError);
      await assert.rejects(httpRequest(request({ url: `${s.url}/streamed`, maxResponseBytes: 1000, allowPrivateNetwork: true })), ResponseTooLargeError);
      // a body cut short leaves its connection unusable, so it is closed rather than pooled
      const streamed = s.requests[1]?.socket;
      assert.ok(streamed);
      await closedWithin(streamed, 1000);
    });

    it('accepts a body of exactly maxResponseBytes', async () => {
      const s = await serve((_req, res) => res.end('x'.repeat(1000)));
      const res = await httpRequest(request({ url: s.url, maxResponseBytes: 1000, allowPrivateNetwork: true }));
      assert.equal(res.body.length, 1000);
    });

    it('times out on a server that never answers', async () => {
      const s = await serve(() => { /* never answers */ });
      const started = Date.now();
      await assert.rejects(httpRequest(request({ url: s.url, timeoutMs: 300, allowPrivateNetwork: true })), OutboundTimeoutError);
      assert.ok(Date.now() - started < 2000);
    });

    it('counts the buffered timeout over the whole exchange, body included', async () => {
      const s = await serve((_req, res) => {
        res.write('start');
        const ticker = setInterval(() => res.write('.'), 50);
        res.on('close', () => clearInterval(ticker));
      });
      await assert.rejects(httpRequest(request({ url: s.url, timeoutMs: 300, allowPrivateNetwork: true })), OutboundTimeoutError);
    });

    it('stops when the caller aborts, without calling it a timeout, and closes the connection at once', async () => {
      const s = await serve(() => { /* never answers */ });
      const controller = new AbortController();
      const pending = httpRequest(request({ url: s.url, allowPrivateNetwork: true, signal: controller.signal }));
      while (s.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      controller.abort();
      await assert.rejects(pending, (error: unknown) => error instanceof Error && !(error instanceof OutboundTimeoutError));
      const socket = s.sockets[0];
      assert.ok(socket);
      assert.ok(await closedWithin(socket, 1000) < 1000);
    });

    it('does not send at all when the signal is already aborted', async () => {
      const s = await serve((_req, res) => res.end());
      await assert.rejects(httpRequest(request({ url: s.url, allowPrivateNetwork: true, signal: AbortSignal.abort() })));
      assert.equal(s.requests.length, 0);
    });
  });

  describe('a streamed exchange', () => {
    it('hands over the first chunk before the body ends', async () => {
      let finish: (() => void) | undefined;
      const s = await serve((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: first\n\n');
        finish = () => res.end('data: last\n\n');
      });
      const res = await httpStream(request({ url: s.url, allowPrivateNetwork: true }));
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'text/event-stream');
      assert.equal(await nextChunk(res.body, 2000), 'data: first\n\n');
      assert.ok(finish, 'the server is still holding the body open');
      finish();
      assert.equal(await readAll(res.body), 'data: last\n\n');
    });

    it('follows redirects before streaming and reports the final URL', async () => {
      const s = await serve((req, res) => (req.url === '/old' ? res.writeHead(308, { location: '/new' }).end() : res.end('streamed')));
      const res = await httpStream(request({ url: `${s.url}/old`, allowPrivateNetwork: true }));
      assert.equal(res.url, `${s.url}/new`);
      assert.equal(await readAll(res.body), 'streamed');
    });

    it('closes the connection at once when the caller aborts mid-body, and ends the body with an error', async () => {
      const s = await serve((_req, res) => res.write('partial'));
      const controller = new AbortController();
      const res = await httpStream(request({ url: s.url, allowPrivateNetwork: true, signal: controller.signal }));
      assert.equal(await nextChunk(res.body, 2000), 'partial');
      const socket = s.sockets[0];
      assert.ok(socket);
      const closed = closedWithin(socket, 1000);
      const ended = assert.rejects(readAll(res.body));
      controller.abort();
      await closed;
      await ended;
    });

    it('closes the connection when the caller destroys the body unread', async () => {
      const s = await serve((_req, res) => res.write('partial'));
      const res = await httpStream(request({ url: s.url, allowPrivateNetwork: true }));
      const socket = s.sockets[0];
      assert.ok(socket);
      res.body.destroy();
      await closedWithin(socket, 1000);
    });

    it('times out waiting for headers', async () => {
      const s = await serve(() => { /* never answers */ });
      await assert.rejects(httpStream(request({ url: s.url, timeoutMs: 200, allowPrivateNetwork: true })), OutboundTimeoutError);
    });

    it('allows a long body while chunks keep coming, and times out on an idle gap', async () => {
      const s = await serve((req, res) => {
        res.write('tick');
        let sent = 0;
        const ticker = setInterval(() => {
          // /steady ends after 600 ms of 100 ms gaps; /stall goes quiet after the first chunk
          if (req.url === '/steady' && ++sent < 6) res.write('tick');
          else if (req.url === '/steady') {
            clearInterval(ticker);
            res.end();
          }
        }, 100);
        res.on('close', () => clearInterval(ticker));
      });
      const steady = await httpStream(request({ url: `${s.url}/steady`, timeoutMs: 300, allowPrivateNetwork: true }));
      assert.equal(await readAll(steady.body), 'tick'.repeat(6));
      const stall = await httpStream(request({ url: `${s.url}/stall`, timeoutMs: 300, allowPrivateNetwork: true }));
      await assert.rejects(readAll(stall.body), OutboundTimeoutError);
    });

    it('keeps the connection for the next request once a body was read to the end', async () => {
      const s = await serve((_req, res) => res.end('whole'));
      const first = await httpStream(request({ url: s.url, allowPrivateNetwork: true }));
      await readAll(first.body);
      const second = await httpStream(request({ url: s.url, allowPrivateNetwork: true }));
      await readAll(second.body);
      assert.equal(s.connections, 1);
    });
  });

  describe('an answer read whole unless it is a stream (httpAnswer)', () => {
    const isStream = (status: number, headers: Record<string, unknown>): boolean => status < 300 && headers['content-type'] === 'text/event-stream';
    const answer = (overrides: Partial<Omit<Buffered, 'body'>> & { url: string; body?: string }) => {
      const { body: _body, maxRedirects: _redirects, ...options } = request({ allowPrivateNetwork: true, ...overrides });
      return httpAnswer({ ...options, ...(overrides.body === undefined ? {} : { body: overrides.body }), streamIf: isStream });
    };

    it('reads a plain answer whole and keeps its connection for the next request', async () => {
      const s = await serve((_req, res) => {
        res.setHeader('content-type', 'application/json');
        // in two writes: the body arrives in more than one chunk
        res.write('{"a":');
        setTimeout(() => res.end('1}'), 20);
      });
      for (let i = 0; i < 3; i++) {
        const res = await answer({ url: `${s.url}/${i}`, method: 'POST', body: '{}' });
        assert.equal(res.streamed, false);
        assert.equal(res.status, 200);
        assert.equal(res.url, `${s.url}/${i}`);
        assert.equal(res.streamed ? '' : res.body.toString(), '{"a":1}');
      }
      assert.equal(s.connections, 1);
    });

    it('hands over a stream as it arrives when streamIf says so, idle gaps timing out', async () => {
      let finish: (() => void) | undefined;
      const s = await serve((req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: first\n\n');
        if (req.url === '/open') finish = () => res.end('data: last\n\n');
      });
      const res = await answer({ url: `${s.url}/open` });
      assert.ok(res.streamed);
      assert.equal(await nextChunk(res.body, 2000), 'data: first\n\n');
      assert.ok(finish, 'the server is still holding the body open');
      finish();
      assert.equal(await readAll(res.body), 'data: last\n\n');
      // a stream's deadline is for its headers, then for each gap: not for the whole body
      const stalled = await answer({ url: `${s.url}/stall`, timeoutMs: 300 });
      assert.ok(stalled.streamed);
      await assert.rejects(readAll(stalled.body), OutboundTimeoutError);
    });

    it('reads an error status whole whatever its type, as streamIf decides', async () => {
      const s = await serve((_req, res) => res.writeHead(503, { 'content-type': 'text/event-stream' }).end('busy'));
      const res = await answer({ url: s.url });
      assert.equal(res.streamed, false);
      assert.equal(res.status, 503);
      assert.equal(res.streamed ? '' : res.body.toString(), 'busy');
    });

    it('refuses a plain answer over maxResponseBytes, declared or as it arrives, and closes its connection', async () => {
      const s = await serve((req, res) => {
        if (req.url === '/declared') res.end('x'.repeat(5000));
        else {
          res.write('x'.repeat(600));
          setTimeout(() => res.write('x'.repeat(600)), 50);
        }
      });
      await assert.rejects(answer({ url: `${s.url}/declared`, maxResponseBytes: 1000 }), ResponseTooLargeError);
      await assert.rejects(answer({ url: `${s.url}/counted`, maxResponseBytes: 1000 }), ResponseTooLargeError);
      const counted = s.requests[1]?.socket;
      assert.ok(counted);
      await closedWithin(counted, 1000);
    });

    it('counts a plain answer\'s timeout over the whole exchange, body included', async () => {
      const s = await serve((_req, res) => {
        res.write('start');
        const ticker = setInterval(() => res.write('.'), 50);
        res.on('close', () => clearInterval(ticker));
      });
      await assert.rejects(answer({ url: s.url, timeoutMs: 300 }), OutboundTimeoutError);
    });

    it('answers a redirect as it is, without following it', async () => {
      const s = await serve((_req, res) => res.writeHead(307, { location: '/elsewhere' }).end());
      const res = await answer({ url: `${s.url}/old`, method: 'POST', body: '{}' });
      assert.equal(res.status, 307);
      assert.equal(res.headers.location, '/elsewhere');
      assert.equal(s.requests.length, 1);
    });

    it('refuses a private address unless allowed, before any connection', async () => {
      const s = await serve((_req, res) => res.end());
      await assert.rejects(answer({ url: s.url, allowPrivateNetwork: false }), OutboundRefusedError);
      assert.equal(s.connections, 0);
    });

    it('does not send at all when the signal is already aborted', async () => {
      const s = await serve((_req, res) => res.end());
      await assert.rejects(answer({ url: s.url, signal: AbortSignal.abort() }));
      assert.equal(s.requests.length, 0);
    });

    it('closes a stream\'s connection when the caller aborts mid-body or the reader stops early', async () => {
      const s = await serve((_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).write('data: partial\n\n'));
      const controller = new AbortController();
      const aborted = await answer({ url: s.url, signal: controller.signal });
      assert.ok(aborted.streamed);
      assert.equal(await nextChunk(aborted.body, 2000), 'data: partial\n\n');
      const first = s.sockets[0];
      assert.ok(first);
      const closed = closedWithin(first, 1000);
      controller.abort();
      await closed;
      await assert.rejects(readAll(aborted.body));
      const dropped = await answer({ url: s.url });
      assert.ok(dropped.streamed);
      assert.equal(await nextChunk(dropped.body, 2000), 'data: partial\n\n');
      const second = s.sockets[1];
      assert.ok(second);
      dropped.body.destroy();
      await closedWithin(second, 1000);
    });

    it('reports a plain answer cut short as an error, and a caller\'s abort as no timeout', async () => {
      const s = await serve((req, res) => {
        if (req.url === '/cut') {
          res.writeHead(200, { 'content-length': '1000' }).write('{"partial":');
          setTimeout(() => res.destroy(), 20);
        }
      });
      await assert.rejects(answer({ url: `${s.url}/cut` }), (error: unknown) => error instanceof Error && !(error instanceof OutboundTimeoutError));
      const controller = new AbortController();
      const pending = answer({ url: `${s.url}/never`, signal: controller.signal });
      while (s.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      controller.abort();
      await assert.rejects(pending, (error: unknown) => error instanceof Error && !(error instanceof OutboundTimeoutError));
    });
  });
});
