/**
 * deliverRunCallback: delivers one run's completion callback, a child the run starts when it ends
 * (run/completion-callback.ts; workflow ID `<runId>-callback`, abandoned by the run, so it outlives
 * it). POSTs the run's final status through the postCallback activity with retries and backoff,
 * and never fails itself: its result (CallbackStatus, DELIVERED or FAILED with the attempts made)
 * is what the run's status response shows once it closed (src/runs/ reads it).
 *
 * No signals or queries. Timeouts: 60 s per attempt, at most CALLBACK_MAX_ATTEMPTS attempts (1 s
 * backoff doubling up to 10 min); a receiver that refuses for good (CALLBACK_REFUSED) is not retried.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { fieldOf } from '../src/common/narrow';
import type { CallbackRequest, CallbackStatus } from '../src/common/run-types';
import { useEngine } from './run/features';
import { summary } from './run/ui-metadata';

export const CALLBACK_MAX_ATTEMPTS = 12;

const { postCallback } = proxyActivities<Activities>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10m', maximumAttempts: CALLBACK_MAX_ATTEMPTS, nonRetryableErrorTypes: ['CALLBACK_REFUSED'] },
});

/** Delivers one run's completion callback; answers how it went (never fails itself). */
export async function deliverRunCallback(request: CallbackRequest): Promise<CallbackStatus> {
  useEngine(request);
  try {
    const { attempt } = await postCallback.executeWithOptions(summary(`POST the callback of run ${request.run.runId} (${request.status})`), [request]);
    return { state: 'DELIVERED', attempts: attempt };
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const attempt = cause instanceof ApplicationFailure ? fieldOf(cause.details?.[0], 'attempt') : undefined;
    return { state: 'FAILED', attempts: typeof attempt === 'number' ? attempt : CALLBACK_MAX_ATTEMPTS, lastError: cause instanceof Error ? cause.message : String(err) };
  }
}
