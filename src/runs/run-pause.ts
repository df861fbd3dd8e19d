/**
 * An operator's pause or unpause delivered to a run (issue 54), as decisions are (run-decisions.ts):
 * sent as the `operatorPause` update, waited for at most PAUSE_UPDATE_WAIT_MS (answered: the run
 * took it and says whether it now holds); a run that does not answer in time (no worker, a slow
 * one) gets the same request by the `operatorPauseRecorded` signal, written to its history at once
 * and taken when the run next runs. Pause and unpause are idempotent: sent twice they count once.
 * A run that has ended is refused ('closed'), never an error.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { PauseAnswer, PauseRequest } from '../common/run-types';
import { pauseSignal, pauseUpdate, type RunAutomationWorkflow } from '../common/workflow-contracts';
import { GRPC_UNAVAILABLE, temporalStatusCode } from '../../temporal/client';

/** How long a pause waits for the run's answer before it is recorded by signal. */
export const PAUSE_UPDATE_WAIT_MS = 2500;
const SIGNAL_DEADLINE_MS = 1000;

export type PauseOutcome =
  /** the run took it: its answer */
  | { ok: true; applied: true; answer: PauseAnswer }
  /** the run did not answer in time: the request is in its history and taken when the run next runs */
  | { ok: true; applied: false }
  /** the run has ended (or is not one the run code takes a pause in) */
  | { ok: false; refusal: 'CLOSED' | 'REFUSED'; message: string };

export async function deliverPause(client: Client, runId: string, request: PauseRequest, waitMs = PAUSE_UPDATE_WAIT_MS): Promise<PauseOutcome> {
  const handle = client.workflow.getHandle<RunAutomationWorkflow>(runId);
  try {
    const answer = await client.connection.withDeadline(Date.now() + waitMs, () => handle.executeUpdate(pauseUpdate, { args: [request] }));
    return { ok: true, applied: true, answer };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { ok: false, refusal: 'CLOSED', message: 'the run has ended' };
    if (err instanceof WorkflowUpdateFailedError) return { ok: false, refusal: 'REFUSED', message: `the run refused it: ${err.cause?.message ?? err.message}` };
    if (temporalStatusCode(err) === GRPC_UNAVAILABLE) throw err;
  }
  let failure: unknown;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await client.connection.withDeadline(Date.now() + SIGNAL_DEADLINE_MS, () => handle.signal(pauseSignal, request));
      return { ok: true, applied: false };
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return { ok: false, refusal: 'CLOSED', message: 'the run has ended' };
      failure = err;
    }
  }
  throw failure instanceof Error ? failure : new Error(String(failure));
}
