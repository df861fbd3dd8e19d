/**
 * The retention sweep: a workflow the `flowgate-retention-<task queue>` Temporal Schedule starts
 * every hour (src/retention/schedule.ts), visible in the Web UI as `retentionSweep`. The deletion
 * work runs in activities on this installation's workers; the workflow only sequences them.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { SweepRequest } from '../src/common/workflow-contracts';

const { sweepExpiredBlobs, sweepFinishedRuns } = proxyActivities<Activities>({
  startToCloseTimeout: '1 hour',
  // listing a large bucket heartbeats every few removals
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 3, initialInterval: '10 seconds' },
});

export async function retentionSweep(request: SweepRequest = {}): Promise<{ blobs: unknown; finishedRuns: unknown }> {
  const blobs = await sweepExpiredBlobs(request);
  const finishedRuns = await sweepFinishedRuns(request);
  return { blobs, finishedRuns };
}
