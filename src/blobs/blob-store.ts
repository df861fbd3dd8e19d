/**
 * The blob store: attachments and step output files. The embedded implementation keeps files in
 * the data dir; every write goes to a temporary file renamed into place, so no reader ever sees a
 * half-written file. Keys are relative paths of safe segments chosen by flowgate, never by callers.
 */
import { createReadStream, promises as fs, type Dirent } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { errorCode } from '../common/narrow';

export interface BlobInfo {
  size: number;
}

export interface BlobStat {
  size: number;
  /** when the blob was last written (the retention sweep ages blobs from this) */
  modified: Date;
}

export interface BlobEntry extends BlobStat {
  key: string;
}

export interface PresignOptions {
  expiresInSeconds: number;
  contentType?: string;
  contentDisposition?: string;
}

export interface BlobStore {
  put(key: string, data: string | Buffer): Promise<BlobInfo>;
  /**
   * Streams `source` into place without holding it in memory. When `source` fails (an upload over
   * a limit, say), the put rejects with that error and nothing is left under `key`.
   */
  putStream(key: string, source: Readable): Promise<BlobInfo>;
  /** undefined when there is no such blob */
  open(key: string): Promise<{ stream: Readable; size: number; modified: Date } | undefined>;
  read(key: string): Promise<Buffer | undefined>;
  /** undefined when there is no such blob */
  stat(key: string): Promise<BlobStat | undefined>;
  /** Removing a blob that is not there is no error. */
  remove(key: string): Promise<void>;
  /** Every blob whose key starts with `prefix`: '' or a folder ending in '/' (`attachments/`). */
  list(prefix: string): AsyncIterable<BlobEntry>;
  /**
   * Removes what interrupted writes left behind, if older than `before`: temporary files of a
   * killed process, incomplete multipart uploads, empty folders. Returns how many it removed.
   */
  removeStale(before: Date): Promise<number>;
  /** A URL the object store itself serves the blob at (S3 stores only): the `redirect` download mode. */
  presign?(key: string, options: PresignOptions): Promise<string>;
  /** Releases connections (S3 stores). */
  close?(): void;
}

const SAFE_KEY = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

export function assertSafeKey(key: string): void {
  if (!SAFE_KEY.test(key) || key.split('/').some((s) => s === '..' || s === '.')) {
    throw new Error(`unsafe blob key: ${JSON.stringify(key)}`);
  }
}

/** The folder a blob lived in, once it holds nothing more; another blob's folder is left alone. */
async function removeIfEmpty(dir: string, root: string): Promise<void> {
  if (path.relative(root, dir) === '') return;
  try {
    await fs.rmdir(dir);
  } catch (err) {
    const code = errorCode(err);
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOENT') throw err;
  }
}

const tempName = (target: string): string => `${target}.${randomBytes(6).toString('hex')}.partial`;

/**
 * Runs `create` (which creates a fresh file beside `target`), making `target`'s folders first when
 * they are missing: most writes go to a folder that exists, so the folders are made only on ENOENT.
 * A folder emptied by a concurrent removal between our mkdir and the create is made again (a few
 * times, then the error stands).
 */
async function inFolderOf<T>(target: string, create: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await create();
    } catch (err) {
      if (errorCode(err) !== 'ENOENT' || attempt >= 4) throw err;
      await fs.mkdir(path.dirname(target), { recursive: true });
    }
  }
}

export function createFileBlobStore(root: string): BlobStore {
  const resolve = (key: string): string => {
    assertSafeKey(key);
    return path.join(root, key);
  };
  /** Removes what a failed write left: its temporary file and a folder it emptied. */
  const undo = async (temp: string, target: string): Promise<void> => {
    await fs.rm(temp, { force: true });
    await removeIfEmpty(path.dirname(target), root);
  };
  return {
    async put(key, data) {
      // Through a temporary file renamed into place: a reader never sees a half-written file.
      const target = resolve(key);
      const temp = tempName(target);
      try {
        await inFolderOf(target, () => fs.writeFile(temp, data, { flag: 'wx' }));
        await fs.rename(temp, target);
      } catch (err) {
        await undo(temp, target);
        throw err;
      }
      return { size: typeof data === 'string' ? Buffer.byteLength(data) : data.length };
    },
    async putStream(key, source) {
      // The source may fail before the pipeline takes it (while the file opens): that error must
      // reject this put, not go unhandled. pipeline reports an already-failed source's error itself.
      const ignore = (): void => undefined;
      source.on('error', ignore);
      const target = resolve(key);
      const temp = tempName(target);
      let handle: fs.FileHandle | undefined;
      try {
        handle = await inFolderOf(target, () => fs.open(temp, 'wx'));
        await pipeline(source, handle.createWriteStream());
        await handle.close(); // a no-op: the write stream closed it
        const { size } = await fs.stat(temp);
        await fs.rename(temp, target);
        return { size };
      } catch (err) {
        await handle?.close().catch(() => undefined);
        await undo(temp, target);
        throw err;
      } finally {
        source.off('error', ignore);
      }
    },
    async open(key) {
      const file = resolve(key);
      try {
        const stat = await fs.stat(file);
        if (!stat.isFile()) return undefined;
        return { stream: createReadStream(file), size: stat.size, modified: stat.mtime };
      } catch (err) {
        if (errorCode(err) === 'ENOENT') return undefined;
        throw err;
      }
    },
    async read(key) {
      try {
        return await fs.readFile(resolve(key));
      } catch (err) {
        if (errorCode(err) === 'ENOENT') return undefined;
        throw err;
      }
    },
    async stat(key) {
      try {
        const stat = await fs.stat(resolve(key));
        return stat.isFile() ? { size: stat.size, modified: stat.mtime } : undefined;
      } catch (err) {
        if (errorCode(err) === 'ENOENT') return undefined;
        throw err;
      }
    },
    async remove(key) {
      const file = resolve(key);
      await fs.rm(file, { force: true });
      await removeIfEmpty(path.dirname(file), root);
    },
    async *list(prefix) {
      if (prefix !== '' && !prefix.endsWith('/')) throw new Error(`a blob listing prefix is a folder ending in '/': ${JSON.stringify(prefix)}`);
      const start = prefix === '' ? root : resolve(prefix.slice(0, -1));
      for await (const file of walk(start)) {
        if (file.name.endsWith('.partial')) continue;
        const stat = await fs.stat(file.path).catch(() => undefined);
        if (!stat?.isFile()) continue; // removed meanwhile
        yield { key: path.relative(root, file.path).split(path.sep).join('/'), size: stat.size, modified: stat.mtime };
      }
    },
    async removeStale(before) {
      let removed = 0;
      for await (const file of walk(root)) {
        if (!file.name.endsWith('.partial')) continue;
        const stat = await fs.stat(file.path).catch(() => undefined);
        if (stat && stat.mtime < before) {
          await fs.rm(file.path, { force: true });
          removed++;
        }
      }
      return removed + await removeEmptyFolders(root, root);
    },
  };
}

/** Every file under `dir` (none when it does not exist), depth first. */
async function* walk(dir: string): AsyncIterable<{ path: string; name: string }> {
  let entries: Dirent[];
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch (err) {
    const code = errorCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return;
    throw err;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else if (entry.isFile()) yield { path: full, name: entry.name };
  }
}

/** Removes the empty folders under `dir` (bottom up; `root` itself stays). A write racing this recreates its folder (inFolderOf). */
async function removeEmptyFolders(dir: string, root: string): Promise<number> {
  let removed = 0;
  let entries: Dirent[];
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (entry.isDirectory()) removed += await removeEmptyFolders(path.join(dir, entry.name), root);
  }
  if (dir !== root) {
    try {
      await fs.rmdir(dir);
      removed++;
    } catch {
      // not empty, or gone: either way nothing to do
    }
  }
  return removed;
}
