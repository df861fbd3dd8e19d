/**
 * A blob store in memory, for the fast layer: the step executors store output.txt and stdout.txt
 * and read earlier results back through it exactly as through the file or S3 store, without a
 * data dir. Same contract as src/blobs/blob-store.ts (safe keys, `undefined` for a missing blob).
 */
import { Readable } from 'node:stream';
import { assertSafeKey, type BlobEntry, type BlobInfo, type BlobStat, type BlobStore } from '../../../src/blobs/blob-store';

export class MemoryBlobStore implements BlobStore {
  private readonly blobs = new Map<string, { data: Buffer; modified: Date }>();

  async put(key: string, data: string | Buffer): Promise<BlobInfo> {
    assertSafeKey(key);
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
    this.blobs.set(key, { data: bytes, modified: new Date() });
    return { size: bytes.length };
  }

  async putStream(key: string, source: Readable): Promise<BlobInfo> {
    const chunks: Buffer[] = [];
    for await (const chunk of source) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
    return this.put(key, Buffer.concat(chunks));
  }

  async open(key: string): Promise<{ stream: Readable; size: number; modified: Date } | undefined> {
    const blob = this.blobs.get(key);
    return blob && { stream: Readable.from([blob.data]), size: blob.data.length, modified: blob.modified };
  }

  async read(key: string): Promise<Buffer | undefined> {
    return this.blobs.get(key)?.data;
  }

  async stat(key: string): Promise<BlobStat | undefined> {
    const blob = this.blobs.get(key);
    return blob && { size: blob.data.length, modified: blob.modified };
  }

  async remove(key: string): Promise<void> {
    this.blobs.delete(key);
  }

  async *list(prefix: string): AsyncIterable<BlobEntry> {
    for (const [key, blob] of [...this.blobs.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      if (key.startsWith(prefix)) yield { key, size: blob.data.length, modified: blob.modified };
    }
  }

  async removeStale(): Promise<number> {
    return 0;
  }

  /** The text of a blob (tests read step files with it); throws when it is missing. */
  text(key: string): string {
    const blob = this.blobs.get(key);
    if (!blob) throw new Error(`no blob ${key}`);
    return blob.data.toString('utf8');
  }
}
