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
import path from 'node:path';
import v8 from 'node:v8';
import { isMainThread } from 'node:worker_threads';
import { inspectThreads, threadHeaps } from './thread-inspector';

const MiB = 1024 * 1024;

function install(dir: string): void {
  const inspect = inspectThreads();

  const sample = async (): Promise<void> => {
    const usage = process.memoryUsage();
    const heap = v8.getHeapStatistics();
    const threads = await threadHeaps(inspect);
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
    for (const worker of inspect.threads()) {
      const file = createWriteStream(path.join(dir, `${n}-thread${++k}-${process.pid}.heapsnapshot`));
      inspect.onSnapshotChunk(worker.sessionId, (chunk) => file.write(chunk));
      await inspect.call(worker.sessionId, 'HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      inspect.onSnapshotChunk(worker.sessionId, undefined);
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
