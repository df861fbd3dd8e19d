/**
 * Workflow interceptors for replay tests only (bundled by concurrent-templates.test.ts): a step's
 * activity, local or not, must hand back that step's own outcome. Replay compares the commands a
 * run issues with its history, not the results it is handed: a local activity marker handed to
 * another `runStep` local activity (same sequence number, same activity type) replays without
 * error. With these interceptors in the bundle, such a hand-over fails the replay.
 */
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';

interface StepPlace { stepIndex?: unknown; stepPath?: unknown }

const where = (p: StepPlace | undefined): string => String(p?.stepPath ?? p?.stepIndex);

function checked<T>(activityType: string, args: unknown[], result: T): T {
  if (activityType !== 'runStep') return result;
  const asked = where(args[0] as StepPlace | undefined);
  const got = where(result as StepPlace | undefined);
  if (asked !== got) throw new Error(`step ${asked} was handed the outcome of step ${got}`);
  return result;
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [{
    scheduleActivity: (input, next) => next(input).then((result) => checked(input.activityType, input.args, result)),
    scheduleLocalActivity: (input, next) => next(input).then((result) => checked(input.activityType, input.args, result)),
  }],
});
