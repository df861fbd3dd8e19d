/**
 * A file registry's checkpoints, off the event loop. The registry's connection runs with
 * `wal_autocheckpoint = 0` (db.ts); each statement it runs asks for a checkpoint within
 * CHECKPOINT_EVERY_MS, which a thread of its own runs on its own connection
 * (sqlite-checkpoint-thread.ts). The thread starts on the first request, so a registry that is only
 * opened and closed starts none, and it never keeps the process alive. Should it fail, `onFailure`
 * gives the checkpoints back to the connection (SQLite's own, in the commit that takes the log past
 * 1,000 pages).
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { CHECKPOINT_THREAD, type CheckpointAnswer, type CheckpointRequest, type CheckpointThreadData } from './sqlite-checkpoint-thread';

const THREAD_FILE = path.join(__dirname, 'sqlite-checkpoint-thread.js');

/** How long after a write its pages are checkpointed (and the log synced) at the latest, thread willing. */
export const CHECKPOINT_EVERY_MS = 250;
/** How long close() waits for a checkpoint under way before it ends the thread. */
const CLOSE_WAIT_MS = 5_000;

export class SqliteCheckpoints {
  private worker: Worker | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** a checkpoint is running; `again`: a write asked for another meanwhile */
  private running = false;
  private again = false;
  private state: 'open' | 'failed' | 'closed' = 'open';
  /** resolves once the thread has ended */
  private ended: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly onFailure: (reason: string) => void,
    private readonly everyMs = CHECKPOINT_EVERY_MS,
  ) {}

  /** Whether checkpoints still run on the thread (not failed, not closed). */
  get healthy(): boolean {
    return this.state === 'open';
  }

  /** A statement ran on the registry's connection: a checkpoint follows within `everyMs`. */
  written(): void {
    if (this.timer !== undefined || this.state !== 'open') return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.request();
    }, this.everyMs);
    this.timer.unref();
  }

  /**
   * Stops asking; resolves once the thread has closed its connection and ended (or, stuck, was
   * ended after CLOSE_WAIT_MS), so that the registry's connection, closed next, is the file's last
   * one and checkpoints the log as it closes.
   */
  close(): Promise<void> {
    if (this.state !== 'closed') {
      this.state = 'closed';
      clearTimeout(this.timer);
      this.timer = undefined;
      const worker = this.worker;
      this.worker = undefined;
      if (worker) {
        this.ended = new Promise((resolve) => {
          const stuck = setTimeout(() => void worker.terminate(), CLOSE_WAIT_MS);
          worker.once('exit', () => {
            clearTimeout(stuck);
            resolve();
          });
        });
        worker.postMessage('close' satisfies CheckpointRequest);
      }
    }
    return this.ended;
  }

  private request(): void {
    if (this.state !== 'open') return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.thread().postMessage('checkpoint' satisfies CheckpointRequest);
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const data: CheckpointThreadData = { tag: CHECKPOINT_THREAD, file: this.file };
    const worker = new Worker(THREAD_FILE, { workerData: data });
    // neither an idle thread nor a checkpoint under way keeps the process alive
    worker.unref();
    worker.on('message', (answer: CheckpointAnswer) => {
      if (worker !== this.worker) return;
      this.running = false;
      if (answer.kind === 'failed') return this.fail(answer.reason);
      if (this.again) {
        this.again = false;
        this.written();
      }
    });
    worker.on('error', (error) => {
      if (worker === this.worker) this.fail(error.message);
    });
    worker.on('exit', (code) => {
      if (worker === this.worker) this.fail(`the checkpoint thread exited with code ${code}`);
    });
    this.worker = worker;
    return worker;
  }

  private fail(reason: string): void {
    if (this.state !== 'open') return;
    this.state = 'failed';
    clearTimeout(this.timer);
    this.timer = undefined;
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate();
    this.onFailure(reason);
  }
}
