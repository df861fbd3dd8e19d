/**
 * The load generator's HTTP/1.1 client for bench:compare: kept-alive sockets, requests written as
 * one buffer, answers parsed only as far as a benchmark needs (status, headers on demand, a body of
 * `Content-Length` bytes). On two cores the generator shares the CPU with what it measures: undici
 * spent 200 to 240 µs per call there, as much as flowgate spent answering a poll, so the rates read
 * the generator as much as the server. A caller on another machine takes nothing from the gateway.
 *
 * Not a general client: no pipelining, no TLS, no redirects, no trailers after a chunked body (the
 * SDK's MCP server sends chunked answers; the gateway and the bare route send a length).
 * Informational answers (103 Early Hints) are skipped.
 */
import net from 'node:net';

export interface RawReply {
  status: number;
  text: string;
  /** a response header by name (case-insensitive), parsed on demand */
  header(name: string): string | undefined;
}

const HEADER_END = Buffer.from('\r\n\r\n');

interface Pending {
  resolve(reply: RawReply): void;
  reject(error: Error): void;
}

/** One kept-alive connection, one request at a time. */
class Connection {
  private buffer: Buffer = Buffer.alloc(0);
  private pending: Pending | undefined;
  closed = false;

  constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    const fail = (error: Error): void => {
      this.closed = true;
      const pending = this.pending;
      this.pending = undefined;
      pending?.reject(error);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('the connection closed before an answer')));
  }

  send(request: Buffer): Promise<RawReply> {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket.write(request);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private parse(): void {
    for (;;) {
      const end = this.buffer.indexOf(HEADER_END);
      if (end === -1 || !this.pending) return;
      const head = this.buffer.subarray(0, end).toString('latin1');
      const status = Number(head.slice(9, 12));
      if (status >= 100 && status < 200) {
        this.buffer = this.buffer.subarray(end + 4);
        continue;
      }
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      if (!length && /\r\ntransfer-encoding:\s*chunked/i.test(head)) {
        const chunked = dechunk(this.buffer, end + 4);
        if (!chunked) return;
        this.buffer = this.buffer.subarray(chunked.end);
        const pending = this.pending;
        this.pending = undefined;
        pending.resolve({ status, text: chunked.text, header: (name) => headerOf(head, name) });
        continue;
      }
      if (!length) {
        this.pending.reject(new Error(`an answer without Content-Length: ${head.split('\r\n', 1)[0]}`));
        this.pending = undefined;
        return;
      }
      const bodyEnd = end + 4 + Number(length[1]);
      if (this.buffer.length < bodyEnd) return;
      const text = this.buffer.subarray(end + 4, bodyEnd).toString('utf8');
      this.buffer = this.buffer.subarray(bodyEnd);
      const pending = this.pending;
      this.pending = undefined;
      pending.resolve({ status, text, header: (name) => headerOf(head, name) });
    }
  }
}

/** A complete chunked body from `start` (its text, and where it ends), or undefined until all of it arrived. */
function dechunk(buffer: Buffer, start: number): { text: string; end: number } | undefined {
  const parts: Buffer[] = [];
  let at = start;
  for (;;) {
    const lineEnd = buffer.indexOf('\r\n', at);
    if (lineEnd === -1) return undefined;
    const size = parseInt(buffer.subarray(at, lineEnd).toString('latin1'), 16);
    if (size === 0) {
      if (buffer.length < lineEnd + 4) return undefined;
      return { text: Buffer.concat(parts).toString('utf8'), end: lineEnd + 4 };
    }
    if (buffer.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

function headerOf(head: string, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === wanted) return line.slice(colon + 1).trim();
  }
  return undefined;
}

/** Kept-alive connections to one origin; a request takes an idle one or opens another. */
export class RawHttpClient {
  private readonly idle: Connection[] = [];
  private readonly all = new Set<Connection>();
  private readonly host: string;
  private readonly port: number;
  private readonly hostHeader: string;

  constructor(origin: string) {
    const url = new URL(origin);
    if (url.protocol !== 'http:') throw new Error(`the bench client speaks plain HTTP only, not ${url.protocol}`);
    this.host = url.hostname;
    this.port = Number(url.port || 80);
    this.hostHeader = url.host;
  }

  private prepare(method: 'GET' | 'POST', pathname: string, headers: Record<string, string> = {}, body?: string): Buffer {
    const payload = body === undefined ? undefined : Buffer.from(body);
    const lines = [`${method} ${pathname} HTTP/1.1`, `Host: ${this.hostHeader}`];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    if (payload) lines.push(`Content-Length: ${payload.length}`);
    const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
    return payload ? Buffer.concat([head, payload]) : head;
  }

  async request(method: 'GET' | 'POST', pathname: string, headers: Record<string, string> = {}, body?: string): Promise<RawReply> {
    let connection = this.idle.pop();
    // a connection the server closed while it was idle
    while (connection?.closed) {
      this.all.delete(connection);
      connection = this.idle.pop();
    }
    connection ??= await this.open();
    try {
      return await connection.send(this.prepare(method, pathname, headers, body));
    } finally {
      if (connection.closed) this.all.delete(connection);
      else this.idle.push(connection);
    }
  }

  close(): void {
    for (const connection of this.all) connection.close();
    this.all.clear();
    this.idle.length = 0;
  }

  private open(): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: this.host, port: this.port }, () => {
        socket.off('error', reject);
        const connection = new Connection(socket);
        this.all.add(connection);
        resolve(connection);
      });
      socket.once('error', reject);
    });
  }
}
