/**
 * What a run's history holds: the input it was started with, read from its first event (no worker
 * needed), for reruns, resumes, replayed trigger calls and approval decisions; and the trail of one
 * of the gateway's approval decisions.
 */
import type { Client } from '@temporalio/client';
import { decodeOptionalSinglePayload } from '@temporalio/common/lib/internal-non-workflow';
import { fieldOf } from '../common/narrow';
import type { RunInput } from '../common/run-types';
import { recordedDecisionSignal } from '../common/workflow-contracts';

/** The whole input run `runId` was started with. */
export async function startedInput(client: Client, runId: string): Promise<RunInput> {
  const { history } = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace, execution: { workflowId: runId }, maximumPageSize: 1,
  });
  const payload = history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) throw new Error(`run ${runId} has no start input`);
  // The run's own first argument, written by the starter from a RunInput (workflow-contracts.ts);
  // the client's codec opens it (sealed run data, src/crypto/payload-codec.ts).
  const input = await decodeOptionalSinglePayload<RunInput | null>(client.workflow.options.loadedDataConverter, payload);
  if (!input) throw new Error(`run ${runId} has no start input`);
  return input;
}

/** What a run's history says of one of the gateway's decisions (run-decisions.ts), read without a worker. */
export interface DecisionTrail {
  /** its `recordedDecision` signal is in the history */
  recorded: boolean;
  /** its `decide` update (update ID = decision ID) was accepted and answered: the decision was applied */
  applied: boolean;
}

/**
 * Looks through run `runId`'s history for decision `decisionId`: the `recordedDecision` signal
 * carrying it (opened with the client's codec) and the `decide` update named after it. Reads the
 * whole history: for a caller asking about one decision while the run's worker does not answer.
 */
export async function decisionTrail(client: Client, runId: string, decisionId: string): Promise<DecisionTrail> {
  const history = await client.workflow.getHandle(runId).fetchHistory();
  const converter = client.workflow.options.loadedDataConverter;
  const trail: DecisionTrail = { recorded: false, applied: false };
  for (const event of history.events ?? []) {
    const signal = event.workflowExecutionSignaledEventAttributes;
    const payload = signal?.signalName === recordedDecisionSignal.name ? signal.input?.payloads?.[0] : undefined;
    if (payload && !trail.recorded) {
      // sealed under a key this process lacks: not one this gateway can speak for
      const request = await decodeOptionalSinglePayload<unknown>(converter, payload).catch(() => undefined);
      if (fieldOf(request, 'decisionId') === decisionId) trail.recorded = true;
    }
    const completed = event.workflowExecutionUpdateCompletedEventAttributes;
    if (completed?.meta?.updateId === decisionId && completed.outcome?.success) trail.applied = true;
  }
  return trail;
}
