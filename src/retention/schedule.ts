/**
 * The retention sweep's Temporal Schedule: `flowgate-retention-<task queue>`, every hour, starting
 * the `retentionSweep` workflow on this installation's task queue. Every process makes sure of it
 * at start: creating it is idempotent (an existing schedule, made by another replica, is left as
 * it is); overlap SKIP keeps one sweep at a time whatever the number of replicas. With retention
 * off (FLOWGATE_RETENTION=off), start-up deletes the schedule instead.
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { WORKFLOW_TYPES } from '../common/workflow-contracts';
import { ENGINE_LEVEL } from '../common/run-types';
import type { Logger } from '../observability/logger';

export function retentionScheduleId(taskQueue: string): string {
  return `flowgate-retention-${taskQueue}`;
}

export const SWEEP_EVERY = '1 hour';

export async function ensureRetentionSchedule(client: Client, options: { taskQueue: string; enabled: boolean; log: Pick<Logger, 'info'> }): Promise<'created' | 'exists' | 'deleted' | 'absent'> {
  const scheduleId = retentionScheduleId(options.taskQueue);
  if (!options.enabled) {
    try {
      await client.schedule.getHandle(scheduleId).delete();
      options.log.info('retention is off: deleted the retention sweep schedule', { scheduleId });
      return 'deleted';
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) return 'absent';
      throw err;
    }
  }
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: SWEEP_EVERY }] },
      action: {
        type: 'startWorkflow',
        workflowType: WORKFLOW_TYPES.retentionSweep,
        workflowId: scheduleId,
        taskQueue: options.taskQueue,
        // existing schedules keep theirs (`{}`): their sweeps run unlabelled
        args: [{ engine: ENGINE_LEVEL }],
        workflowExecutionTimeout: '2 hours',
        staticSummary: 'flowgate retention sweep: deletes expired attachments, stored inputs, step files and finished-run rows',
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
      memo: { flowgateRetention: { taskQueue: options.taskQueue } },
    });
    return 'created';
  } catch (err) {
    if (err instanceof ScheduleAlreadyRunning) return 'exists';
    throw err;
  }
}
