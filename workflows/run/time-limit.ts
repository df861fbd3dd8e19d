/**
 * The run's own time limit (the definition's `timeoutSeconds`), kept by the workflow itself: a
 * timer races the steps; when it fires first, the steps are cancelled (the current activity or
 * child run with them) and the run ends TIMEOUT (ApplicationFailure RUN_TIMEOUT with the
 * RunSummary as details), so the completion callback still goes out. Temporal's workflow execution
 * timeout stays as a backstop, RUN_TIME_LIMIT_MARGIN_SECONDS later (runExecutionTimeoutMs).
 * Runs started before the patch keep Temporal's timeout as their only limit.
 */
import { ApplicationFailure, CancellationScope, isCancellation, sleep, upsertMemo, workflowInfo } from '@temporalio/workflow';
import { runExecutionTimeoutMs } from '../../src/common/run-time-limit';
import { feature } from './features';
import { slotsGrantedAt } from './slots';
import { runLocals } from './run-locals';
import { summary as uiSummary } from './ui-metadata';
import { shortDuration } from '../../src/common/run-labels';
import { decisionsOf, FailureType, type RunInput, type RunState, type RunSummary } from '../../src/common/run-types';

export const RUN_TIME_LIMIT_PATCH = 'run-time-limit';

/**
 * When this run must end: its own time limit when the workflow keeps it, else Temporal's
 * execution expiry. Waited-for children and agent invocations are bounded by it.
 */
export function runDeadline(): Date | undefined {
  const { deadlineMs } = runLocals();
  return deadlineMs === undefined ? workflowInfo().executionExpirationTime : new Date(deadlineMs);
}

/**
 * The workflow execution timeout of a chained run whose limit is `limitMs`: a backstop, as for any
 * run, since the chained run (started now, by this code) keeps its limit itself.
 */
export function childExecutionTimeoutMs(limitMs: number): number {
  return runExecutionTimeoutMs(limitMs / 1000);
}

/**
 * Marks a run that ends TIMEOUT in its memo (`endedAs`), so that run lists, which see only
 * Temporal's status (Failed), tell it apart without reading each run. Only in patched runs.
 */
export function markTimedOut(): void {
  if (runLocals().deadlineMs !== undefined) upsertMemo({ endedAs: 'TIMEOUT' });
}

export async function withRunTimeLimit(input: RunInput, state: RunState, body: () => Promise<RunSummary>): Promise<RunSummary> {
  if (!feature(RUN_TIME_LIMIT_PATCH)) return body();
  // a run that waited for concurrency slots counts its time from when it got them
  const startedMs = slotsGrantedAt() ?? workflowInfo().runStartTime.getTime();
  const ownDeadlineMs = startedMs + input.definition.timeoutSeconds * 1000;
  const parentDeadlineMs = input.deadline === undefined ? Number.NaN : Date.parse(input.deadline);
  // the run's deadline (runDeadline, markTimedOut read it); unset before the patch
  const deadlineMs = parentDeadlineMs < ownDeadlineMs ? parentDeadlineMs : ownDeadlineMs;
  runLocals().deadlineMs = deadlineMs;
  const limitSeconds = Math.max(0, Math.round((deadlineMs - startedMs) / 1000));
  const steps = new CancellationScope();
  const timer = new CancellationScope();
  let timedOut = false;
  const ticking = timer.run(() => sleep(Math.max(1, deadlineMs - Date.now()), uiSummary(`time limit ${shortDuration(limitSeconds * 1000)}`))).then(() => {
    timedOut = true;
    steps.cancel();
  }, () => undefined);
  try {
    return await steps.run(body);
  } catch (err) {
    if (!timedOut || !isCancellation(err)) throw err;
    const message = `the run exceeded its time limit of ${limitSeconds} seconds${deadlineMs < ownDeadlineMs ? ' (its parent run\'s deadline)' : ''}`;
    for (const step of Object.values(state.steps)) {
      if (step.status === 'RUNNING' || step.status === 'PAUSED') step.status = 'TIMEOUT';
    }
    delete state.waitingOn;
    const summary: RunSummary = { status: 'TIMEOUT', error: message, outcomes: state.outcomes, steps: state.steps, transitions: state.transitions, ...decisionsOf(state) };
    Object.assign(state, { status: 'TIMEOUT', error: message });
    markTimedOut();
    throw ApplicationFailure.create({ type: FailureType.RUN_TIMEOUT, message, nonRetryable: true, details: [summary] });
  } finally {
    if (!timedOut) timer.cancel();
    await ticking;
  }
}
