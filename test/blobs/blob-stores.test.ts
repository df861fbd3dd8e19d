/**
 * The same cases against both blob stores: the data dir's and an S3 bucket on a real
 * S3-compatible server (versitygw, test/support/versitygw.ts). Streaming upload and download,
 * a source failing at a limit, failed and interrupted uploads leaving nothing, and retention
 * deleting what expired and nothing else. Signed links are tested through the gateway
 * (test/s3/files-and-retention.test.ts).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { CreateMultipartUploadCommand, ListMultipartUploadsCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import { createFileBlobStore, type BlobStore } from '../../src/blobs/blob-store';
import { createS3BlobStore, MULTIPART_THRESHOLD } from '../../src/blobs/s3-store';
import { DAY_MS, HOUR_MS } from '../../src/retention/policy';
import { sweepBlobs } from '../../src/retention/sweep';
import { holdCallFiles, holdKey } from '../../src/retention/holds';
import { s3ServerForSuite } from '../support/versitygw';

const MIB = 1024 * 1024;

/** `size` bytes of a repeating pattern, produced as they are read (never one big buffer). */
function generated(size: number, seed = 7): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= size) return void this.push(null);
      const n = Math.min(256 * 1024, size - sent);
      const chunk = Buffer.alloc(n);
      for (let i = 0; i < n; i++) chunk[i] = (sent + i + seed) % 251;
      sent += n;
      this.push(chunk);
    },
  });
}

async function sha256(stream: Readable): Promise<{ hash: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { hash: hash.digest('hex'), size };
}

/** Passes bytes until `limit`, then fails like the attachment limits do. */
function limited(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      seen += chunk.length;
      if (seen > limit) return callback(new Error(`over the limit of ${limit} bytes`));
      callback(null, chunk);
    },
  });
}

async function keys(blobs: BlobStore, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of blobs.list(prefix)) out.push(entry.key);
  return out.sort();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface StoreFixture {
  blobs: BlobStore;
  /** leaves what a process killed mid-upload would: a temporary file, an incomplete multipart upload */
  leaveInterruptedUpload(): Promise<void>;
  /** how many interrupted uploads are left */
  interruptedUploads(): Promise<number>;
  cleanup(): Promise<void>;
}

function describeBlobStore(name: string, open: (ctx: Mocha.Context) => Promise<StoreFixture>): void {
  describe(`blob store: ${name}`, function () {
    let fixture: StoreFixture;
    let blobs: BlobStore;
    beforeEach(async function () {
      fixture = await open(this);
      blobs = fixture.blobs;
    });
    afterEach(async () => {
      await fixture?.cleanup();
    });

    it('puts and reads back bytes and text, with their size, stat and listing', async () => {
      assert.deepEqual(await blobs.put('runs/o/r/steps/1/output.txt', 'héllo'), { size: 6 });
      assert.equal((await blobs.read('runs/o/r/steps/1/output.txt'))?.toString('utf8'), 'héllo');
      const stat = await blobs.stat('runs/o/r/steps/1/output.txt');
      assert.equal(stat?.size, 6);
      assert.ok(stat && Math.abs(stat.modified.getTime() - Date.now()) < 60_000, 'modified is about now');
      assert.equal(await blobs.read('runs/o/r/steps/9/none.txt'), undefined);
      assert.equal(await blobs.open('runs/o/r/steps/9/none.txt'), undefined);
      assert.equal(await blobs.stat('runs/o/r/steps/9/none.txt'), undefined);
      await blobs.put('attachments/o/u/a.bin', Buffer.from([0, 1, 255]));
      assert.deepEqual(await keys(blobs), ['attachments/o/u/a.bin', 'runs/o/r/steps/1/output.txt']);
      assert.deepEqual(await keys(blobs, 'runs/'), ['runs/o/r/steps/1/output.txt']);
      await blobs.remove('attachments/o/u/a.bin');
      await blobs.remove('attachments/o/u/a.bin'); // twice: no error
      assert.deepEqual(await keys(blobs, 'attachments/'), []);
    });

    it('refuses unsafe keys', async () => {
      for (const key of ['../x', '/abs', 'a/../b', '', '.hidden', 'a//b']) {
        await assert.rejects(blobs.put(key, 'x'), /unsafe blob key/);
        await assert.rejects(blobs.putStream(key, Readable.from([Buffer.from('x')])), /unsafe blob key/);
        await assert.rejects(blobs.open(key), /unsafe blob key/);
      }
    });

    it('streams an upload in and a download out, small and above the multipart threshold', async () => {
      for (const size of [0, 1000, MULTIPART_THRESHOLD + 3 * MIB + 17]) {
        const key = `attachments/o/${size}/file.bin`;
        const expected = await sha256(generated(size));
        assert.deepEqual(await blobs.putStream(key, generated(size)), { size });
        const opened = await blobs.open(key);
        assert.ok(opened);
        assert.equal(opened.size, size);
        assert.deepEqual(await sha256(opened.stream), expected, `${size} bytes came back whole`);
      }
    });

    it('a source failing at a limit rejects the put with its error and leaves nothing', async () => {
      for (const limit of [64 * 1024, MULTIPART_THRESHOLD + MIB]) {
        const key = `attachments/o/limit-${limit}/big.bin`;
        const source = generated(limit * 2).pipe(limited(limit));
        await assert.rejects(blobs.putStream(key, source), /over the limit/);
        assert.equal(await blobs.stat(key), undefined);
      }
      assert.deepEqual(await keys(blobs), []);
      assert.equal(await fixture.interruptedUploads(), 0, 'no temporary file or incomplete upload is left');
    });

    it('a source that fails before the put starts rejects it, and a failed overwrite keeps the old blob', async () => {
      await blobs.put('agents/o/chats/c/history.json', 'old');
      const failing = new Readable({ read() { this.destroy(new Error('client went away')); } });
      await assert.rejects(blobs.putStream('agents/o/chats/c/history.json', failing), /client went away/);
      assert.equal((await blobs.read('agents/o/chats/c/history.json'))?.toString(), 'old');
      assert.equal(await fixture.interruptedUploads(), 0);
    });

    it('removeStale removes what an interrupted upload left once it is old, and only then', async () => {
      await fixture.leaveInterruptedUpload();
      assert.equal(await fixture.interruptedUploads(), 1);
      await blobs.removeStale(new Date(Date.now() - HOUR_MS));
      assert.equal(await fixture.interruptedUploads(), 1, 'a recent upload may still be going: kept');
      await blobs.removeStale(new Date(Date.now() + HOUR_MS));
      assert.equal(await fixture.interruptedUploads(), 0);
    });

    it('retention deletes what expired and nothing else', async () => {
      const settings = { stepFilesDays: 30 };
      await blobs.put('attachments/o/old/a.txt', 'a');
      await blobs.put('runs/o/r-old/steps/1/output.txt', 'early step of a run that goes on');
      await blobs.put('runs/o/r-done/steps/1/output.txt', 'x');
      await sleep(2200); // object stores keep LastModified to the second
      await blobs.put('attachments/o/new/b.txt', 'b');
      await blobs.put('inputs/o/in.json', '{}');
      await blobs.put('runs/o/r-old/steps/2/output.txt', 'a later step');
      await blobs.put('agents/o/invocations/i/setup.json', '{}');
      await blobs.put('agents/o/chats/c/history.json', '[]');
      await blobs.put('tool-files/o/s/f', 'tool file');
      const first = (await blobs.stat('attachments/o/old/a.txt'))!.modified.getTime();
      const latest = (await blobs.stat('runs/o/r-old/steps/2/output.txt'))!.modified.getTime();
      assert.ok(latest - first >= 2000, `${latest - first} ms apart`);

      // Half a second past the first attachment's 24 hours: it alone of the call files has expired.
      let report = await sweepBlobs(blobs, settings, new Date(first + DAY_MS + 500));
      assert.equal(report.removed, 1);
      assert.deepEqual(await keys(blobs), [
        'agents/o/chats/c/history.json', 'agents/o/invocations/i/setup.json', 'attachments/o/new/b.txt', 'inputs/o/in.json',
        'runs/o/r-done/steps/1/output.txt', 'runs/o/r-old/steps/1/output.txt', 'runs/o/r-old/steps/2/output.txt', 'tool-files/o/s/f',
      ]);
      // A day later every call file has; step files have 30 days.
      report = await sweepBlobs(blobs, settings, new Date(latest + 2 * DAY_MS));
      assert.equal(report.removed, 2);
      // 30 days after the first run file: r-done goes; r-old's newest file is younger, so the run's files all stay.
      report = await sweepBlobs(blobs, settings, new Date(first + 30 * DAY_MS + 500));
      assert.equal(report.removed, 1);
      assert.deepEqual(await keys(blobs), [
        'agents/o/chats/c/history.json', 'agents/o/invocations/i/setup.json',
        'runs/o/r-old/steps/1/output.txt', 'runs/o/r-old/steps/2/output.txt', 'tool-files/o/s/f',
      ]);
      // Later still everything with a period goes; a chat's history is kept.
      report = await sweepBlobs(blobs, settings, new Date(latest + 31 * DAY_MS));
      assert.equal(report.removed, 4);
      assert.deepEqual(await keys(blobs), ['agents/o/chats/c/history.json']);
      // A sweep again is a no-op.
      assert.equal((await sweepBlobs(blobs, settings, new Date(latest + 31 * DAY_MS))).removed, 0);
    });

    it('keeps the call files of a run that may outlive them (a hold) until the run\'s latest end, then deletes them with the hold', async () => {
      const settings = { stepFilesDays: 30 };
      await blobs.put('attachments/h/long/a.txt', 'read by a run waiting days for an approval');
      await blobs.put('inputs/h/long.json', '{}');
      await blobs.put('attachments/h/short/b.txt', 'a run of an hour');
      const written = (await blobs.stat('attachments/h/long/a.txt'))!.modified.getTime();
      // The one-hour run writes no hold; the three-day run holds its two files for three days.
      assert.equal(await holdCallFiles(blobs, { orgId: 'h', runId: 'r-short', keys: ['attachments/h/short/b.txt'], timeoutMs: HOUR_MS, now: written }), false);
      assert.equal(await holdCallFiles(blobs, { orgId: 'h', runId: 'r-long', keys: ['attachments/h/long/a.txt', 'inputs/h/long.json'], timeoutMs: 3 * DAY_MS, now: written }), true);
      const callFiles = async (): Promise<string[]> => (await keys(blobs)).filter((k) => k.startsWith('attachments/h/') || k.startsWith('inputs/h/') || k.startsWith('holds/h/'));

      await sweepBlobs(blobs, settings, new Date(written + DAY_MS + 5000));
      assert.deepEqual(await callFiles(), ['attachments/h/long/a.txt', holdKey('h', 'r-long'), 'inputs/h/long.json']);
      await sweepBlobs(blobs, settings, new Date(written + 3 * DAY_MS - 60_000));
      assert.deepEqual(await callFiles(), ['attachments/h/long/a.txt', holdKey('h', 'r-long'), 'inputs/h/long.json']);
      await sweepBlobs(blobs, settings, new Date(written + 3 * DAY_MS + 5000));
      assert.deepEqual(await callFiles(), []);
    });
  });
}

describeBlobStore('local data dir', async () => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'flowgate-blobs-'));
  const partials = async (): Promise<number> => (await readdir(root, { recursive: true })).filter((f) => String(f).endsWith('.partial')).length;
  return {
    blobs: createFileBlobStore(root),
    async leaveInterruptedUpload() {
      await writeFile(path.join(root, 'left.partial'), 'half an upload');
    },
    interruptedUploads: partials,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
});

describe('blob store: S3 (versitygw)', function () {
  const s3Server = s3ServerForSuite();
  let counter = 0;

  describeBlobStore('S3 bucket', async () => {
    const s3 = s3Server();
    const spoolDir = await mkdtemp(path.join(os.tmpdir(), 'flowgate-spool-'));
    const prefix = `t${++counter}/data`;
    const blobs = createS3BlobStore({ bucket: s3.bucket, prefix, endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, spoolDir, credentials: s3.credentials });
    const uploads = async (): Promise<number> => {
      const listed = await blobs.client.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket, Prefix: `${prefix}/` }));
      const spooled = (await readdir(spoolDir).catch(() => [])).length;
      return (listed.Uploads ?? []).length + spooled;
    };
    return {
      blobs,
      async leaveInterruptedUpload() {
        const created = await blobs.client.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: `${prefix}/attachments/o/u/killed.bin` }));
        await blobs.client.send(new UploadPartCommand({ Bucket: s3.bucket, Key: `${prefix}/attachments/o/u/killed.bin`, UploadId: created.UploadId, PartNumber: 1, Body: Buffer.alloc(5 * MIB, 1) }));
      },
      interruptedUploads: uploads,
      async cleanup() {
        for await (const entry of blobs.list('')) await blobs.remove(entry.key);
        await blobs.removeStale(new Date(Date.now() + DAY_MS));
        blobs.close?.();
        await rm(spoolDir, { recursive: true, force: true });
      },
    };
  });
});
