/**
 * What a run's history holds from its start: the input it was started with, read from its first
 * event (no worker needed), for reruns, resumes and replayed trigger calls.
 */
import type { Client } from '@temporalio/client';
import { decodeOptionalSinglePayload } from '@temporalio/common/lib/internal-non-workflow';
import type { RunInput } from '../common/run-types';

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
