/**
 * Temporal cancellation of a run, answered truthfully whatever its worker does (issue 46): Temporal
 * writes the request to the run's history at once, no worker needed; a request it did not confirm
 * in time is sent again with the same request ID, which Temporal takes once; a run that ended
 * before the request arrived is 'closed', never an error.
 */
import { randomUUID } from 'node:crypto';
import { ServiceError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { fieldOf } from '../common/narrow';
import { GRPC_UNAVAILABLE, temporalStatusCode } from '../../temporal/client';
import { QUERY_DEADLINE_MS } from './run-reader';

/** The answer to a cancellation: requested (or already requested), or the run had ended. */
export type CancelOutcome = 'requested' | 'closed';

/** gRPC NOT_FOUND: what Temporal answers a cancellation of a run that has ended. */
const GRPC_NOT_FOUND = 5;

/** The gRPC status of an error of the client (ServiceError) or of a raw service call. */
function grpcCode(err: unknown): number | undefined {
  const code = temporalStatusCode(err) ?? fieldOf(err, 'code');
  return typeof code === 'number' ? code : undefined;
}

/** Requests cancellation of open run `runId`; throws a ServiceError (503 at the gateway) when Temporal did not take it. */
export async function cancelRun(client: Client, runId: string): Promise<CancelOutcome> {
  const requestId = randomUUID();
  let failure: unknown;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await client.connection.withDeadline(Date.now() + QUERY_DEADLINE_MS, () => client.workflowService.requestCancelWorkflowExecution({
        namespace: client.options.namespace, workflowExecution: { workflowId: runId }, identity: client.options.identity, requestId,
      }));
      return 'requested';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError || grpcCode(err) === GRPC_NOT_FOUND) return 'closed';
      // as the client's own calls fail, so that the gateway answers 503 for an unreachable Temporal
      failure = new ServiceError(`cancelling run ${runId} failed`, { cause: err instanceof Error ? err : new Error(String(err)) });
      if (grpcCode(err) === GRPC_UNAVAILABLE) break;
    }
  }
  throw failure;
}
