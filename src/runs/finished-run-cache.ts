/**
 * Closed runs never change, so their views are kept: in this process (bounded, least recently
 * used out first) and once in the registry, where every replica and a restarted gateway find them.
 * Polling a finished run then costs no Temporal call at all, and works while Temporal is down.
 * Only a view that is the run's last word is kept (`final`): a failed run whose steps could not be
 * read back (no worker to answer the state query) is asked again next time.
 */
import { LruCache } from '../cache/lru-cache';
import { messageOf, ownJson } from '../common/narrow';
import type { Logger } from '../observability/logger';
import type { FinishedRunStore } from '../registry';
import type { RunView } from './run-view';

export const FINISHED_RUNS_IN_MEMORY = 5_000;

export class FinishedRunCache {
  private readonly memory = new LruCache<string, RunView>({ maxEntries: FINISHED_RUNS_IN_MEMORY, ttlMs: Infinity });

  constructor(private readonly store: FinishedRunStore, private readonly log: Pick<Logger, 'warn'>) {}

  /** The kept view of a closed run; undefined when there is none (or the registry could not say). */
  async get(runId: string): Promise<RunView | undefined> {
    const cached = this.memory.get(runId);
    if (cached) return cached;
    try {
      const stored = await this.store.get(runId);
      if (!stored) return undefined;
      // Our own registry's JSON, written by remember() below from a RunView.
      const view = ownJson<RunView>(stored.view);
      this.memory.set(runId, view);
      return view;
    } catch (err) {
      this.log.warn('reading a finished run from the registry failed; asking Temporal', { runId, error: messageOf(err) });
      return undefined;
    }
  }

  /** Keeps a closed run's final view; a registry failure only costs a later Temporal call. */
  async remember(view: RunView): Promise<void> {
    if (!view.final || this.memory.get(view.runId)) return;
    this.memory.set(view.runId, view);
    try {
      await this.store.put({ runId: view.runId, orgId: view.memo.orgId, automationId: view.memo.automationId, view: JSON.stringify(view) });
    } catch (err) {
      this.log.warn('writing a finished run to the registry failed', { runId: view.runId, error: messageOf(err) });
    }
  }
}
