/**
 * Workflow interceptors (bundled with the workflows, not a workflow type): count each run's start
 * and end through the `flowgateMetrics` sink. The worker marks those sink functions as skipped on
 * replay, so a run replayed after a cache eviction is not counted twice. A run Temporal closes
 * without running its code (terminated, or past its execution timeout) is not seen here.
 */
import { ContinueAsNew, isCancellation, proxySinks, workflowInfo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import type { AlertSinks, RunEnded } from '../../src/common/alerts';
import type { EndedStatus, MetricsSinks } from '../../src/common/metrics-sinks';
import { fieldOf, messageOf } from '../../src/common/narrow';

const { flowgateMetrics, flowgateAlerts } = proxySinks<MetricsSinks & AlertSinks>();

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

/** A run of a workflow ended: told to the worker's alerts (src/runs/alerts.ts), which signal the organization's rules. */
function reportEnded(args: unknown[], status: EndedStatus, err?: unknown): void {
  const info = workflowInfo();
  if (info.workflowType !== 'runAutomation') return;
  // the run's own ID (a scheduled run's input names its schedule's)
  const runId = info.workflowId;
  const orgId = fieldOf(args[0], 'orgId');
  const workflowId = fieldOf(args[0], 'automationId');
  const workflowName = fieldOf(args[0], 'automationName');
  if (typeof runId !== 'string' || typeof orgId !== 'string' || typeof workflowId !== 'string') return;
  const ended: RunEnded = {
    runId, orgId, workflowId, workflowName: typeof workflowName === 'string' ? workflowName : workflowId, status,
    ...(err === undefined ? {} : { error: messageOf(err) }), at: Date.now(),
  };
  flowgateAlerts.runEnded(ended);
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
        reportEnded(input.args, 'COMPLETE');
        return result;
      }, (err: unknown) => {
        // continue-as-new is not an end
        if (!(err instanceof ContinueAsNew)) {
          const status = endedStatus(err);
          flowgateMetrics.runEnded(workflow, status);
          reportEnded(input.args, status, err);
        }
        throw err;
      });
    },
  }],
});
