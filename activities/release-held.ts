/**
 * The release workflow's activity (workflows/release-held-runs.ts): one sweep of the runs held by
 * an unpaused workflow or trigger, through the worker's RunHolds (src/runs/run-holds.ts).
 */
import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import type { ReleaseInput, ReleaseSweep } from '../src/common/run-holds';
import type { RunHolds } from '../src/runs/run-holds';

export function createReleaseActivities(deps: { holds?: Pick<RunHolds, 'sweep'> }) {
  return {
    async signalHeldRuns(input: ReleaseInput): Promise<ReleaseSweep> {
      // a worker built without it (an embedding that gave none) leaves the release to another worker
      if (!deps.holds) throw ApplicationFailure.retryable('this worker cannot release held runs (no RunHolds given)', 'NO_RUN_HOLDS');
      return deps.holds.sweep(input, (signalled) => heartbeat(signalled));
    },
  };
}
