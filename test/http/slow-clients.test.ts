/**
 * Slow clients are cut at the bounds (issue 28, finding 7): raw sockets (node:net) on loopback
 * against a real flowgate whose bounds are shrunk to seconds. A header drip is cut at the header
 * bound; a body that stalls past the idle bound is cut and leaves no spooled file; a body that keeps
 * flowing slowly is not cut; a kept-alive idle connection outlives both bounds; and one address
 * cannot hold more than its share of connections while another address still gets in. The
 * per-address cases connect from 127.0.0.2 and 127.0.0.3 (Linux routes all of 127/8 to loopback;
 * elsewhere that is a missing peer: a failure under CI=true).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { echoInputsWorkflow, type AttachmentsSyncBody } from '../support/echo-workflow';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { filesUnder } from '../support/multipart';
import { missingPeer } from '../support/ci';
import { s3ServerForSuite } from '../support/versitygw';

const HEADERS_TIMEOUT_S = 1;
const BODY_IDLE_S = 2;
const MAX_PER_ADDRESS = 3;

/** A raw connection: what it received, and whether (and when) it closed. */
class RawClient {
  received = Buffer.alloc(0);
  closedAt: number | undefined;
  readonly openedAt = Date.now();
  private readonly changed = new Set<() => void>();

  constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.notify();
    });
    socket.on('error', () => undefined); // a reset is one way of being cut; 'close' follows
    socket.on('close', () => {
      this.closedAt = Date.now();
      this.notify();
    });
  }

  /** `allowHalfOpen`: keep sending after the server has finished its side */
  static async open(port: number, localAddress?: string, allowHalfOpen = false): Promise<RawClient> {
    const socket = net.connect({ host: '127.0.0.1', port, allowHalfOpen, ...(localAddress ? { localAddress } : {}) });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new RawClient(socket);
  }

  get text(): string {
    return this.received.toString('utf8');
  }

  write(data: string | Buffer): void {
    if (!this.socket.destroyed) this.socket.write(data);
  }

  /** Resolves once `done` holds; fails the test when the deadline passes first. */
  async until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
    if (done()) return;
    await new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (!done()) return;
        finish();
        resolve();
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`${what}: not within ${timeoutMs} ms; received so far: ${JSON.stringify(this.text.slice(0, 500))}`));
      }, timeoutMs);
      const finish = (): void => {
        clearTimeout(timer);
        this.changed.delete(check);
      };
      this.changed.add(check);
    });
  }

  /** The final answers received so far, as status codes (a trigger call may send 103 Early Hints first). */
  statuses(): number[] {
    return [...this.text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])).filter((status) => status >= 200);
  }

  close(): void {
    this.socket.destroy();
  }

  private notify(): void {
    for (const listener of [...this.changed]) listener();
  }
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether this machine lets a socket bind a second loopback address as its source. */
async function canBind(address: string, port: number): Promise<boolean> {
  try {
    (await RawClient.open(port, address)).close();
    return true;
  } catch {
    return false;
  }
}

/** The head of a multipart trigger call with one file part, and its closing bytes. */
function multipartUpload(p: Published, fileBytes: number): { head: string; tail: string } {
  const boundary = `----slow-${Math.random().toString(16).slice(2)}`;
  const partHead = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\nContent-Type: text/plain\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  const length = Buffer.byteLength(partHead) + fileBytes + Buffer.byteLength(tail);
  const head = `POST /ext/triggers/${p.triggerId} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-KEY: ${p.apiKey}\r\nX-API-Wait: true\r\n`
    + `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n${partHead}`;
  return { head, tail };
}

/**
 * Starts an upload, waits until its file is being spooled (`spooling()` lists it), stops sending,
 * and expects the cut: 408, the connection closed, and nothing left that `left()` lists.
 */
async function stallUpload(client: RawClient, p: Published, spooling: () => string[], left: () => string[]): Promise<void> {
  client.write(multipartUpload(p, 1024 * 1024).head);
  client.write(Buffer.alloc(64 * 1024, 0x61)); // part of the file, then nothing more
  const deadline = Date.now() + 15_000;
  while (spooling().length === 0 && client.closedAt === undefined && Date.now() < deadline) await pause(50);
  assert.equal(spooling().length, 1, `a spooled upload is in progress (closed: ${client.closedAt !== undefined}, received ${client.text})`);

  await client.until('the stalled body is cut', () => client.closedAt !== undefined, 15_000);
  assert.deepEqual(client.statuses(), [408], client.text);
  assert.match(client.text, /"error":"request_timeout"/);
  const cleanDeadline = Date.now() + 15_000;
  while (left().length > 0 && Date.now() < cleanDeadline) await pause(50);
  assert.deepEqual(left(), [], 'nothing of the cut upload is left');
}

describe('gateway listener: slow clients are cut at the bounds', function () {
  this.timeout(120_000);
  let fg: TestFlowgate;
  let p: Published;
  let port: number;
  const clients: RawClient[] = [];

  before(async () => {
    fg = await startTestFlowgate({
      FLOWGATE_HEADERS_TIMEOUT_SECONDS: String(HEADERS_TIMEOUT_S),
      FLOWGATE_BODY_IDLE_TIMEOUT_SECONDS: String(BODY_IDLE_S),
      FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS: String(MAX_PER_ADDRESS),
      FLOWGATE_KEEP_ALIVE_SECONDS: '30',
    });
    p = await publishWorkflow(fg, echoInputsWorkflow);
    port = Number(new URL(fg.url).port);
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });
  after(async () => {
    await fg?.stop();
  });

  const open = async (localAddress?: string, allowHalfOpen = false): Promise<RawClient> => {
    const client = await RawClient.open(port, localAddress, allowHalfOpen);
    clients.push(client);
    return client;
  };

  const blobFiles = (): string[] => filesUnder(path.join(fg.dataDir, 'blobs'));
  const partials = (): string[] => blobFiles().filter((f) => f.endsWith('.partial'));

  it('cuts a client that drips its header lines once the header bound passes, with 408', async () => {
    const client = await open();
    client.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n`);
    // a header line every 200 ms, for as long as the connection lasts (the old listener allowed 66 s)
    const drip = setInterval(() => client.write(`X-Drip: ${Date.now()}\r\n`), 200);
    try {
      await client.until('the header drip is cut', () => client.closedAt !== undefined, 15_000);
    } finally {
      clearInterval(drip);
    }
    assert.deepEqual(client.statuses(), [408], client.text);
    assert.ok(client.closedAt! - client.openedAt >= HEADERS_TIMEOUT_S * 1000 - 100, 'not cut before the bound');
  });

  it('cuts a body that stalls longer than the idle bound with 408, and its spooled file is removed', async () => {
    const before = new Set(blobFiles());
    // the local store spools into a .partial file beside the blob
    await stallUpload(await open(), p, partials, () => blobFiles().filter((f) => !before.has(f)));
    assert.equal((await fg.request('/healthz')).status, 200, 'the gateway still serves');
  });

  it('does not cut a body that keeps flowing slowly within the idle bound, past both bounds in all', async () => {
    const client = await open();
    const chunks = 20;
    const chunk = Buffer.alloc(512, 0x62);
    const { head, tail } = multipartUpload(p, chunks * chunk.length);
    client.write(head);
    // 20 chunks 250 ms apart: about 5 s in all, more than twice the idle bound and five times the header bound
    for (let i = 0; i < chunks && client.closedAt === undefined; i++) {
      await pause(250);
      client.write(chunk);
    }
    assert.equal(client.closedAt, undefined, `a steady upload is not cut (received ${client.text})`);
    client.write(tail);
    await client.until('the upload is answered', () => client.closedAt !== undefined, 60_000);
    assert.deepEqual(client.statuses(), [200], client.text);
    const body = JSON.parse(client.text.slice(client.text.lastIndexOf('\r\n\r\n') + 4)) as AttachmentsSyncBody;
    assert.equal(body.status, 'COMPLETE');
    assert.equal(body.inputs.attachments[0]?.size, chunks * chunk.length);
    assert.ok(Date.now() - client.openedAt > 2 * BODY_IDLE_S * 1000);
  });

  it('keeps an idle kept-alive connection open past both bounds, and serves its next request', async () => {
    const client = await open();
    client.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await client.until('the first answer', () => client.statuses().length === 1 && client.text.endsWith('}'), 15_000);
    // idle on purpose, longer than the header and body bounds (the keep-alive bound here is 30 s)
    await pause((Math.max(HEADERS_TIMEOUT_S, BODY_IDLE_S) + 1) * 1000);
    assert.equal(client.closedAt, undefined, 'the idle connection is still open');
    client.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await client.until('the second answer', () => client.closedAt !== undefined, 15_000);
    assert.deepEqual(client.statuses(), [200, 200], client.text);
  });

  it(`refuses the connection over ${MAX_PER_ADDRESS} from one address with 429, while another address still gets in`, async function () {
    if (!(await canBind('127.0.0.2', port)) || !(await canBind('127.0.0.3', port))) {
      missingPeer(this, 'second loopback addresses 127.0.0.2 and 127.0.0.3', 'this machine does not route them to loopback (Linux does)');
    }
    const ask = (client: RawClient, close = false): void =>
      client.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n${close ? 'Connection: close\r\n' : ''}\r\n`);
    const answered = (client: RawClient, n: number) => (): boolean => client.statuses().length >= n && client.text.endsWith('}');
    // the address's share, each connection answered once and kept alive
    const held: RawClient[] = [];
    for (let i = 0; i < MAX_PER_ADDRESS; i++) {
      const client = await open('127.0.0.2');
      ask(client);
      await client.until(`held connection ${i + 1} is answered`, answered(client, 1), 15_000);
      held.push(client);
    }
    assert.deepEqual(held.map((c) => c.statuses()), held.map(() => [200]));

    const extra = await open('127.0.0.2', true);
    ask(extra);
    // it keeps sending after the refusal, which must not keep the refused connection open
    const flood = setInterval(() => extra.write('x'.repeat(1024)), 50);
    try {
      await extra.until('the connection over the limit is closed', () => extra.closedAt !== undefined, 10_000);
    } finally {
      clearInterval(flood);
    }
    assert.deepEqual(extra.statuses(), [429], extra.text);
    assert.match(extra.text, /"error":"too_many_connections"/);

    const other = await open('127.0.0.3');
    ask(other, true);
    await other.until('another address is answered', () => other.closedAt !== undefined, 15_000);
    assert.deepEqual(other.statuses(), [200], other.text);
    assert.equal((await fg.request('/healthz')).status, 200);

    // the limit counts open connections: once one closes, the address may open another
    held[0]!.close();
    await held[0]!.until('the closed connection is gone', () => held[0]!.closedAt !== undefined, 15_000);
    const deadline = Date.now() + 15_000;
    let again: RawClient;
    for (;;) { // the gateway counts the close when its side of the socket closes: a moment after ours
      again = await open('127.0.0.2');
      ask(again, true);
      await again.until('a new connection is answered', () => again.closedAt !== undefined, 15_000);
      if (again.statuses()[0] === 200 || Date.now() > deadline) break;
      await pause(50);
    }
    assert.deepEqual(again.statuses(), [200], again.text);
    assert.equal(held.slice(1).every((c) => c.closedAt === undefined), true, 'the held connections are untouched');
  });
});

describe('gateway listener: a stalled upload to an S3 store', function () {
  this.timeout(120_000);
  const s3 = s3ServerForSuite();
  let fg: TestFlowgate;
  let p: Published;
  let client: RawClient | undefined;

  before(async () => {
    fg = await startTestFlowgate({ ...s3().env(`slow-${Date.now()}`), FLOWGATE_BODY_IDLE_TIMEOUT_SECONDS: String(BODY_IDLE_S) });
    p = await publishWorkflow(fg, echoInputsWorkflow);
  });
  after(async () => {
    client?.close();
    await fg?.stop();
  });

  it('is cut with 408 at the idle bound, and its spool file is removed', async () => {
    // the S3 store spools a streamed upload to <data>/spool before it sends it
    const spooled = (): string[] => filesUnder(path.join(fg.dataDir, 'spool'));
    client = await RawClient.open(Number(new URL(fg.url).port));
    await stallUpload(client, p, spooled, spooled);
  });
});
