/**
 * The synchronous body's bound on inlined results (run-bodies.ts): a per-result and a per-body cap,
 * cuts on character boundaries, blobs read only up to the cap. Unit tests over a file blob store,
 * then one real synchronous call whose result is over the cap.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { createFileBlobStore, type BlobStore } from '../../src/blobs/blob-store';
import { RESULT_INLINE_LIMIT, type StepOutcome } from '../../src/common/run-types';
import {
  readTextPrefix, syncResultBody, SYNC_BODY_RESULTS_MAX_BYTES, SYNC_RESULT_MAX_BYTES, utf8Cut, type BodyContext,
} from '../../src/contracts/run-bodies';
import type { RunView } from '../../src/runs/run-service';
import { createSigner } from '../../src/crypto/signed-urls';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';

const MIB = 1024 * 1024;
/** How far past the cap a read may stream: the chunks already in flight when it stops (64 KiB each). */
const READ_SLACK = 256 * 1024;

interface SyncResult {
  stepIndex: number;
  result: { stepIndex: number; resultType: string; result: string };
  truncated?: true;
  resultUrls?: Record<string, { url: string; mimeType: string; size: number }>;
}

/** A blob store whose streams count the bytes they hand out. */
function countingStore(inner: BlobStore): BlobStore & { bytesStreamed: number } {
  const store = {
    ...inner,
    bytesStreamed: 0,
    async open(key: string) {
      const opened = await inner.open(key);
      if (!opened) return undefined;
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          store.bytesStreamed += chunk.length;
          done(null, chunk);
        },
      });
      opened.stream.on('error', (err) => counter.destroy(err));
      counter.on('close', () => opened.stream.destroy());
      return { stream: opened.stream.pipe(counter), size: opened.size, modified: opened.modified };
    },
  };
  return store;
}

/** The bytes of `text` are a prefix of the bytes of `whole`, and `text` holds no replacement character. */
function assertCleanPrefix(text: string, whole: string): void {
  assert.ok(!text.includes('\ufffd'), 'no character was split');
  assert.ok(Buffer.from(whole).subarray(0, Buffer.byteLength(text)).equals(Buffer.from(text)), 'a prefix of the whole result');
}

describe('run bodies: bounded synchronous results', () => {
  let root: string;
  let blobs: BlobStore;
  let ctx: BodyContext;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'flowgate-bodies-'));
    blobs = createFileBlobStore(root);
    ctx = { blobs, signer: createSigner(randomBytes(32), 'http://flowgate.test'), resultUrlTtlSeconds: 3600 };
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** An outcome as runStep records it: the inline text cut at RESULT_INLINE_LIMIT, output.txt whole. */
  async function outcome(stepIndex: number, whole: string, options: { store?: boolean } = {}): Promise<StepOutcome> {
    const key = `runs/o/r/steps/${stepIndex}/output.txt`;
    const size = Buffer.byteLength(whole);
    if (options.store ?? true) await blobs.put(key, whole);
    return {
      stepIndex, status: 'COMPLETE', resultType: 'plaintext', exitCode: 0, duration: 1,
      result: whole.slice(0, RESULT_INLINE_LIMIT), truncated: whole.length > RESULT_INLINE_LIMIT,
      files: { 'output.txt': { key, mimeType: 'text/plain', size }, 'stdout.txt': { key: `runs/o/r/steps/${stepIndex}/stdout.txt`, mimeType: 'text/plain', size: 0 } },
    };
  }

  function view(outcomes: StepOutcome[]): RunView {
    return {
      runId: randomUUID(), status: 'COMPLETE', steps: {}, outcomes,
      memo: {
        orgId: 'o', automationId: 'w', automationVersion: 1, automationName: 'big', triggerId: 't', startedBy: 'k',
        started: new Date().toISOString(), stepMap: {}, steps: [],
      },
    };
  }

  async function results(outcomes: StepOutcome[]): Promise<SyncResult[]> {
    return (await syncResultBody(view(outcomes), '', ctx)).results as SyncResult[];
  }

  describe('utf8Cut', () => {
    it('never splits a 2-, 3- or 4-byte character, and backs off at most 3 bytes', () => {
      const bytes = Buffer.from('aé€😀é😀€a'.repeat(3));
      for (let at = 0; at <= bytes.length + 1; at++) {
        const cut = utf8Cut(bytes, at);
        assert.ok(cut <= at && cut >= Math.min(at, bytes.length) - 3, `cut ${cut} for ${at}`);
        const text = bytes.subarray(0, cut).toString('utf8');
        assert.ok(Buffer.from(text).equals(bytes.subarray(0, cut)), `a clean cut at ${at}`);
      }
    });
  });

  describe('readTextPrefix', () => {
    it('reads a 10 MiB blob only up to the cap (the chunks in flight past it at most)', async () => {
      await blobs.put('big.txt', Buffer.alloc(10 * MIB, 0x61));
      const counting = countingStore(blobs);
      const read = await readTextPrefix(counting, 'big.txt', MIB);
      assert.deepEqual({ length: read?.text.length, whole: read?.whole }, { length: MIB, whole: false });
      assert.ok(counting.bytesStreamed <= MIB + READ_SLACK, `streamed ${counting.bytesStreamed} bytes`);
    });

    it('tells a blob of exactly the cap (whole) from one a byte over it (cut)', async () => {
      await blobs.put('exact.txt', 'x'.repeat(1000));
      await blobs.put('over.txt', 'x'.repeat(1001));
      assert.deepEqual(await readTextPrefix(blobs, 'exact.txt', 1000), { text: 'x'.repeat(1000), whole: true });
      assert.deepEqual(await readTextPrefix(blobs, 'over.txt', 1000), { text: 'x'.repeat(1000), whole: false });
      assert.equal(await readTextPrefix(blobs, 'missing.txt', 1000), undefined);
    });

    it('cuts multi-byte text on a character boundary', async () => {
      const whole = '€'.repeat(1000); // 3 bytes each
      await blobs.put('euro.txt', whole);
      const read = await readTextPrefix(blobs, 'euro.txt', 1001);
      assert.equal(read?.text, '€'.repeat(333));
      assert.equal(read?.whole, false);
    });
  });

  describe('syncResultBody', () => {
    it('inlines a cut result whole when it fits the cap, with no mark', async () => {
      const whole = 'ü'.repeat(100_000);
      const [result] = await results([await outcome(1, whole)]);
      assert.equal(result?.result.result, whole);
      assert.equal(result?.truncated, undefined);
      assert.equal(result?.resultUrls, undefined);
    });

    it('cuts a result over SYNC_RESULT_MAX_BYTES on a character boundary, marks it truncated and links the whole output.txt', async () => {
      const whole = '😀é'.repeat(MIB / 2); // 3 MiB
      const [small, big] = await results([await outcome(1, 'short'), await outcome(2, whole)]);
      assert.deepEqual(small, { stepIndex: 1, stepVersion: 1, result: { stepIndex: 1, resultType: 'plaintext', result: 'short' }, exitCode: 0, duration: 1 });
      assert.ok(big);
      assert.equal(big.truncated, true);
      assert.deepEqual(Object.keys(big.result).sort(), ['result', 'resultType', 'stepIndex'], 'the contract\'s result object is unchanged');
      const bytes = Buffer.byteLength(big.result.result);
      assert.ok(bytes <= SYNC_RESULT_MAX_BYTES && bytes > SYNC_RESULT_MAX_BYTES - 4, `${bytes} bytes inlined`);
      assertCleanPrefix(big.result.result, whole);
      const link = big.resultUrls?.['output.txt'];
      assert.equal(link?.size, Buffer.byteLength(whole));
      assert.equal(link?.mimeType, 'text/plain');
      assert.match(link?.url ?? '', /^http:\/\/flowgate\.test\/files\/runs\/o\/r\/steps\/2\/output\.txt\?exp=\d+&type=text%2Fplain&sig=/);
    });

    it('keeps the whole body under SYNC_BODY_RESULTS_MAX_BYTES: later large results keep only their inline text', async () => {
      const whole = 'z'.repeat(2 * MIB);
      const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => outcome(i + 1, whole)));
      const counting = countingStore(blobs);
      ctx = { ...ctx, blobs: counting };
      const body = await results(outcomes);
      const inlined = body.reduce((sum, r) => sum + Buffer.byteLength(r.result.result), 0);
      assert.ok(inlined <= SYNC_BODY_RESULTS_MAX_BYTES + outcomes.length * RESULT_INLINE_LIMIT, `${inlined} bytes inlined`);
      assert.ok(counting.bytesStreamed <= SYNC_BODY_RESULTS_MAX_BYTES + outcomes.length * READ_SLACK, `streamed ${counting.bytesStreamed} bytes`);
      assert.ok(body.every((r) => r.truncated === true && r.resultUrls?.['output.txt']?.size === 2 * MIB));
      const perResult = SYNC_BODY_RESULTS_MAX_BYTES / SYNC_RESULT_MAX_BYTES;
      assert.deepEqual(body.slice(0, perResult).map((r) => r.result.result.length), Array<number>(perResult).fill(SYNC_RESULT_MAX_BYTES), 'in step order, the first ones take the budget');
      assert.deepEqual(body.slice(perResult).map((r) => r.result.result.length), Array<number>(outcomes.length - perResult).fill(RESULT_INLINE_LIMIT));
      assert.ok(JSON.stringify(body).length < SYNC_BODY_RESULTS_MAX_BYTES + MIB);
    });

    it('falls back to the inline text, marked truncated, when output.txt is missing', async () => {
      const whole = 'q'.repeat(RESULT_INLINE_LIMIT * 2);
      const [result] = await results([await outcome(1, whole, { store: false })]);
      assert.equal(result?.result.result, whole.slice(0, RESULT_INLINE_LIMIT));
      assert.equal(result?.truncated, true);
    });
  });

  describe('over a real synchronous call', () => {
    let fg: TestFlowgate;
    before(async () => {
      fg = await startTestFlowgate();
    });
    after(async () => {
      await fg?.stop();
    });

    it('answers 200 with the big result cut to the cap and marked, and its link serves the whole text', async () => {
      const p = await publishWorkflow(fg, {
        name: 'big-result',
        steps: [{ name: 'Big', type: 'code', source: "return 'é€'.repeat(300000)" }], // 1.5 MiB
      });
      const response = await trigger(fg, p, undefined, { 'x-api-wait': 'true' });
      assert.equal(response.status, 200);
      const body = (await response.json()) as { status: string; results: SyncResult[] };
      assert.equal(body.status, 'COMPLETE');
      const [big] = body.results;
      assert.ok(big);
      const whole = 'é€'.repeat(300000);
      assert.equal(big.truncated, true);
      assert.ok(Buffer.byteLength(big.result.result) <= SYNC_RESULT_MAX_BYTES);
      assertCleanPrefix(big.result.result, whole);
      const link = big.resultUrls?.['output.txt'];
      assert.equal(link?.size, Buffer.byteLength(whole));
      const download = await fetch(link?.url ?? '');
      assert.equal(download.status, 200);
      assert.equal(await download.text(), whole);
    });
  });
});
