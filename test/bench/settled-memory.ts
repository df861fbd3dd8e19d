/**
 * Memory figures of a benchmark child once it holds only what it keeps (compare.ts, paused runs).
 *
 * RSS read while a process still holds garbage says little: V8 collects when it wants, and the
 * workflow thread of a Temporal worker has its own heap, which `global.gc()` in the main thread
 * does not reach. So the child collects every heap it has (the main thread's with --expose-gc,
 * each worker thread's through the inspector, thread-inspector.ts), twice, and answers its heaps'
 * sizes; the parent then reads RSS a few times and keeps the median.
 */
import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { z } from 'zod';
import { collectThreads, inspectThreads, threadHeaps, type ThreadInspector } from './thread-inspector';

const MiB = 1024 * 1024;
const SettledSchema = z.object({ settled: z.object({ mainHeapMiB: z.number(), threadHeapMiB: z.number() }) });

export interface SettledMemory {
  /** the median of a few RSS readings after the collections */
  rssMiB: number;
  /** the main thread's used heap */
  mainHeapMiB: number;
  /** the worker threads' used heaps (the workflow thread's, for a Temporal worker) */
  threadHeapMiB: number;
}

let inspect: ThreadInspector | undefined;

/** The inspector, attached on first use (not for the rest of the benchmark's scenarios); waits up to 2 s for the threads to show. */
async function threadInspector(): Promise<ThreadInspector> {
  if (!inspect) {
    inspect = inspectThreads();
    const deadline = Date.now() + 2000;
    while (inspect.threads().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return inspect;
}

/** Child side: collects every heap (twice: what a finalizer frees in one is collected by the next) and answers their sizes. */
export async function settleHeaps(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  const threads = await threadInspector();
  for (let round = 0; round < 2; round++) {
    gc?.();
    await collectThreads(threads);
  }
  // a busy thread answers late (a loaded machine): wait for it rather than leave its heap out
  const heaps = Object.values(await threadHeaps(threads, 60_000));
  process.send?.({ settled: { mainHeapMiB: process.memoryUsage().heapUsed / MiB, threadHeapMiB: heaps.reduce((sum, heap) => sum + heap.usedMiB, 0) } });
}

/** utime + stime of a process from /proc (all threads), in clock ticks (1/100 s); NaN when unreadable. */
function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return NaN;
  }
}

/**
 * Waits (at most `maxMs`) until every process of `pids` used under 5% of a core over two seconds:
 * the workers have taken every task they were given. A fixed wait is too short on a loaded machine.
 * Answers the ms waited.
 */
export async function quiet(pids: number[], maxMs = 300_000): Promise<number> {
  const began = Date.now();
  for (;;) {
    const before = pids.map(cpuTicks);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const busy = pids.some((pid, i) => cpuTicks(pid) - (before[i] ?? 0) > 10);
    if (!busy || Date.now() - began > maxMs) return Date.now() - began;
  }
}

export function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? NaN) / 1024;
}

/** Parent side: asks `child` to settle its heaps, then reads its RSS `readings` times, 500 ms apart. */
export async function settledMemory(child: ChildProcess, pid: number, readings = 5): Promise<SettledMemory> {
  const heaps = await new Promise<z.infer<typeof SettledSchema>['settled']>((resolve) => {
    const onMessage = (message: unknown): void => {
      const parsed = SettledSchema.safeParse(message);
      if (!parsed.success) return;
      child.off('message', onMessage);
      resolve(parsed.data.settled);
    };
    child.on('message', onMessage);
    child.send('gc');
  });
  const rss: number[] = [];
  for (let i = 0; i < readings; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 500));
    rss.push(rssMiB(pid));
  }
  rss.sort((a, b) => a - b);
  return { rssMiB: rss[Math.floor(rss.length / 2)] ?? NaN, ...heaps };
}
