/**
 * The batch workflow's activities (workflows/run-batch.ts): select the runs a filter names, and act
 * on one run, through the worker's RunBatches (src/runs/run-batch.ts). A refusal is an outcome; an
 * error (Temporal unreachable) throws and is retried.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { BatchFilter, BatchRunOutcome } from '../src/common/run-batch';
import type { BatchActionRequest, RunBatches } from '../src/runs/run-batch';

export function createRunBatchActivities(deps: { batches?: Pick<RunBatches, 'select' | 'apply'> }) {
  const batches = (): Pick<RunBatches, 'select' | 'apply'> => {
    // a worker built without it (an embedding that gave none) leaves the batch to another worker
    if (!deps.batches) throw ApplicationFailure.retryable('this worker cannot act on runs in bulk (no RunBatches given)', 'NO_RUN_BATCHES');
    return deps.batches;
  };
  return {
    async listBatchRuns(request: { orgId: string; filter: BatchFilter; limit: number }): Promise<string[]> {
      return batches().select(request.orgId, request.filter, request.limit);
    },
    async applyBatchAction(request: BatchActionRequest): Promise<BatchRunOutcome> {
      return batches().apply(request);
    },
  };
}
