/**
 * A diagnostic preload for the memory benchmarks, never loaded by flowgate itself: a child started
 * with `NODE_OPTIONS=--require <dist>/test/bench/heap-hook.js` and `BENCH_HEAP_DIR=<dir>`
 *
 * - appends a line to `<dir>/stats-<pid>.jsonl` every `BENCH_HEAP_SAMPLE_MS` (5000): the process's
 *   RSS and main-heap figures and, through the inspector's `NodeWorker` domain, the V8 heap of each
 *   worker thread (the Temporal SDK runs every workflow in one such thread, whose heap a snapshot
 *   of the main thread does not show);
 * - on SIGUSR2 writes a heap snapshot of the main thread and of every worker thread
 *   (`<dir>/<n>-main-<pid>.heapsnapshot`, `<n>-thread<k>-<pid>.heapsnapshot`), then `<dir>/<n>-<pid>.done`.
 *
 * Read the snapshots with `node dist/test/bench/heap-summary.js` (or Chrome's DevTools).
 */
import { createWriteStream, appendFileSync } from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';
import v8 from 'node:v8';
import { isMainThread } from 'node:worker_threads';

interface Attached {
  sessionId: string;
  title: string;
}

const MiB = 1024 * 1024;

function install(dir: string): void {
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

  const inWorker = (sessionId: string, method: string, params: Record<string, unknown> = {}): Promise<unknown> => {
    const id = nextId++;
    const answered = new Promise<unknown>((resolve) => pending.set(id, resolve));
    session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) });
    return answered;
  };

  const sample = async (): Promise<void> => {
    const usage = process.memoryUsage();
    const heap = v8.getHeapStatistics();
    const threads: Record<string, { usedMiB: number; totalMiB: number }> = {};
    for (const worker of workers.values()) {
      const result = await Promise.race([inWorker(worker.sessionId, 'Runtime.getHeapUsage'), new Promise((resolve) => setTimeout(resolve, 2000, undefined))]);
      const figures = result as { usedSize?: number; totalSize?: number } | undefined;
      if (figures?.usedSize !== undefined) threads[`${worker.title}#${worker.sessionId}`] = { usedMiB: figures.usedSize / MiB, totalMiB: (figures.totalSize ?? 0) / MiB };
    }
    appendFileSync(path.join(dir, `stats-${process.pid}.jsonl`), `${JSON.stringify({
      at: new Date().toISOString(), rssMiB: usage.rss / MiB, mainHeapUsedMiB: usage.heapUsed / MiB, mainHeapTotalMiB: usage.heapTotal / MiB,
      externalMiB: usage.external / MiB, arrayBuffersMiB: usage.arrayBuffers / MiB, mainHeapLimitMiB: heap.heap_size_limit / MiB, threads,
    })}\n`);
  };

  let snapshots = 0;
  const snapshot = async (): Promise<void> => {
    const n = ++snapshots;
    v8.writeHeapSnapshot(path.join(dir, `${n}-main-${process.pid}.heapsnapshot`));
    let k = 0;
    for (const worker of workers.values()) {
      const file = createWriteStream(path.join(dir, `${n}-thread${++k}-${process.pid}.heapsnapshot`));
      chunkSinks.set(worker.sessionId, (chunk) => file.write(chunk));
      await inWorker(worker.sessionId, 'HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      chunkSinks.delete(worker.sessionId);
      await new Promise((resolve) => file.end(resolve));
    }
    appendFileSync(path.join(dir, `${n}-${process.pid}.done`), `${k} worker thread(s)\n`);
  };

  const period = Number(process.env.BENCH_HEAP_SAMPLE_MS ?? 5000);
  setInterval(() => void sample().catch(() => undefined), period).unref();
  process.on('SIGUSR2', () => void snapshot().catch((err: unknown) => console.error('heap-hook: snapshot failed', err)));
}

const dir = process.env.BENCH_HEAP_DIR;
if (isMainThread && dir) install(dir);
