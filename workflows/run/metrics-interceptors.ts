/**
 * Workflow interceptors (bundled with the workflows, not a workflow type): count each run's start
 * and end through the `flowgateMetrics` sink. The worker marks those sink functions as skipped on
 * replay, so a run replayed after a cache eviction is not counted twice. A run Temporal closes
 * without running its code (terminated, or past its execution timeout) is not seen here.
 */
import { ContinueAsNew, isCancellation, proxySinks, workflowInfo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import type { EndedStatus, MetricsSinks } from '../../src/common/metrics-sinks';
import { fieldOf } from '../../src/common/narrow';

const { flowgateMetrics } = proxySinks<MetricsSinks>();

/** Workflow types that are runs (the rest, e.g. forEach chunks, callback deliveries, sweeps, are their parts or chores). */
const RUN_TYPES = new Set(['runAutomation', 'invokeAgent']);

/** runAutomation runs are counted by their automation, agent runs as invokeAgent; undefined: not a run. */
function workflowLabel(args: unknown[]): string | undefined {
  const automationId = fieldOf(args[0], 'automationId');
  const { workflowType } = workflowInfo();
  if (!RUN_TYPES.has(workflowType)) return undefined;
  return workflowType === 'runAutomation' && typeof automationId === 'string' ? automationId : workflowType;
}

function endedStatus(err: unknown): EndedStatus {
  if (isCancellation(err)) return 'CANCELLED';
  const type = fieldOf(err, 'type');
  if (type === 'STEP_TIMEOUT' || type === 'RUN_TIMEOUT') return 'TIMEOUT';
  return 'FAILED';
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [{
    // one `then` rather than an async function: each promise a workflow makes costs a stack capture
    execute(input, next) {
      const workflow = workflowLabel(input.args);
      if (workflow === undefined) return next(input);
      flowgateMetrics.runStarted(workflow);
      return next(input).then((result) => {
        flowgateMetrics.runEnded(workflow, 'COMPLETE');
        return result;
      }, (err: unknown) => {
        // continue-as-new is not an end
        if (!(err instanceof ContinueAsNew)) flowgateMetrics.runEnded(workflow, endedStatus(err));
        throw err;
      });
    },
  }],
});
