/**
 * The blob store: attachments and step output files. The embedded implementation keeps files in
 * the data dir; every write goes to a temporary file renamed into place, so no reader ever sees a
 * half-written file. Keys are relative paths of safe segments chosen by flowgate, never by callers.
 */
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
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

export function createFileBlobStore(root: string): BlobStore {
  const resolve = (key: string): string => {
    assertSafeKey(key);
    return path.join(root, key);
  };
  return {
    async put(key, data) {
      const target = resolve(key);
      await fs.mkdir(path.dirname(target), { recursive: true });
      const temp = `${target}.${randomBytes(6).toString('hex')}.partial`;
      try {
        await fs.writeFile(temp, data, { flag: 'wx' });
        await fs.rename(temp, target);
      } catch (err) {
        await fs.rm(temp, { force: true });
        throw err;
      }
      return { size: typeof data === 'string' ? Buffer.byteLength(data) : data.length };
    },
    async putStream(key, source) {
      const target = resolve(key);
      await fs.mkdir(path.dirname(target), { recursive: true });
      const temp = `${target}.${randomBytes(6).toString('hex')}.partial`;
      const sink = createWriteStream(temp, { flags: 'wx' });
      try {
        await pipeline(source, sink);
        const { size } = await fs.stat(temp);
        await fs.rename(temp, target);
        return { size };
      } catch (err) {
        // A sink destroyed while still opening creates its file afterwards: remove it once closed.
        if (!sink.closed) await new Promise<void>((resolve) => sink.once('close', () => resolve()));
        await fs.rm(temp, { force: true });
        throw err;
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
      await fs.rm(resolve(key), { force: true });
    },
  };
}
