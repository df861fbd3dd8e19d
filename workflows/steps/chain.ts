/**
 * `trigger`: starts another workflow through one of its triggers as a Temporal child workflow
 * whose workflow ID is its own run ID (pollable through its own automation). Waited-for children
 * are bounded by the parent's remaining deadline and cancelled with the parent; fire-and-forget
 * children are abandoned to run on their own.
 */
import { CancellationScope, ChildWorkflowFailure, isCancellation, ParentClosePolicy, proxyActivities, startChild } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { TriggerStep } from '../../src/common/steps';
import { buildRunMemo } from '../../src/common/run-memo';
import { isRecord } from '../../src/common/narrow';
import { ENGINE_LEVEL, type RunInput, type RunSummary } from '../../src/common/run-types';
import { SEARCH_ATTRIBUTES } from '../../src/common/search-attributes';
import { childUuid } from '../run/child-ids';
import { atLevel } from '../run/features';
import { PRIORITY_LEVEL } from '../../src/common/priority';
import { childExecutionTimeoutMs, runDeadline } from '../run/time-limit';
import { completed, failed, type Renderer, type StepDraft } from './step-draft';
import { childMetadata, summary as uiSummary } from '../run/ui-metadata';
import { runDetailsText, runSummaryText, type StartedVia } from '../../src/common/run-labels';

const { resolveTrigger } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 5 },
});

type ChildOf = (input: RunInput) => Promise<RunSummary>;

/**
 * Starts a resolved run as a child workflow whose ID is its new run ID. A waited-for child is
 * bounded by this workflow's remaining deadline and cancelled with it; any other is abandoned to
 * run on its own. Shared by the `trigger` step and the agent loop's workflow tools.
 */
export async function startChainedRun(resolved: Omit<RunInput, 'runId'>, wait: boolean, runAutomation: ChildOf, via?: StartedVia) {
  const runId = childUuid('child-run');
  let timeoutMs = resolved.definition.timeoutSeconds * 1000;
  const expiry = runDeadline();
  if (wait && expiry) timeoutMs = Math.max(1000, Math.min(timeoutMs, expiry.getTime() - Date.now()));
  // A waited-for child keeps its parent's deadline as its own when that comes first (ends TIMEOUT by then).
  const bounded = wait && expiry && timeoutMs < resolved.definition.timeoutSeconds * 1000;
  const input: RunInput = { ...resolved, runId, engine: ENGINE_LEVEL, ...(bounded ? { deadline: new Date(Date.now() + timeoutMs).toISOString() } : {}) };
  const child = await startChild(runAutomation, {
    workflowId: runId,
    args: [input],
    workflowExecutionTimeout: childExecutionTimeoutMs(timeoutMs),
    memo: buildRunMemo(input),
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTES.orgId, value: input.orgId },
      { key: SEARCH_ATTRIBUTES.automationId, value: input.automationId },
      { key: SEARCH_ATTRIBUTES.triggerId, value: input.triggerId },
    ],
    parentClosePolicy: wait ? ParentClosePolicy.REQUEST_CANCEL : ParentClosePolicy.ABANDON,
    ...childMetadata(runSummaryText(input, via), runDetailsText(input, via)),
    // Its own trigger's priority when that sets one (level 7); else, like its fairness key (the same
    // organization), the parent's, which Temporal fills in (src/common/priority.ts).
    ...(input.priority && atLevel(PRIORITY_LEVEL) ? { priority: { priorityKey: input.priority } } : {}),
  });
  return { runId, input, child };
}

/** A rendered object (rendering keeps an object's shape: the fallback is never taken). */
const recordOf = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {});

export async function triggerStep(step: TriggerStep, parent: RunInput, render: Renderer, runAutomation: ChildOf, label: string): Promise<StepDraft> {
  const resolved = await resolveTrigger.executeWithOptions(uiSummary(`${label}: resolve trigger ${step.triggerId}`), [{
    orgId: parent.orgId, triggerId: step.triggerId, inputs: recordOf(await render(step.inputs)),
    parentRunId: parent.runId, chainDepth: (parent.chainDepth ?? 0) + 1, startedBy: parent.startedBy,
  }]);
  if (!resolved.ok) return failed(resolved.error);

  const { runId, input, child } = await startChainedRun(resolved.input, step.wait, runAutomation);
  const started = `started run ${runId} of automation ${input.automationId} (version ${input.automationVersion}) through trigger ${input.triggerId}`;
  if (!step.wait) return completed(runId, `${started}; not waiting for it\n`);

  try {
    const summary = await child.result();
    const result = JSON.stringify({
      runId, automationId: input.automationId, status: summary.status,
      results: summary.outcomes.map((o) => ({ stepIndex: o.stepIndex, resultType: o.resultType, result: o.result, exitCode: o.exitCode })),
    });
    return completed(result, `${started}\nrun ${runId} completed\n`, 'json');
  } catch (err) {
    // The parent being cancelled propagates; a child cancelled by someone else is a step failure.
    if (isCancellation(err) && CancellationScope.current().consideredCancelled) throw err;
    if (err instanceof ChildWorkflowFailure) {
      const reason = err.cause?.message ?? err.message;
      return failed(`chained run ${runId} failed: ${reason}`, `${started}\nrun ${runId} failed: ${reason}\n`, runId);
    }
    throw err;
  }
}
