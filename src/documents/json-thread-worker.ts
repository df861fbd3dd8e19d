/**
 * The JSON thread (json-thread.ts owns it): parses and writes JSON of about 100 MB (a codeagent
 * call with five 15 MB images), so the half second each takes is not half a second of the
 * process's event loop. Before parsing, one pass over the bytes bounds what the parse may build:
 * the nesting depth, and the bytes outside strings. A large body may be large only through long
 * strings (base64 images): 100 MB of `[{},{},…]` would make tens of millions of objects,
 * gigabytes of heap, here and again when the value is copied back to the main thread.
 */
import { parentPort, workerData } from 'node:worker_threads';

/** The thread's `workerData`, so that importing this file elsewhere never starts listening. */
export const JSON_THREAD = 'flowgate-json-thread';

export type JsonJob =
  /** `bytes`: UTF-8, its buffer transferred */
  | { id: number; kind: 'parse'; bytes: Uint8Array; maxDepth: number; maxStructureBytes: number }
  | { id: number; kind: 'stringify'; value: unknown };

export type ParseOutcome =
  | { kind: 'parsed'; value: unknown }
  | { kind: 'invalid' }
  | { kind: 'too-deep' }
  | { kind: 'too-structured' };

/** `bytes`: the JSON text as UTF-8, its buffer transferred */
export type StringifyOutcome = { kind: 'stringified'; bytes: Uint8Array } | { kind: 'unserializable'; reason: string };

export type JsonAnswer = { id: number } & (ParseOutcome | StringifyOutcome);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether a JSON text nests deeper than `maxDepth` objects and arrays, or has more than
 * `maxStructureBytes` bytes outside its strings' contents (quotes, punctuation, numbers, literals,
 * whitespace). Not a validator (JSON.parse decides that): it only tells what a parse could build.
 * A string's content is skipped with indexOf, so a body of long strings costs little more than a
 * memory scan. Bytes are compared as UTF-8: a quote, backslash or bracket byte never occurs inside
 * a multi-byte character.
 */
export function jsonShape(bytes: Buffer, maxDepth: number, maxStructureBytes: number): 'ok' | 'too-deep' | 'too-structured' {
  let depth = 0;
  let structure = 0;
  let at = 0;
  const end = bytes.length;
  while (at < end) {
    const byte = bytes[at]!;
    if (byte === QUOTE) {
      // the closing quote is the next one not escaped: preceded by an even run of backslashes
      let close = bytes.indexOf(QUOTE, at + 1);
      while (close > 0) {
        let backslashes = 0;
        while (bytes[close - 1 - backslashes] === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
        close = bytes.indexOf(QUOTE, close + 1);
      }
      if (close < 0) return 'ok'; // an unterminated string: JSON.parse refuses it
      structure += 2;
      at = close + 1;
      continue;
    }
    if (byte === 0x7b || byte === 0x5b) {
      if (++depth > maxDepth) return 'too-deep';
    } else if (byte === 0x7d || byte === 0x5d) {
      depth--;
    }
    if (++structure > maxStructureBytes) return 'too-structured';
    at++;
  }
  return 'ok';
}

export function parseJson(bytes: Buffer, maxDepth: number, maxStructureBytes: number): ParseOutcome {
  const shape = jsonShape(bytes, maxDepth, maxStructureBytes);
  if (shape !== 'ok') return { kind: shape };
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return { kind: 'parsed', value };
  } catch {
    return { kind: 'invalid' };
  }
}

function run(job: JsonJob): { answer: JsonAnswer; transfer: ArrayBuffer[] } {
  if (job.kind === 'parse') {
    const bytes = Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength);
    return { answer: { id: job.id, ...parseJson(bytes, job.maxDepth, job.maxStructureBytes) }, transfer: [] };
  }
  let text: string;
  try {
    text = JSON.stringify(job.value);
  } catch (error) {
    return { answer: { id: job.id, kind: 'unserializable', reason: error instanceof Error ? error.message : String(error) }, transfer: [] };
  }
  // a fresh buffer of its own (never a slice of the pool), so it can be moved, not copied
  const bytes = new Uint8Array(Buffer.byteLength(text, 'utf8'));
  Buffer.from(bytes.buffer).write(text, 'utf8');
  return { answer: { id: job.id, kind: 'stringified', bytes }, transfer: [bytes.buffer] };
}

if (workerData === JSON_THREAD && parentPort) {
  const port = parentPort;
  port.on('message', (job: JsonJob) => {
    const { answer, transfer } = run(job);
    port.postMessage(answer, transfer);
  });
}
