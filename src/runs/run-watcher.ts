/**
 * Live run status without a tight loop: one reader per watched run per gateway process. However
 * many long polls and status streams wait on a run, the process reads it (RunService.view: a
 * describe and a `state` query for an open run) once every `intervalMs` and hands each change to
 * all of them; with no one waiting, the run is not read at all. A closed run's view comes from the
 * finished-run cache, so watching it costs nothing once it ended. No worker is held: the query is
 * answered from the worker's cache of open workflows.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../observability/logger';
import type { RunView } from './run-view';
import { messageOf } from '../common/narrow';

type Listener = (view: RunView) => void;

interface Watched {
  listeners: Set<Listener>;
  timer?: NodeJS.Timeout;
  fingerprint?: string;
  /** the latest view read, handed to a late subscriber at once (its own read may be older) */
  last?: RunView;
  failures: number;
}

const MAX_BACKOFF_MS = 5_000;

/** What a change is: anything a status body or a stream event shows. */
export function viewFingerprint(view: RunView): string {
  const lastSeq = view.transitions?.[view.transitions.length - 1]?.seq ?? 0;
  return createHash('sha256').update(JSON.stringify([view.status, view.steps, view.waitingOn ?? null, view.error ?? null, view.callback ?? null, lastSeq])).digest('base64url');
}

/** The run reached COMPLETE, FAILED or TIMEOUT. */
export function ended(view: Pick<RunView, 'status'>): boolean {
  return view.status === 'COMPLETE' || view.status === 'FAILED' || view.status === 'TIMEOUT';
}

/** Ended for good: the run ended and its callback (if any) is settled, so nothing more will change. */
export function settled(view: RunView): boolean {
  return ended(view) && (!view.callback || (view.callback.state !== 'PENDING' && view.callback.state !== 'DELIVERING'));
}

export class RunWatcher {
  private readonly watched = new Map<string, Watched>();

  constructor(private readonly read: (runId: string) => Promise<RunView | undefined>, private readonly intervalMs: number,
    private readonly log: Pick<Logger, 'warn'>) {}

  /** Calls `listener` with every new view of the run until the returned function is called. */
  subscribe(runId: string, listener: Listener): () => void {
    let entry = this.watched.get(runId);
    if (!entry) {
      entry = { listeners: new Set(), failures: 0 };
      this.watched.set(runId, entry);
      this.schedule(runId, entry, this.intervalMs);
    }
    entry.listeners.add(listener);
    const last = entry.last;
    if (last) queueMicrotask(() => { if (entry.listeners.has(listener)) listener(last); });
    return () => {
      entry.listeners.delete(listener);
      if (entry.listeners.size === 0) this.forget(runId, entry);
    };
  }

  /**
   * The first view whose `changed` says so, or undefined after `timeoutMs` (or when `signal` aborts:
   * the client went away).
   */
  waitFor(runId: string, changed: (view: RunView) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<RunView | undefined> {
    return new Promise((resolve) => {
      const finish = (view?: RunView): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        unsubscribe();
        resolve(view);
      };
      const onAbort = (): void => finish();
      const unsubscribe = this.subscribe(runId, (view) => {
        if (changed(view)) finish(view);
      });
      const timer = setTimeout(() => finish(), timeoutMs);
      signal?.addEventListener('abort', onAbort);
    });
  }

  /** Runs being watched now (tests, metrics). */
  get size(): number {
    return this.watched.size;
  }

  private schedule(runId: string, entry: Watched, delayMs: number): void {
    entry.timer = setTimeout(() => void this.tick(runId, entry), delayMs);
    entry.timer.unref();
  }

  private async tick(runId: string, entry: Watched): Promise<void> {
    let view: RunView | undefined;
    try {
      view = await this.read(runId);
      entry.failures = 0;
    } catch (err) {
      entry.failures++;
      this.log.warn('reading a watched run failed; trying again', { runId, error: messageOf(err) });
    }
    if (this.watched.get(runId) !== entry) return;
    if (view) {
      const fingerprint = viewFingerprint(view);
      if (fingerprint !== entry.fingerprint) {
        entry.fingerprint = fingerprint;
        entry.last = view;
        for (const listener of [...entry.listeners]) listener(view);
      }
      if (settled(view)) {
        // Later subscribers read the finished-run cache themselves: nothing more to poll.
        this.forget(runId, entry);
        return;
      }
    }
    if (entry.listeners.size === 0) return;
    this.schedule(runId, entry, Math.min(MAX_BACKOFF_MS, this.intervalMs * 2 ** entry.failures));
  }

  private forget(runId: string, entry: Watched): void {
    clearTimeout(entry.timer);
    if (this.watched.get(runId) === entry) this.watched.delete(runId);
  }
}
