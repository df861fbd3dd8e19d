/**
 * Runs Temporal closes without running flowgate's code (issue 54; docs/operations.md "Alerts"): a
 * run terminated through Temporal, or past its backstop execution timeout, never reaches the
 * worker's run-end sink. A worker's ClosedRunSweep asks visibility every SWEEP_MS for the runs of
 * its task queue closed `Terminated` or `TimedOut` since its last look (with an overlap for
 * visibility's lag) and hands each to the alert rules as a failure (AlertNotifier.handOver). A run
 * seen twice (the overlap, two workers) counts once in its rule's evaluator, which remembers the
 * runs it took; the sweep itself remembers the newest ones it handed over.
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { RunEnded } from '../common/alerts';
import { SEARCH_ATTRIBUTES } from '../common/search-attributes';
import type { Logger } from '../observability/logger';
import type { AlertNotifier } from './alerts';

/** How often a worker looks (the delay of such an alert: up to this, plus visibility's lag, plus the evaluator's). */
export const SWEEP_MS = 15_000;
/** Each look reaches this far behind the previous one: visibility may show a close a few seconds late. */
const OVERLAP_MS = 30_000;
const REMEMBERED = 5_000;

export class ClosedRunSweep {
  private timer: NodeJS.Timeout | undefined;
  private since = Date.now() - OVERLAP_MS;
  private readonly handed = new Set<string>();

  constructor(private readonly deps: { client: Client; taskQueue: string; alerts: Pick<AlertNotifier, 'handOver'>; log: Pick<Logger, 'warn'>; intervalMs?: number }) {}

  start(): void {
    if (this.timer) return;
    const tick = (): void => {
      this.sweep().catch((error: unknown) => this.deps.log.warn('the sweep for terminated and timed-out runs failed; trying again', { error })).finally(() => {
        if (this.timer) this.timer = setTimeout(tick, this.deps.intervalMs ?? SWEEP_MS);
      });
    };
    this.timer = setTimeout(tick, this.deps.intervalMs ?? SWEEP_MS);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One look; answers how many runs it handed over. */
  async sweep(now = Date.now()): Promise<number> {
    const after = new Date(this.since - OVERLAP_MS).toISOString();
    const query = `TaskQueue = '${this.deps.taskQueue}' AND WorkflowType = 'runAutomation' AND ExecutionStatus IN ('Terminated', 'TimedOut') AND CloseTime > '${after}'`;
    let handed = 0;
    for await (const execution of this.deps.client.workflow.list({ query })) {
      const ended = endedOf(execution);
      if (!ended || this.handed.has(ended.runId)) continue;
      await this.deps.alerts.handOver(ended);
      this.handed.add(ended.runId);
      if (this.handed.size > REMEMBERED) this.handed.delete(this.handed.values().next().value ?? '');
      handed++;
    }
    this.since = now;
    return handed;
  }
}

/** A closed run as the alert rules see it: terminated is a failure, timed out a TIMEOUT. */
function endedOf(execution: WorkflowExecutionInfo): RunEnded | undefined {
  const orgId = execution.typedSearchAttributes.get(SEARCH_ATTRIBUTES.orgId);
  const workflowId = execution.typedSearchAttributes.get(SEARCH_ATTRIBUTES.automationId);
  if (!orgId || !workflowId) return undefined;
  const terminated = execution.status.name === 'TERMINATED';
  return {
    runId: execution.workflowId, orgId, workflowId, workflowName: workflowId,
    status: terminated ? 'FAILED' : 'TIMEOUT',
    error: terminated ? 'the run was terminated through Temporal' : 'the run passed its execution timeout (closed by Temporal)',
    at: (execution.closeTime ?? new Date()).getTime(),
  };
}
