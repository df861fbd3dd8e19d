/**
 * The retention sweep's activities (workflows/retention-sweep.ts): the deletion work itself, with
 * this worker's blob store, registry and retention settings. `now` (ISO 8601) may be given to sweep
 * as of another moment (tests); unset, the worker's clock. A worker whose retention is off deletes
 * nothing (set FLOWGATE_RETENTION the same on every process).
 */
import { Context } from '@temporalio/activity';
import type { BlobStore } from '../src/blobs/blob-store';
import type { Config } from '../src/config/config';
import type { Registry } from '../src/registry';
import type { SweepRequest } from '../src/common/workflow-contracts';
import { sweepAuditRecords, sweepBlobs, sweepFinishedRuns, sweepOAuthClients, type BlobSweepReport } from '../src/retention/sweep';


export interface RetentionDependencies {
  blobs: BlobStore;
  registry: Registry;
  retention?: Readonly<Config['retention']>;
}

function heartbeat(): void {
  try {
    Context.current().heartbeat();
  } catch {
    // outside an activity (a direct call): nothing to report to
  }
}

function sweepTime(request: SweepRequest): Date {
  const now = request.now === undefined ? new Date() : new Date(request.now);
  if (Number.isNaN(now.getTime())) throw new Error(`not a time: ${request.now}`);
  return now;
}

export function createRetentionActivities(deps: RetentionDependencies) {
  return {
    async sweepExpiredBlobs(request: SweepRequest): Promise<BlobSweepReport | { disabled: true }> {
      if (!deps.retention?.enabled) return { disabled: true };
      return sweepBlobs(deps.blobs, deps.retention, sweepTime(request), heartbeat);
    },
    /**
     * The registry's rows past retention: finished runs, then audit records, then expired OAuth
     * codes, tokens and registered clients (one activity for all, so the sweep workflow's history
     * keeps its shape; `auditRemoved` is the records', `oauthClientsRemoved` the clients').
     */
    async sweepFinishedRuns(request: SweepRequest): Promise<{ removed: number; auditRemoved: number; oauthClientsRemoved: number } | { disabled: true }> {
      if (!deps.retention?.enabled) return { disabled: true };
      const now = sweepTime(request);
      const removed = await sweepFinishedRuns(deps.registry.finishedRuns, deps.retention.finishedRunsDays, now, heartbeat);
      const auditRemoved = await sweepAuditRecords(deps.registry.audit, deps.retention.auditDays, now, heartbeat);
      return { removed, auditRemoved, oauthClientsRemoved: await sweepOAuthClients(deps.registry.oauth, now, heartbeat) };
    },
  };
}
