/**
 * A resumed run (POST /api/v1/runs/{id}/resume): the steps before the one that failed are not run
 * again; their outcomes come from the earlier run in the input (`resume.outcomes`), files and all.
 * Only runs started with `resume` take this path; the patch marks their histories.
 */
import { feature } from './features';
import type { RunInput, RunState, StepOutcome, StepState } from '../../src/common/run-types';

export const RESUME_PATCH = 'resume-from-step';

/** Marks step `stepIndex` done with the earlier run's outcome; false when it must run. */
export function reuseEarlierOutcome(input: RunInput, state: RunState, stepIndex: number, stepState: StepState, order: () => number): boolean {
  const resume = input.resume;
  if (!resume || stepIndex >= resume.fromStep || !feature(RESUME_PATCH)) return false;
  const outcome: StepOutcome | undefined = resume.outcomes.find((o) => o.stepIndex === stepIndex && o.stepPath === undefined);
  if (!outcome) return false;
  stepState.executionOrder = order();
  stepState.reusedFrom = resume.fromRunId;
  stepState.status = outcome.status;
  state.outcomes.push(outcome);
  return true;
}
