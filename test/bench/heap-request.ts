/**
 * Asks a process that loaded heap-hook.ts (BENCH_HEAP_DIR) for heap snapshots of its main thread
 * and worker threads, and waits until it wrote them (at most ten minutes: a heap of gigabytes
 * takes a while to write).
 */
import { existsSync, readdirSync } from 'node:fs';

export async function requestHeapSnapshots(pid: number, dir: string): Promise<void> {
  const done = (): string[] => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(`-${pid}.done`)) : []);
  const before = done().length;
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 600_000;
  while (done().length === before) {
    if (Date.now() > deadline) throw new Error(`no heap snapshot from ${pid} in ${dir} within ten minutes`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
