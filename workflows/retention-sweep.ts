/**
 * retentionSweep: the retention sweep, a workflow the `flowgate-retention-<task queue>` Temporal
 * Schedule starts every hour (src/retention/schedule.ts), visible in the Web UI as `retentionSweep`.
 * The deletion work runs in activities on this installation's workers; the workflow only sequences
 * them. Input: SweepRequest (`now` for tests); answers what each activity swept.
 *
 * No signals or queries. Timeouts: each activity an hour, heartbeats every 2 minutes, 3 attempts;
 * the schedule gives the whole sweep 2 hours and skips a sweep while one runs.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { SweepRequest } from '../src/common/workflow-contracts';
import { useEngine } from './run/features';
import { summary } from './run/ui-metadata';

const { sweepExpiredBlobs, sweepFinishedRuns } = proxyActivities<Activities>({
  startToCloseTimeout: '1 hour',
  // listing a large bucket heartbeats every few removals
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 3, initialInterval: '10 seconds' },
});

export async function retentionSweep(request: SweepRequest = {}): Promise<{ blobs: unknown; finishedRuns: unknown }> {
  useEngine(request);
  const blobs = await sweepExpiredBlobs.executeWithOptions(summary('delete expired attachments, stored inputs and step files'), [request]);
  const finishedRuns = await sweepFinishedRuns.executeWithOptions(summary('delete the rows of finished runs past retention'), [request]);
  return { blobs, finishedRuns };
}
