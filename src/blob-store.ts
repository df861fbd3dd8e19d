/**
 * The blob store: attachments and step output files. The embedded implementation keeps files in
 * the data dir; every write goes to a temporary file renamed into place, so no reader ever sees a
 * half-written file. Keys are relative paths of safe segments chosen by flowgate, never by callers.
 */
import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface BlobInfo {
  size: number;
}

export interface BlobStore {
  put(key: string, data: string | Buffer): Promise<BlobInfo>;
  /**
   * Streams `source` into place without holding it in memory. When `source` fails (an upload over
   * a limit, say), the put rejects with that error and nothing is left under `key`.
   */
  putStream(key: string, source: Readable): Promise<BlobInfo>;
  /** undefined when there is no such blob */
  open(key: string): Promise<{ stream: Readable; size: number } | undefined>;
  read(key: string): Promise<Buffer | undefined>;
  remove(key: string): Promise<void>;
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
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOENT') throw err;
  }
}

/**
 * Opens a fresh temporary file beside `target`. A folder emptied by a concurrent removal between
 * our mkdir and open is created again (a few times, then the error stands).
 */
async function openTemp(target: string): Promise<{ temp: string; handle: fs.FileHandle }> {
  for (let attempt = 1; ; attempt++) {
    await fs.mkdir(path.dirname(target), { recursive: true });
    const temp = `${target}.${randomBytes(6).toString('hex')}.partial`;
    try {
      return { temp, handle: await fs.open(temp, 'wx') };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 3) throw err;
    }
  }
}

export function createFileBlobStore(root: string): BlobStore {
  const resolve = (key: string): string => {
    assertSafeKey(key);
    return path.join(root, key);
  };
  /** Writes through a temporary file renamed into place; on failure leaves neither it nor an emptied folder. */
  const write = async (key: string, fill: (handle: fs.FileHandle) => Promise<void>): Promise<BlobInfo> => {
    const target = resolve(key);
    const { temp, handle } = await openTemp(target);
    try {
      await fill(handle);
      await handle.close(); // a no-op when a write stream already closed it
      const { size } = await fs.stat(temp);
      await fs.rename(temp, target);
      return { size };
    } catch (err) {
      await handle.close().catch(() => undefined);
      await fs.rm(temp, { force: true });
      await removeIfEmpty(path.dirname(target), root);
      throw err;
    }
  };
  return {
    put(key, data) {
      return write(key, (handle) => handle.writeFile(data));
    },
    async putStream(key, source) {
      // The source may fail before the pipeline takes it (while the file opens): that error must
      // reject this put, not go unhandled. pipeline reports an already-failed source's error itself.
      const ignore = (): void => undefined;
      source.on('error', ignore);
      try {
        return await write(key, (handle) => pipeline(source, handle.createWriteStream()));
      } finally {
        source.off('error', ignore);
      }
    },
    async open(key) {
      const file = resolve(key);
      try {
        const stat = await fs.stat(file);
        if (!stat.isFile()) return undefined;
        return { stream: createReadStream(file), size: stat.size };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    },
    async read(key) {
      try {
        return await fs.readFile(resolve(key));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    },
    async remove(key) {
      const file = resolve(key);
      await fs.rm(file, { force: true });
      await removeIfEmpty(path.dirname(file), root);
    },
  };
}
