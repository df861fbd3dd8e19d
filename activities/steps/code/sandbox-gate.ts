/**
 * How much memory the `code` steps' sandboxes of a worker hold at once (the `code` share of
 * FLOWGATE_WORKER_MEMORY_MB, src/config/worker-memory.ts). A step reserves its `memoryLimitMb` plus
 * a sandbox thread's own cost before its thread starts and gives it back when the thread is done;
 * a step that does not fit waits, first come first served, for running ones to end. A step that
 * alone asks more than the whole budget runs when nothing else does, so every valid step can run.
 * Without it, each of the worker's 100 activity slots could hold a thread and a QuickJS memory of
 * up to 512 MB.
 */
import { SANDBOX_THREAD_MB } from '../../../src/config/worker-memory';

interface Waiter {
  mb: number;
  grant: () => void;
}

export class SandboxGate {
  private held = 0;
  private running = 0;
  private readonly queue: Waiter[] = [];

  constructor(readonly budgetMb: number) {}

  /** what a step with this `memoryLimitMb` reserves */
  static cost(memoryLimitMb: number): number {
    return memoryLimitMb + SANDBOX_THREAD_MB;
  }

  /** Resolves once `mb` is reserved; the function it gives releases it (once). Aborting drops the wait. */
  async acquire(mb: number, signal?: AbortSignal): Promise<() => void> {
    if (this.queue.length === 0 && this.fits(mb)) return this.take(mb);
    return new Promise<() => void>((resolve, reject) => {
      const waiter: Waiter = { mb, grant: () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(this.take(mb));
      } };
      const onAbort = (): void => {
        const at = this.queue.indexOf(waiter);
        if (at >= 0) this.queue.splice(at, 1);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted while waiting for sandbox memory'));
        this.drain();
      };
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  /** reserved now, in MB */
  get reservedMb(): number {
    return this.held;
  }

  /** steps waiting for memory */
  get waiting(): number {
    return this.queue.length;
  }

  private fits(mb: number): boolean {
    return this.running === 0 || this.held + mb <= this.budgetMb;
  }

  private take(mb: number): () => void {
    this.held += mb;
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held -= mb;
      this.running--;
      this.drain();
    };
  }

  private drain(): void {
    while (this.queue.length > 0) {
      const next = this.queue[0];
      if (!next || !this.fits(next.mb)) return;
      this.queue.shift();
      next.grant();
    }
  }
}
