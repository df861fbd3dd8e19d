/**
 * The retention sweep's work (run by the sweep workflow's activities, activities/retention.ts):
 * delete the blobs whose period is over, incomplete uploads older than a day, and finished-run rows
 * older than their period, and audit records older than theirs; expired OAuth codes and tokens, and
 * expired dynamically registered OAuth clients (src/oauth/clients.ts has the rule). Every step is idempotent (deleting what is gone is no error), so
 * a retried activity, or two sweeps of two installations' replicas at once, do no harm.
 */
import type { BlobStore } from '../blobs/blob-store';
import type { AuditStore } from '../registry/audit-records';
import type { FinishedRunStore } from '../registry/finished-runs';
import type { OAuthStore } from '../registry/oauth';
import { clientExpiry } from '../oauth/clients';
import { currentHolds } from './holds';
import { CALL_FILES_MS, DAY_MS, retentionGroup, retentionMs, SWEPT_PREFIXES, type RetentionSettings } from './policy';

export interface BlobSweepReport {
  removed: number;
  kept: number;
  /** temporary files, incomplete multipart uploads and empty folders removed */
  stale: number;
}

const PARALLEL_REMOVES = 16;

/**
 * Deletes every blob expired at `now`. Listing order keeps a run's folder together (S3 lists keys
 * in order; the local walk finishes a folder before the next), so run groups stream through.
 */
export async function sweepBlobs(blobs: BlobStore, settings: RetentionSettings, now: Date, progress: () => void = () => undefined): Promise<BlobSweepReport> {
  const report: BlobSweepReport = { removed: 0, kept: 0, stale: 0 };
  // Blobs a run that may still be open reads (holds.ts): kept past their period while held.
  const held = await currentHolds(blobs, now);
  const pending: Promise<void>[] = [];
  const remove = async (keys: string[]): Promise<void> => {
    for (const key of keys) {
      pending.push(blobs.remove(key));
      if (pending.length >= PARALLEL_REMOVES) {
        await Promise.all(pending.splice(0));
        progress();
      }
    }
    report.removed += keys.length;
  };
  let group: { id: string; newest: number; period: number; keys: string[] } | undefined;
  const flush = async (): Promise<void> => {
    if (!group) return;
    if (now.getTime() - group.newest > group.period) await remove(group.keys);
    else report.kept += group.keys.length;
    group = undefined;
  };
  for (const prefix of SWEPT_PREFIXES) {
    for await (const entry of blobs.list(prefix)) {
      const period = retentionMs(entry.key, settings);
      const id = retentionGroup(entry.key);
      if (group?.id !== id) await flush();
      if (period === undefined) {
        report.kept++;
        continue;
      }
      group ??= { id, newest: 0, period, keys: [] };
      group.newest = Math.max(group.newest, entry.modified.getTime(), (held.get(entry.key) ?? 0) - period);
      group.keys.push(entry.key);
    }
    await flush();
  }
  await Promise.all(pending);
  progress();
  // An upload in progress is minutes old at most; a day covers the slowest.
  report.stale = await blobs.removeStale(new Date(now.getTime() - CALL_FILES_MS));
  return report;
}

/** A registry table that removes its rows older than an instant, a batch at a time. */
interface AgedRows {
  removeOlderThan(cutoff: string, limit: number): Promise<number>;
}

const DELETE_BATCH = 1000;

/** Deletes `rows` older than `days` before `now`, a batch at a time (a heartbeat after each); returns how many. */
async function removeAged(rows: AgedRows, days: number, now: Date, progress: () => void): Promise<number> {
  const cutoff = new Date(now.getTime() - days * DAY_MS).toISOString();
  let removed = 0;
  for (;;) {
    const batch = await rows.removeOlderThan(cutoff, DELETE_BATCH);
    removed += batch;
    progress();
    if (batch < DELETE_BATCH) return removed;
  }
}

/** Deletes finished_runs rows older than the period; returns how many. */
export function sweepFinishedRuns(store: FinishedRunStore, finishedRunsDays: number, now: Date, progress: () => void = () => undefined): Promise<number> {
  return removeAged(store, finishedRunsDays, now, progress);
}

/** Deletes audit records older than the period (FLOWGATE_AUDIT_RETENTION_DAYS); returns how many. */
export function sweepAuditRecords(store: AuditStore, auditDays: number, now: Date, progress: () => void = () => undefined): Promise<number> {
  return removeAged(store, auditDays, now, progress);
}

/**
 * Deletes expired OAuth codes and tokens, then the registered OAuth clients expired at `now`
 * (never used for PENDING_CLIENT_HOURS, or unused for IDLE_CLIENT_DAYS without a live grant), a
 * batch at a time; returns how many clients went.
 */
export async function sweepOAuthClients(store: OAuthStore, now: Date, progress: () => void = () => undefined): Promise<number> {
  await store.deleteExpired(now.toISOString());
  const expiry = clientExpiry(now);
  let removed = 0;
  for (;;) {
    const batch = await store.removeExpiredClients(expiry, DELETE_BATCH);
    removed += batch;
    progress();
    if (batch < DELETE_BATCH) return removed;
  }
}
