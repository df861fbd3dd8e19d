/**
 * Multipart bodies for tests, generated as they are sent: a 25 MiB file is a few lines of
 * description, never a 25 MiB buffer. `send` uses node:http so it reads an early answer (a refusal
 * while the upload is still going) the way a well-behaved client does, and stops sending.
 */
import http from 'node:http';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export interface FieldPart {
  name: string;
  value: string;
}

export interface FilePart {
  name: string;
  /** the raw filename parameter; omitted means no filename parameter at all */
  filename?: string;
  contentType?: string;
  /** leading bytes, then `size - head.length` filler bytes (default 'a') */
  head?: Buffer;
  size?: number;
  fill?: number;
}

export type Part = FieldPart | FilePart;

const CHUNK = 64 * 1024;

function isFile(part: Part): part is FilePart {
  return !('value' in part);
}

function partHeader(boundary: string, part: Part): Buffer {
  const quote = (s: string): string => s.replace(/["\\\r\n]/g, (c) => (c === '"' ? '%22' : c === '\\' ? '\\\\' : ''));
  let disposition = `form-data; name="${quote(part.name)}"`;
  const lines = [];
  if (isFile(part)) {
    if (part.filename !== undefined) disposition += `; filename="${quote(part.filename)}"`;
    lines.push(`Content-Disposition: ${disposition}`);
    if (part.contentType !== undefined) lines.push(`Content-Type: ${part.contentType}`);
  } else {
    lines.push(`Content-Disposition: ${disposition}`);
  }
  return Buffer.from(`--${boundary}\r\n${lines.join('\r\n')}\r\n\r\n`);
}

function fileSize(part: FilePart): number {
  return part.size ?? part.head?.length ?? 0;
}

export class MultipartBody {
  readonly boundary = `----flowgate-test-${Math.random().toString(16).slice(2)}`;
  constructor(readonly parts: Part[]) {}

  get contentType(): string {
    return `multipart/form-data; boundary=${this.boundary}`;
  }

  get length(): number {
    let total = Buffer.byteLength(`--${this.boundary}--\r\n`);
    for (const part of this.parts) {
      total += partHeader(this.boundary, part).length + 2;
      total += isFile(part) ? fileSize(part) : Buffer.byteLength(part.value);
    }
    return total;
  }

  async *chunks(): AsyncGenerator<Buffer> {
    const filler = new Map<number, Buffer>();
    for (const part of this.parts) {
      yield partHeader(this.boundary, part);
      if (!isFile(part)) {
        yield Buffer.from(part.value);
      } else {
        const head = part.head ?? Buffer.alloc(0);
        if (head.length > 0) yield head;
        let left = fileSize(part) - head.length;
        const fill = part.fill ?? 0x61;
        if (!filler.has(fill)) filler.set(fill, Buffer.alloc(CHUNK, fill));
        const block = filler.get(fill)!;
        while (left > 0) {
          const n = Math.min(left, CHUNK);
          yield n === CHUNK ? block : block.subarray(0, n);
          left -= n;
        }
      }
      yield Buffer.from('\r\n');
    }
    yield Buffer.from(`--${this.boundary}--\r\n`);
  }
}

export interface SentResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

/** Streams `body` to `url` (POST) and resolves with the answer, early or not. */
export function send(url: string, headers: Record<string, string>, body: MultipartBody | { contentType: string; chunks(): AsyncGenerator<Buffer>; length?: number }): Promise<SentResponse> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const request = http.request(url, {
      method: 'POST',
      headers: { 'Content-Type': body.contentType, ...(body.length !== undefined ? { 'Content-Length': String(body.length) } : {}), ...headers },
    });
    request.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json: <T>() => JSON.parse(text) as T });
        request.destroy();
      });
      response.on('error', reject);
    });
    request.on('error', (err) => {
      if (!answered) reject(err);
    });
    void (async () => {
      try {
        for await (const chunk of body.chunks()) {
          if (answered || request.destroyed) return;
          if (!request.write(chunk)) {
            await new Promise<void>((resume) => {
              const done = (): void => {
                request.off('drain', done).off('close', done);
                resume();
              };
              request.on('drain', done).on('close', done);
            });
          }
        }
        request.end();
      } catch (err) {
        if (!answered) reject(err as Error);
      }
    })();
  });
}

/** Every file under `dir` (recursively), directories left out. */
export function filesUnder(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const full = path.join(dir, entry);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}
