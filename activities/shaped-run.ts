/**
 * The startShapedRun activity: the run of a closed window of a debounced or batched trigger
 * (workflows/shape-trigger-events.ts), started by the worker's ShapedRuns
 * (src/triggers/shaping/shaped-runs.ts). A refusal is a value; a failure throws and is retried.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { ShapedRunStarter, StartShapedRunRequest, StartShapedRunResult } from '../src/triggers/shaping/shaped-runs';

export function createStartShapedRun(deps: { shapedRuns?: ShapedRunStarter }) {
  return async function startShapedRun(request: StartShapedRunRequest): Promise<StartShapedRunResult> {
    // a worker built without it (an embedding that gave none) keeps the window: another worker may have it
    if (!deps.shapedRuns) throw ApplicationFailure.retryable('this worker cannot start shaped runs (no ShapedRuns given)', 'NO_SHAPED_RUNS');
    return deps.shapedRuns.start(request);
  };
}
