/**
 * runBatch: a bulk action (cancel, rerun, resume, pause, unpause) on the runs a filter selects
 * (issue 54). Its workflow ID is the batch ID the gateway answered, so the batch is Temporal's to
 * keep: a gateway restarted mid-batch changes nothing, a worker killed mid-batch has its activities
 * retried elsewhere, and the batch finishes once.
 *
 * First the listBatchRuns activity selects the runs (Temporal visibility, src/runs/run-list.ts, at
 * most `limit`); then applyBatchAction acts on each through the single-run services, at most
 * BATCH_CONCURRENCY at a time, and each answer is one outcome: succeeded, refused (the run does not
 * allow the action now: a code says why) or failed. Rerun and resume start their new run under an
 * idempotency key of the batch and the run, so a retried activity finds the run it started.
 *
 * Known limit: the activities share the worker's activity slots (100 by default) with the runs'
 * steps. A batch over runs that hold every slot in long steps waits for slots: with 100 runs held in
 * an HTTP step, a pause batch did not finish within 120 s (local activities instead of these were
 * tried and were no better on the loaded test machine: their workflow tasks timed out).
 *
 * Query `batchState` (BatchState): the progress and the outcomes so far; the result is the final
 * BatchState.
 */
import { proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { BATCH_CONCURRENCY, type BatchInput, type BatchRunOutcome, type BatchState } from '../src/common/run-batch';
import { messageOf } from '../src/common/narrow';
import { batchStateQuery } from '../src/common/workflow-contracts';
import { summary } from './run/ui-metadata';

const { listBatchRuns } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 10 },
});
const { applyBatchAction } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
});

export async function runBatch(input: BatchInput): Promise<BatchState> {
  const state: BatchState = {
    batchId: input.batchId, action: input.action, filter: input.filter, limit: input.limit, by: input.by, requested: input.requested,
    status: 'LISTING', total: 0, succeeded: 0, refused: 0, failed: 0, outcomes: [],
  };
  setHandler(batchStateQuery, () => state);
  const runIds = await listBatchRuns.executeWithOptions(summary(`select the runs (${input.action})`), [{ orgId: input.orgId, filter: input.filter, limit: input.limit }]);
  state.total = runIds.length;
  state.status = 'RUNNING';
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < runIds.length) {
      const runId = runIds[next++]!;
      let outcome: BatchRunOutcome;
      try {
        outcome = await applyBatchAction.executeWithOptions(summary(`${input.action} ${runId}`), [{
          batchId: input.batchId, orgId: input.orgId, action: input.action, runId, by: input.by, ...(input.reason ? { reason: input.reason } : {}),
        }]);
      } catch (err) {
        outcome = { runId, outcome: 'failed', message: messageOf(err instanceof Error && err.cause ? err.cause : err) };
      }
      state.outcomes.push(outcome);
      state[outcome.outcome]++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, runIds.length) }, worker));
  state.status = 'COMPLETE';
  return state;
}
