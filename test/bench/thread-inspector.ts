/**
 * The V8 heaps of this process's worker threads, through the inspector's `NodeWorker` domain: the
 * Temporal SDK runs every workflow in one such thread, whose heap neither `global.gc()` nor a
 * snapshot of the main thread reaches. Used by the memory benchmarks only (heap-hook.ts, and the
 * paused-run figures of compare.ts), never by flowgate itself.
 */
import inspector from 'node:inspector';

interface Attached {
  sessionId: string;
  title: string;
}

export interface ThreadInspector {
  /** the worker threads attached so far */
  threads(): Attached[];
  /** an inspector method called in one worker thread, answered with its result */
  call(sessionId: string, method: string, params?: Record<string, unknown>): Promise<unknown>;
  /** where the chunks of a heap snapshot of thread `sessionId` go (undefined: nowhere) */
  onSnapshotChunk(sessionId: string, sink: ((chunk: string) => void) | undefined): void;
}

/** Attaches to every worker thread of this process (those running now, and those started later). */
export function inspectThreads(): ThreadInspector {
  const session = new inspector.Session();
  session.connect();
  const workers = new Map<string, Attached>();
  let nextId = 1;
  const pending = new Map<number, (result: unknown) => void>();
  const chunkSinks = new Map<string, (chunk: string) => void>();

  session.on('NodeWorker.attachedToWorker', (message: { params: { sessionId: string; workerInfo: { title: string } } }) => {
    workers.set(message.params.sessionId, { sessionId: message.params.sessionId, title: message.params.workerInfo.title });
  });
  session.on('NodeWorker.detachedFromWorker', (message: { params: { sessionId: string } }) => {
    workers.delete(message.params.sessionId);
  });
  session.on('NodeWorker.receivedMessageFromWorker', (message: { params: { sessionId: string; message: string } }) => {
    const parsed = JSON.parse(message.params.message) as { id?: number; result?: unknown; method?: string; params?: { chunk?: string } };
    if (parsed.id !== undefined) {
      pending.get(parsed.id)?.(parsed.result);
      pending.delete(parsed.id);
    } else if (parsed.method === 'HeapProfiler.addHeapSnapshotChunk' && parsed.params?.chunk !== undefined) {
      chunkSinks.get(message.params.sessionId)?.(parsed.params.chunk);
    }
  });
  session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });

  return {
    threads: () => [...workers.values()],
    call(sessionId, method, params = {}) {
      const id = nextId++;
      const answered = new Promise<unknown>((resolve) => pending.set(id, resolve));
      session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) });
      return answered;
    },
    onSnapshotChunk(sessionId, sink) {
      if (sink) chunkSinks.set(sessionId, sink);
      else chunkSinks.delete(sessionId);
    },
  };
}

const MiB = 1024 * 1024;

/** A promise that answers `undefined` after `ms` if `promise` has not answered by then. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return Promise.race([promise, new Promise<undefined>((resolve) => setTimeout(resolve, ms, undefined))]);
}

/** The used and total V8 heap (MiB) of each worker thread, by title; a thread that does not answer in `timeoutMs` is left out. */
export async function threadHeaps(inspect: ThreadInspector, timeoutMs = 2000): Promise<Record<string, { usedMiB: number; totalMiB: number }>> {
  const heaps: Record<string, { usedMiB: number; totalMiB: number }> = {};
  for (const worker of inspect.threads()) {
    const result = await within(inspect.call(worker.sessionId, 'Runtime.getHeapUsage'), timeoutMs);
    const figures = result as { usedSize?: number; totalSize?: number } | undefined;
    if (figures?.usedSize !== undefined) heaps[`${worker.title}#${worker.sessionId}`] = { usedMiB: figures.usedSize / MiB, totalMiB: (figures.totalSize ?? 0) / MiB };
  }
  return heaps;
}

/** A full collection of every worker thread's heap (each answers within 60 s or is skipped). */
export async function collectThreads(inspect: ThreadInspector): Promise<void> {
  for (const worker of inspect.threads()) await within(inspect.call(worker.sessionId, 'HeapProfiler.collectGarbage'), 60_000);
}
