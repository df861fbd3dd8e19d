/**
 * Whether this process's data key ring opens the runs it would be handed, checked at start: a
 * worker or gateway given another ring than the runs were sealed with (src/crypto/payload-codec.ts)
 * would otherwise start without complaint, and the runs would stall on it. Reads the newest open
 * runs of the task queue from visibility (their memo, sealed, comes with the listing; a run without
 * one is read from its first event) and opens their payloads with the codec. Closed runs are not
 * looked at: a key may leave the ring once no open run needs it (docs/operations.md, "Rotation").
 */
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { DataDecryptionError, EncryptionCodec } from '../crypto/payload-codec';
import { WrongDataKeyError } from '../crypto/run-data-converter';
import type { Logger } from '../observability/logger';

/** How many of the newest open runs are read: enough to see a deployment's key, one visibility page. */
export const OPEN_RUNS_CHECKED = 20;

/** What a task queue's name may hold to be put between a visibility query's quotes. */
const QUOTABLE = /^[A-Za-z0-9_.:@/-]+$/;

function sealed(payloads: readonly Payload[] | null | undefined): Payload[] {
  return (payloads ?? []).filter((payload) => EncryptionCodec.isSealed(payload));
}

/**
 * Throws WrongDataKeyError, naming the key, when an open run of `taskQueue` holds a payload sealed
 * under a data key the ring lacks (or that its key of that ID does not open).
 */
export async function checkOpenRunKeys(client: Client, codec: EncryptionCodec, taskQueue: string, log: Logger): Promise<void> {
  if (!QUOTABLE.test(taskQueue)) {
    log.warn('the data keys are not checked against open runs: the task queue\'s name cannot be put in a visibility query', { taskQueue });
    return;
  }
  const { namespace } = client.options;
  let executions;
  try {
    const response = await client.workflowService.listWorkflowExecutions({
      namespace, query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`, pageSize: OPEN_RUNS_CHECKED,
    });
    executions = (response.executions ?? []).slice(0, OPEN_RUNS_CHECKED);
  } catch (err) {
    // a check, not a condition of starting: a worker still stops on a payload it cannot open
    log.warn('the data keys could not be checked against open runs: visibility did not answer', { taskQueue, error: err });
    return;
  }
  for (const execution of executions) {
    const runId = execution.execution?.workflowId ?? undefined;
    let payloads = sealed(Object.values(execution.memo?.fields ?? {}));
    if (payloads.length === 0 && execution.execution) {
      const { history } = await client.workflowService.getWorkflowExecutionHistory({ namespace, execution: execution.execution, maximumPageSize: 1 })
        .catch(() => ({ history: undefined })); // gone since it was listed
      payloads = sealed(history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads);
    }
    try {
      await codec.decode(payloads);
    } catch (err) {
      if (!(err instanceof DataDecryptionError)) throw err;
      if (err.keyId === undefined) {
        // not a matter of keys (a payload that is not one): the run's own reads will say so
        log.warn('an open run holds a payload that cannot be read', { runId, error: err.message });
        continue;
      }
      throw new WrongDataKeyError(err.keyId, { runId, missing: err.missing, ring: codec.ringText(), taskQueue, role: 'process' });
    }
  }
}
