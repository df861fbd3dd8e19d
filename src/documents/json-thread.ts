/**
 * JSON of about 100 MB (a codeagent call with five 15 MB images), parsed and written on a thread
 * of its own (json-thread-worker.ts), so the event loop goes on serving while it runs: parsing
 * such a body held it for about 0.5 s, writing it again for the backend another 0.5 s. The
 * thread has a heap limit of its own: JSON that would exhaust it ends the thread, never the
 * process (the next job starts another). Jobs run one at a time, in order.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { JSON_THREAD, type JsonAnswer, type JsonJob, type ParseOutcome, type StringifyOutcome } from './json-thread-worker';

export { jsonShape, type ParseOutcome } from './json-thread-worker';

const THREAD_FILE = path.join(__dirname, 'json-thread-worker.js');
/** The thread's heap: a 110 MB body of strings needs about a quarter of it. */
const THREAD_HEAP_MB = 1024;
/** Values with more string content than this are written on the thread (jsonText). */
export const OFF_THREAD_STRING_BYTES = 1024 * 1024;

type Failed = { kind: 'failed'; reason: string };
type Settle = (answer: ParseOutcome | StringifyOutcome | Failed) => void;

interface Thread {
  worker: Worker;
  pending: Map<number, Settle>;
}

let thread: Thread | undefined;
let nextJob = 0;

function jsonThread(): Thread {
  if (thread) return thread;
  const worker = new Worker(THREAD_FILE, { workerData: JSON_THREAD, resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB } });
  // an idle thread must not keep the process alive
  worker.unref();
  const own: Thread = { worker, pending: new Map() };
  const fail = (reason: string): void => {
    if (thread === own) thread = undefined;
    for (const settle of own.pending.values()) settle({ kind: 'failed', reason });
    own.pending.clear();
  };
  worker.on('message', (answer: JsonAnswer) => {
    const settle = own.pending.get(answer.id);
    own.pending.delete(answer.id);
    if (own.pending.size === 0) worker.unref();
    const { id: _id, ...outcome } = answer;
    settle?.(outcome);
  });
  worker.on('error', (error) => fail(error.message));
  worker.on('exit', (code) => fail(`the JSON thread exited with code ${code}`));
  thread = own;
  return own;
}

function submit(job: JsonJob, transfer: ArrayBuffer[]): Promise<ParseOutcome | StringifyOutcome | Failed> {
  const own = jsonThread();
  return new Promise((resolve) => {
    own.pending.set(job.id, resolve);
    // a job waiting for its answer keeps the process alive, the idle thread does not
    own.worker.ref();
    try {
      own.worker.postMessage(job, transfer);
    } catch (error) {
      // a value the structured clone cannot copy
      own.pending.delete(job.id);
      if (own.pending.size === 0) own.worker.unref();
      resolve({ kind: 'failed', reason: error instanceof Error ? error.message : String(error) });
    }
  });
}

/**
 * Parses JSON on the thread, refusing without parsing it JSON that nests deeper than `maxDepth`
 * or has more than `maxStructureBytes` outside its strings. `body` is handed over (its memory
 * moves to the thread): the caller must not use it afterwards.
 */
export async function parseJsonOffThread(body: Buffer, limits: { maxDepth: number; maxStructureBytes: number }): Promise<ParseOutcome | Failed> {
  // only a buffer that owns all of its memory can be moved; a slice of a larger one is copied
  const owned = body.byteOffset === 0 && body.buffer instanceof ArrayBuffer && body.buffer.byteLength === body.length;
  const bytes: Uint8Array = owned ? body : Uint8Array.prototype.slice.call(body);
  // always an ArrayBuffer (owned, or the copy's own): a SharedArrayBuffer is never moved
  const outcome = await submit({ id: ++nextJob, kind: 'parse', bytes, ...limits }, bytes.buffer instanceof ArrayBuffer ? [bytes.buffer] : []);
  if (outcome.kind === 'stringified' || outcome.kind === 'unserializable') return { kind: 'failed', reason: `a parse answered ${outcome.kind}` };
  return outcome;
}

/** Whether a JSON value holds more than `bytes` characters of strings (keys included); stops counting there. */
export function stringContentExceeds(value: unknown, bytes: number): boolean {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current === 'string') {
      total += current.length;
    } else if (Array.isArray(current)) {
      for (const item of current) stack.push(item);
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        total += key.length;
        stack.push(item);
      }
    }
    if (total > bytes) return true;
  }
  return false;
}

/**
 * `JSON.stringify(value)`, as a request body: written here when small, on the thread (as UTF-8
 * bytes) when its strings are longer than OFF_THREAD_STRING_BYTES.
 */
export async function jsonText(value: unknown): Promise<string | Buffer> {
  if (!stringContentExceeds(value, OFF_THREAD_STRING_BYTES)) return JSON.stringify(value);
  const outcome = await submit({ id: ++nextJob, kind: 'stringify', value }, []);
  if (outcome.kind === 'stringified') return Buffer.from(outcome.bytes.buffer, outcome.bytes.byteOffset, outcome.bytes.byteLength);
  // the thread could not take it (gone, or a value it cannot copy): written here after all
  return JSON.stringify(value);
}
