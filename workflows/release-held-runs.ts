/**
 * releaseHeldRuns: the release fan-out of an unpaused workflow or trigger (issue 54;
 * src/runs/run-holds.ts). Runs prepared while it was paused started with `hold` in their input and
 * wait PENDING before their first step (workflows/run/operator-pause.ts); this workflow signals each
 * open run of the workflow or trigger started since the hold began with an unpause of that scope
 * (the signalHeldRuns activity: Temporal visibility, then one signal per run; a run not held
 * ignores it). It sweeps at once and twice more (RELEASE_SWEEPS_SECONDS), for a run whose start was
 * under way at the unpause or that visibility lists late, and stops when the workflow or trigger is
 * paused again. Durable: a gateway that answered the unpause may die; a worker killed mid-sweep has
 * the activity retried (signals are idempotent for a held run).
 */
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { RELEASE_SWEEPS_SECONDS, type ReleaseInput, type ReleaseResult } from '../src/common/run-holds';
import { summary } from './run/ui-metadata';

const { signalHeldRuns } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

export async function releaseHeldRuns(input: ReleaseInput): Promise<ReleaseResult> {
  const result: ReleaseResult = { sweeps: 0, signalled: 0, pausedAgain: false };
  let waited = 0;
  for (const at of RELEASE_SWEEPS_SECONDS) {
    if (at > waited) await sleep((at - waited) * 1000);
    waited = at;
    const sweep = await signalHeldRuns.executeWithOptions(summary(`release the runs held by ${input.scope} ${input.targetId}`), [input]);
    result.sweeps++;
    result.signalled += sweep.signalled;
    if (sweep.pausedAgain) {
      result.pausedAgain = true;
      break;
    }
  }
  return result;
}
