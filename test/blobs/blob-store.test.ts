import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { once } from 'node:events';
import { createFileBlobStore, type BlobStore } from '../../src/blobs/blob-store';

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Every file under `root`, as paths relative to it. */
async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath, e.name))).sort();
}

describe('createFileBlobStore', () => {
  let root: string;
  let blobs: BlobStore;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'flowgate-blobs-'));
    blobs = createFileBlobStore(root);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('reads back what was put, with its byte size', async () => {
    const info = await blobs.put('runs/o/r/steps/1/output.txt', 'héllo');
    assert.deepEqual(info, { size: 6 });
    assert.deepEqual(await blobs.read('runs/o/r/steps/1/output.txt'), Buffer.from('héllo'));
    const bytes = Buffer.from([0, 1, 2, 255]);
    assert.deepEqual(await blobs.put('attachments/a.bin', bytes), { size: 4 });
    assert.deepEqual(await blobs.read('attachments/a.bin'), bytes);
  });

  it('opens a stream with the size of the blob', async () => {
    await blobs.put('a/b.txt', 'stream me');
    const opened = await blobs.open('a/b.txt');
    assert.ok(opened);
    assert.equal(opened.size, 9);
    assert.equal((await collect(opened.stream)).toString('utf8'), 'stream me');
  });

  it('answers undefined for a blob that does not exist, or a folder', async () => {
    assert.equal(await blobs.read('nothing/here.txt'), undefined);
    assert.equal(await blobs.open('nothing/here.txt'), undefined);
    await blobs.put('folder/file.txt', 'x');
    assert.equal(await blobs.open('folder'), undefined);
  });

  it('removes a blob, and removing a missing one is no error', async () => {
    await blobs.put('gone.txt', 'x');
    await blobs.remove('gone.txt');
    assert.equal(await blobs.read('gone.txt'), undefined);
    await blobs.remove('gone.txt');
    await blobs.remove('never/was.txt');
  });

  it('refuses unsafe keys in every operation without touching the disk', async () => {
    const outside = path.join(path.dirname(root), `${path.basename(root)}-outside`);
    for (const key of ['../x', `../${path.basename(outside)}/x`, '/abs', '/etc/passwd', 'a/../b', 'a/./b', 'a//b', '', '.', '..', '.hidden', 'a/', 'a\\b', 'a\0b']) {
      await assert.rejects(blobs.put(key, 'x'), /unsafe blob key/, `put ${JSON.stringify(key)}`);
      await assert.rejects(blobs.read(key), /unsafe blob key/, `read ${JSON.stringify(key)}`);
      await assert.rejects(blobs.open(key), /unsafe blob key/, `open ${JSON.stringify(key)}`);
      await assert.rejects(blobs.remove(key), /unsafe blob key/, `remove ${JSON.stringify(key)}`);
    }
    assert.deepEqual(await filesUnder(root), []);
    await assert.rejects(readdir(outside), { code: 'ENOENT' });
  });

  it('leaves no .partial files after writes, including concurrent writes to one key', async () => {
    await blobs.put('runs/o/r/steps/1/output.txt', 'one');
    await blobs.put('runs/o/r/steps/1/stdout.txt', 'two');
    const versions = Array.from({ length: 20 }, (_, i) => `version ${i} `.repeat(1000));
    await Promise.all(versions.map((v) => blobs.put('runs/o/r/steps/2/output.txt', v)));
    assert.deepEqual(await filesUnder(root), [
      'runs/o/r/steps/1/output.txt', 'runs/o/r/steps/1/stdout.txt', 'runs/o/r/steps/2/output.txt',
    ].map((p) => p.split('/').join(path.sep)));
    const last = (await blobs.read('runs/o/r/steps/2/output.txt'))?.toString('utf8');
    assert.ok(last !== undefined && versions.includes(last), 'the blob is not one whole version');
  });

  it('leaves no .partial file when a write fails', async () => {
    await mkdir(path.join(root, 'taken', 'inner'), { recursive: true });
    await assert.rejects(blobs.put('taken', 'x'));
    assert.deepEqual(await filesUnder(root), []);
  });

  it('streams a blob into place, with its byte size', async () => {
    const info = await blobs.putStream('streams/s.bin', Readable.from([Buffer.from('stream'), Buffer.from('ed')]));
    assert.deepEqual(info, { size: 8 });
    assert.equal((await blobs.read('streams/s.bin'))?.toString(), 'streamed');
    assert.deepEqual(await filesUnder(root), [path.join('streams', 's.bin')]);
  });

  it('leaves no folder behind when a streamed write fails or its blob is removed', async () => {
    const failing = new PassThrough();
    const put = blobs.putStream('uploads/one/file.bin', failing);
    failing.write(Buffer.alloc(1024));
    failing.destroy(new Error('over the limit'));
    await assert.rejects(put, /over the limit/);
    assert.deepEqual(await readdir(path.join(root, 'uploads')), [], 'the failed upload\'s folder is gone');

    await blobs.put('uploads/two/a.txt', 'a');
    await blobs.put('uploads/two/b.txt', 'b');
    await blobs.remove('uploads/two/a.txt');
    assert.deepEqual(await readdir(path.join(root, 'uploads', 'two')), ['b.txt'], 'a folder still holding a blob stays');
    await blobs.remove('uploads/two/b.txt');
    assert.deepEqual(await readdir(path.join(root, 'uploads')), []);
    await blobs.put('uploads/two/c.txt', 'c'); // and the folder comes back when written again
    assert.equal((await blobs.read('uploads/two/c.txt'))?.toString(), 'c');
  });

  it('replaces a blob atomically: a reader opened before an overwrite still sees the old content whole', async () => {
    const before = 'a'.repeat(256 * 1024);
    const after = 'b'.repeat(1024);
    await blobs.put('swap.txt', before);
    const opened = await blobs.open('swap.txt');
    assert.ok(opened);
    await once(opened.stream, 'open');
    assert.deepEqual(await blobs.put('swap.txt', after), { size: after.length });
    assert.equal((await collect(opened.stream)).toString('utf8'), before);
    assert.equal((await blobs.read('swap.txt'))?.toString('utf8'), after);
    assert.deepEqual(await filesUnder(root), ['swap.txt']);
  });
});
