/**
 * Pausing a whole workflow or trigger (issue 54): its new runs wait PENDING before their first step
 * until it is unpaused. Runs already started are not affected (an operator pauses those one by one
 * or by a batch: run-batch.ts).
 *
 * How it is durable (docs/operations.md, "Pausing a workflow or a trigger"):
 * - the pause is a row in the registry (OperatorHoldStore). TriggerService.prepare reads it for
 *   every run it prepares (trigger calls, webhooks, forms, shaped windows, workflow tools, reruns,
 *   resumes, error-handler runs) and puts the hold into the run's input, so the run is started as
 *   usual (its caller gets its run ID: nothing is lost) and waits in its own workflow code
 *   (workflows/run/operator-pause.ts), in no worker slot, through any restart;
 * - the unpause deletes the row and starts the release workflow (workflows/release-held-runs.ts,
 *   one per workflow or trigger), which signals every open run of it started since the pause began
 *   with an unpause of that scope: at once and twice more (for a start under way at the unpause, or
 *   a run visibility listed late). Temporal keeps the release going whatever becomes of the gateway.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { HOLD_MAX_WAIT_SECONDS, releaseWorkflowId, type HoldScope, type ReleaseInput, type ReleaseSweep } from '../common/run-holds';
import { startPriority } from '../common/priority';
import { pauseSignal, WORKFLOW_TYPES, type ReleaseHeldRunsWorkflow, type RunAutomationWorkflow } from '../common/workflow-contracts';
import type { OperatorHoldRecord, Registry } from '../registry';
import { listRuns } from './run-list';

export interface RunHoldDeps {
  client: Client;
  taskQueue: string;
  registry: Pick<Registry, 'holds'>;
}

/** How far before the hold's start a run's start may lie and still hold it (a start under way as the pause was written). */
const START_SLACK_MS = 5000;
/** The most open runs one sweep signals. */
const SWEEP_MAX_RUNS = 10_000;

export interface UnpauseOutcome {
  /** the hold lifted (absent: the workflow or trigger was not paused; the release runs all the same) */
  lifted?: OperatorHoldRecord;
  /** the release workflow */
  releaseId: string;
}

export class RunHolds {
  constructor(private readonly deps: RunHoldDeps) {}

  /** The organization's paused workflows and triggers. */
  list(orgId: string): Promise<OperatorHoldRecord[]> {
    return this.deps.registry.holds.list(orgId);
  }

  get(orgId: string, scope: HoldScope, targetId: string): Promise<OperatorHoldRecord | undefined> {
    return this.deps.registry.holds.get(orgId, scope, targetId);
  }

  /** Pauses new runs of the workflow or trigger (a second pause keeps the first one's who and when). */
  pause(orgId: string, scope: HoldScope, targetId: string, by: string, reason?: string): Promise<OperatorHoldRecord> {
    return this.deps.registry.holds.hold(orgId, scope, targetId, by, reason);
  }

  /**
   * Lifts the hold and starts its release. An unpause of a workflow or trigger that is not paused
   * releases too (the runs of a week back): it mends a release an earlier unpause could not start.
   */
  async unpause(orgId: string, scope: HoldScope, targetId: string, by: string): Promise<UnpauseOutcome> {
    const lifted = await this.deps.registry.holds.release(orgId, scope, targetId);
    const since = lifted?.at ?? new Date(Date.now() - HOLD_MAX_WAIT_SECONDS * 1000).toISOString();
    const input: ReleaseInput = { orgId, scope, targetId, since, by };
    const releaseId = releaseWorkflowId(orgId, scope, targetId);
    await this.deps.client.workflow.start<ReleaseHeldRunsWorkflow>(WORKFLOW_TYPES.releaseHeldRuns, {
      workflowId: releaseId, taskQueue: this.deps.taskQueue, args: [input],
      // a new unpause replaces a release still sweeping (its own sweeps start again at once)
      workflowIdConflictPolicy: 'TERMINATE_EXISTING', workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      staticSummary: `release the runs held by ${scope} ${targetId} (${by})`,
      priority: startPriority(orgId), // its sweeps' activities in its organization's turn (src/common/priority.ts)
    });
    return { ...(lifted ? { lifted } : {}), releaseId };
  }

  /**
   * One sweep of a release (the signalHeldRuns activity): every open run of the workflow or trigger
   * started since the hold began gets an unpause of that scope (a run not held ignores it). Stops
   * at once when the workflow or trigger is paused again. `beat` is told of progress (heartbeats).
   */
  async sweep(input: ReleaseInput, beat: (signalled: number) => void = () => {}): Promise<ReleaseSweep> {
    if (await this.deps.registry.holds.get(input.orgId, input.scope, input.targetId)) return { signalled: 0, pausedAgain: true };
    const open = await listRuns(this.deps.client, input.orgId, {
      ...(input.scope === 'workflow' ? { workflowId: input.targetId } : { triggerId: input.targetId }),
      status: 'RUNNING', startedSince: new Date(Date.parse(input.since) - START_SLACK_MS).toISOString(), limit: SWEEP_MAX_RUNS,
    });
    let signalled = 0;
    for (const run of open) {
      try {
        await this.deps.client.workflow.getHandle<RunAutomationWorkflow>(run.runId).signal(pauseSignal, { paused: false, scope: input.scope, by: input.by });
        signalled++;
      } catch (err) {
        // a run that ended since it was listed has nothing to release
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
      if (signalled % 50 === 0) beat(signalled);
    }
    return { signalled, pausedAgain: false };
  }
}
