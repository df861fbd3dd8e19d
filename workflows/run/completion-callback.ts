/**
 * Completion callbacks, the run's side. When a run that names a callback URL ends (COMPLETE, a
 * failed or timed-out step, or cancellation), it starts the child workflow `deliverRunCallback`
 * (../deliver-run-callback.ts; ID `<runId>-callback`, abandoned when the run closes), which POSTs
 * the final status. The run itself closes at once, so a synchronous caller never waits for the
 * receiver. A run over its own time limit ends TIMEOUT from inside (time-limit.ts) and sends it; a
 * run Temporal closes itself (terminated by an operator, or the backstop execution timeout when no
 * worker could end it) gets no chance to send one.
 */
import { ApplicationFailure, CancellationScope, isCancellation, ParentClosePolicy, startChild } from '@temporalio/workflow';
import { feature } from './features';
import { childMetadata, labelled } from './ui-metadata';
import { ENGINE_LEVEL, SUMMARY_FAILURES, type CallbackRequest, type RunInput, type RunState, type RunSummary } from '../../src/common/run-types';
import { isRecord, messageOf } from '../../src/common/narrow';
import { callbackWorkflowId } from '../../src/common/workflow-contracts';
import { deliverRunCallback } from '../deliver-run-callback';

export const CALLBACK_PATCH = 'completion-callback';

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

/** A failure's summary detail (time-limit.ts and slots.ts throw one with the run's outcomes so far). */
function isRunSummary(value: unknown): value is RunSummary {
  return isRecord(value) && typeof value.status === 'string' && Array.isArray(value.outcomes);
}

function endedWith(err: unknown, state: RunState): RunSummary {
  if (err instanceof ApplicationFailure && typeof err.type === 'string' && SUMMARY_FAILURES.includes(err.type)) {
    const summary: unknown = err.details?.[0];
    if (isRunSummary(summary)) return { ...summary, error: err.message };
  }
  const error = isCancellation(err) ? 'the run was cancelled' : messageOf(err);
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
    ...(labelled() ? { engine: ENGINE_LEVEL } : {}),
  };
  await startChild(deliverRunCallback, {
    workflowId: callbackWorkflowId(input.runId),
    parentClosePolicy: ParentClosePolicy.ABANDON,
    args: [request],
    ...childMetadata(`callback of run ${input.runId} (${summary.status}) to ${hostOf(url)}`, `POSTs the final status of run ${input.runId} (${input.automationName} v${input.automationVersion}) to ${hostOf(url)}.`),
  });
}

/** The host a callback goes to, for its summary (the URL's path and query may carry secrets). */
function hostOf(url: string): string {
  const match = /^[a-z][a-z0-9+.-]*:\/\/([^/?#@]*@)?([^/?#]*)/i.exec(url);
  return match?.[2] ?? 'its URL';
}
