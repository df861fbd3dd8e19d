/**
 * Where a run's completion callback is: PENDING while the run is open, then the delivery
 * workflow's pending activity (attempts so far, last error) or its result. Final states never
 * change, so they are kept (bounded).
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import { LruCache } from '../cache/lru-cache';
import { CallbackState, type CallbackStatus } from '../common/run-types';
import { callbackWorkflowId, type DeliverRunCallbackWorkflow, type RunAutomationWorkflow } from '../common/workflow-contracts';
import { isEnded, type RunView } from './run-view';

/** How many delivered or failed callbacks' states one process keeps (they never change). */
const KEPT_CALLBACK_STATES = 5_000;

export class CallbackStatusReader {
  private readonly kept = new LruCache<string, CallbackStatus>({ maxEntries: KEPT_CALLBACK_STATES, ttlMs: Infinity });

  constructor(private readonly client: Client) {}

  async read(view: Pick<RunView, 'runId' | 'status'>): Promise<CallbackStatus> {
    const known = this.kept.get(view.runId);
    if (known) return known;
    const handle = this.client.workflow.getHandle<DeliverRunCallbackWorkflow>(callbackWorkflowId(view.runId));
    let description;
    try {
      description = await handle.describe();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      if (!isEnded(view.status)) return { state: CallbackState.PENDING, attempts: 0 };
      // The run closed without starting it (its workflow timeout, a termination), or is closing.
      const closed = await this.client.workflow.getHandle<RunAutomationWorkflow>(view.runId).describe().then((d) => d.status.name !== 'RUNNING', () => false);
      return { state: closed ? CallbackState.NOT_SENT : CallbackState.PENDING, attempts: 0 };
    }
    if (description.status.name === 'COMPLETED') {
      const status = await handle.result();
      this.kept.set(view.runId, status);
      return status;
    }
    if (description.status.name !== 'RUNNING') return { state: CallbackState.FAILED, attempts: 0, lastError: `the delivery workflow ended as ${description.status.name}` };
    const pending = description.raw.pendingActivities?.[0];
    const attempt = pending?.attempt ?? 1;
    // STARTED: the attempt is under way and counts; SCHEDULED after a failure: waiting to retry.
    const inFlight = pending?.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
    // describe's raw answer is not decoded: the failure's message is sealed in its encoded
    // attributes (src/common/failure-converter.ts), which the client's converter opens
    const lastError = await decodeOptionalFailureToOptionalError(this.client.workflow.options.loadedDataConverter, pending?.lastFailure)
      .then((error) => error?.message, (err: unknown) => `(the last error cannot be read: ${err instanceof Error ? err.message : String(err)})`);
    return {
      state: CallbackState.DELIVERING,
      attempts: inFlight ? attempt : attempt - 1,
      ...(lastError ? { lastError } : {}),
    };
  }
}
