/**
 * The gateway's listener and the bounds on what one client may hold of it: a socket that has not
 * sent its headers within the header bound is answered 408 and closed (Node's headersTimeout,
 * checked every second instead of Node's 30 s); a request body from which nothing arrives for the
 * idle bound is answered 408 and closed, however long the upload may take while it keeps flowing;
 * and an address that already holds its share of open connections has a new one answered 429 and
 * closed before any byte of it is parsed. Node's requestTimeout stays the bound on a whole request.
 */
import http from 'node:http';
import type { Server, Socket } from 'node:net';
import type { Logger } from '../observability/logger';

export interface InboundLimits {
  /** a request's headers must be in within this long (from the connection, or the request's first byte on a kept-alive one) */
  headersTimeoutMs: number;
  /** a request body may go this long without a byte arriving */
  bodyIdleTimeoutMs: number;
  /** a request, headers and body, must be in within this long */
  requestTimeoutMs: number;
  /** how long an idle kept-alive connection stays open */
  keepAliveMs: number;
  /** open connections one client address may hold; 0: no limit */
  maxConnectionsPerAddress: number;
}

/** How often the bounds are checked: often enough that a cut comes within a fraction of its bound. */
export function checkIntervalMs(limits: Pick<InboundLimits, 'headersTimeoutMs' | 'bodyIdleTimeoutMs'>): number {
  return Math.max(50, Math.min(1000, Math.floor(Math.min(limits.headersTimeoutMs, limits.bodyIdleTimeoutMs) / 4)));
}

/** An IPv4 client reaching a dual-stack listener shows as ::ffff:a.b.c.d: the same client as a.b.c.d. */
export function clientAddress(socket: Socket): string | undefined {
  const address = socket.remoteAddress;
  return address?.startsWith('::ffff:') && address.includes('.') ? address.slice('::ffff:'.length) : address;
}

function rawAnswer(status: string, error: string, message: string): string {
  const body = JSON.stringify({ error, message });
  return `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** An http.Server with the bounds in place; the caller adds its 'request' listener and listens. */
export function createInboundServer(limits: InboundLimits, log: Logger): http.Server {
  const everyMs = checkIntervalMs(limits);
  const server = http.createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // Node's default is 30 s: a 20 s header bound would be enforced anywhere between 20 and 50 s.
    connectionsCheckingInterval: everyMs,
  });
  // Node counts the header bound from a message's first byte (or the connection's start), never
  // over a kept-alive connection's idle time: that one is keepAliveTimeout's alone.
  server.keepAliveTimeout = limits.keepAliveMs;
  const throttled = throttledWarning(log);
  if (limits.maxConnectionsPerAddress > 0) limitConnectionsPerAddress(server, limits.maxConnectionsPerAddress, throttled);
  cutStalledBodies(server, limits.bodyIdleTimeoutMs, everyMs, throttled);
  return server;
}

/**
 * A refused connection never reaches the HTTP parser: http.Server parses the sockets its own
 * 'connection' listener is given, so that listener is called only for admitted ones. The refusal
 * is written at once (a client reads it as the answer to the request it sends) and the socket is
 * closed when the client closes, or a second later.
 */
function limitConnectionsPerAddress(server: http.Server, max: number, warn: ThrottledWarning): void {
  const open = new Map<string, number>();
  const parse = server.listeners('connection');
  if (parse.length === 0) throw new Error('http.Server has no connection listener to put the per-address limit in front of');
  server.removeAllListeners('connection');
  const refusal = rawAnswer('429 Too Many Requests', 'too_many_connections',
    `this address already holds ${max} open connections to the gateway: reuse connections (keep-alive) or close idle ones`);
  server.on('connection', (socket: Socket) => {
    const address = clientAddress(socket);
    if (address === undefined) {
      socket.destroy(); // already gone
      return;
    }
    const count = open.get(address) ?? 0;
    if (count >= max) {
      warn('too_many_connections', `refused connections from an address that already holds ${max} (FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS)`, { address });
      socket.on('error', () => undefined);
      // a second in all, not of silence: a client that keeps sending cannot hold a refused socket
      const timer = setTimeout(() => socket.destroy(), 1000).unref();
      socket.once('close', () => clearTimeout(timer));
      socket.end(refusal);
      socket.resume(); // read and drop what the client sends, so the close is a clean one
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
    for (const listener of parse) listener.call(server, socket);
  });
}

/**
 * A request whose body stops arriving is cut once nothing came for `idleMs`: the clock runs only
 * while the gateway waits for the client (nothing of the body is buffered unread), so a handler
 * that reads slowly never gets its own client cut. One timer for the whole listener.
 */
function cutStalledBodies(server: http.Server, idleMs: number, everyMs: number, warn: ThrottledWarning): void {
  interface Receiving { req: http.IncomingMessage; socket: Socket; bytesRead: number; since: number }
  const receiving = new Set<Receiving>();
  const timeout = rawAnswer('408 Request Timeout', 'request_timeout',
    `no part of the request body arrived for ${idleMs / 1000} s: the request is cut (send the body without pauses that long)`);
  server.on('request', (req: http.IncomingMessage) => {
    // The 'request' event comes with the headers, before the parser has read any of the body; a
    // bodiless request is complete by the next sweep and leaves the set then.
    receiving.add({ req, socket: req.socket, bytesRead: req.socket.bytesRead, since: Date.now() });
  });
  const sweep = (): void => {
    const now = Date.now();
    for (const entry of receiving) {
      const { req, socket } = entry;
      if (req.complete || socket.destroyed) {
        receiving.delete(entry);
      } else if (socket.bytesRead !== entry.bytesRead || req.readableLength > 0) {
        entry.bytesRead = socket.bytesRead;
        entry.since = now;
      } else if (now - entry.since >= idleMs) {
        receiving.delete(entry);
        warn('body_idle', `cut requests whose body stalled for ${idleMs / 1000} s (FLOWGATE_BODY_IDLE_TIMEOUT_SECONDS)`, { address: clientAddress(socket) });
        // Like Node's own header and request timeouts: the answer only if none has begun.
        if (socket.writable && socket.bytesWritten === 0) socket.write(timeout);
        socket.destroy();
      }
    }
  };
  const timer = setInterval(sweep, everyMs).unref();
  server.once('close', () => clearInterval(timer));
}

type ThrottledWarning = (kind: string, message: string, fields: Record<string, unknown>) => void;

/** A flood of refusals is one log line a minute per kind, counting what it stands for. */
function throttledWarning(log: Logger, everyMs = 60_000): ThrottledWarning {
  const last = new Map<string, { at: number; suppressed: number }>();
  return (kind, message, fields) => {
    const now = Date.now();
    const seen = last.get(kind);
    if (seen && now - seen.at < everyMs) {
      seen.suppressed++;
      return;
    }
    last.set(kind, { at: now, suppressed: 0 });
    log.warn(message, { ...fields, ...(seen?.suppressed ? { moreSinceLastLine: seen.suppressed } : {}) });
  };
}

/** The port a listening server is bound to (a TCP listener's address is an object; a pipe's is a string). */
export function listeningPort(server: Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`the server does not listen on a TCP port (${String(address)})`);
  return address.port;
}
