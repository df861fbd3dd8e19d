/**
 * Completion callbacks. When a run that names a callback URL ends (COMPLETE, a failed or timed-out
 * step, or cancellation), it starts the child workflow `deliverRunCallback` (ID `<runId>-callback`,
 * abandoned when the run closes), which POSTs the final status through the postCallback activity
 * with retries and backoff. The run itself closes at once, so a synchronous caller never waits for
 * the receiver. A run over its own time limit ends TIMEOUT from inside (time-limit.ts) and
 * sends it; a run Temporal closes itself (terminated by an operator, or the backstop execution
 * timeout when no worker could end it) gets no chance to send one.
 *
 * deliverRunCallback: no signals or queries; its result (CallbackStatus) is what the status
 * response shows once it closed. Activity: 60 s per attempt, at most CALLBACK_MAX_ATTEMPTS attempts.
 */
import {
  ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, ParentClosePolicy, proxyActivities, startChild,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { feature } from './features';
import { FailureType, type CallbackRequest, type CallbackStatus, type RunInput, type RunState, type RunSummary } from '../../src/common/run-types';

export const CALLBACK_PATCH = 'completion-callback';
export const CALLBACK_MAX_ATTEMPTS = 12;

/** The child workflow's ID for run `runId`. */
export function callbackWorkflowId(runId: string): string {
  return `${runId}-callback`;
}

/**
 * Runs `body` (the steps); when the run has a callback, starts its delivery once the outcome is known.
 * Not async itself: a run without a callback gets `body()`'s own promise (each promise a workflow
 * makes costs a stack capture in the SDK's promise hook, ~0.1 ms on a 2-core machine).
 */
export function withCompletionCallback(input: RunInput, state: RunState, body: () => Promise<RunSummary>): Promise<RunSummary> {
  if (!input.callback || !feature(CALLBACK_PATCH)) return body();
  return deliveringCallback(input, input.callback.url, state, body);
}

async function deliveringCallback(input: RunInput, url: string, state: RunState, body: () => Promise<RunSummary>): Promise<RunSummary> {
  let summary: RunSummary;
  try {
    summary = await body();
  } catch (err) {
    const ended = endedWith(err, state);
    // A cancelled run still sends its callback: outside the cancelled scope.
    await CancellationScope.nonCancellable(() => startDelivery(input, url, ended));
    throw err;
  }
  await startDelivery(input, url, summary);
  return summary;
}

function endedWith(err: unknown, state: RunState): RunSummary {
  if (err instanceof ApplicationFailure && (err.type === FailureType.STEP_FAILED || err.type === FailureType.STEP_TIMEOUT || err.type === FailureType.RUN_TIMEOUT)) {
    const summary = err.details?.[0] as RunSummary | undefined;
    if (summary) return { ...summary, error: err.message };
  }
  const error = isCancellation(err) ? 'the run was cancelled' : (err as Error).message;
  return { status: 'FAILED', error, outcomes: state.outcomes };
}

async function startDelivery(input: RunInput, url: string, summary: RunSummary): Promise<void> {
  const request: CallbackRequest = {
    url,
    run: {
      runId: input.runId, orgId: input.orgId, automationId: input.automationId, automationName: input.automationName,
      automationVersion: input.automationVersion, triggerId: input.triggerId, started: input.started, startedBy: input.startedBy, stepMap: input.stepMap,
    },
    status: summary.status,
    ...(summary.error ? { error: summary.error } : {}),
    outcomes: summary.outcomes,
    ended: new Date().toISOString(),
  };
  await startChild(deliverRunCallback, {
    workflowId: callbackWorkflowId(input.runId),
    parentClosePolicy: ParentClosePolicy.ABANDON,
    args: [request],
  });
}

const { postCallback } = proxyActivities<Activities>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10m', maximumAttempts: CALLBACK_MAX_ATTEMPTS, nonRetryableErrorTypes: ['CALLBACK_REFUSED'] },
});

/** Delivers one run's completion callback; answers how it went (never fails itself). */
export async function deliverRunCallback(request: CallbackRequest): Promise<CallbackStatus> {
  try {
    const { attempt } = await postCallback(request);
    return { state: 'DELIVERED', attempts: attempt };
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const attempt = cause instanceof ApplicationFailure ? (cause.details?.[0] as { attempt?: number } | undefined)?.attempt : undefined;
    return { state: 'FAILED', attempts: attempt ?? CALLBACK_MAX_ATTEMPTS, lastError: (cause as Error | undefined)?.message ?? String(err) };
  }
}
