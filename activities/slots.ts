/**
 * The activities of concurrency limits (issue 36): acquireSlot asks the semaphore of a limit for a
 * slot, starting it when it does not run yet (signal-with-start, so any worker, any number of
 * times, reaches the one semaphore of the key); slotHoldersClosed tells the semaphore which of its
 * holders have closed without releasing their slot (terminated runs).
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { AcquireSlotRequest } from '../src/common/slots';
import { slotsWorkflowId } from '../src/common/slots';
import { slotAcquireSignal, WORKFLOW_TYPES, type RunSlotsWorkflow } from '../src/common/workflow-contracts';

export interface SlotDependencies {
  /** the worker's Temporal client */
  temporal: Client;
  taskQueue: string;
  /** FLOWGATE_SLOT_CHECK_SECONDS: how often a semaphore checks its holders still run */
  slotCheckSeconds: number;
}

function needed(deps: SlotDependencies | undefined): SlotDependencies {
  if (!deps) throw new Error('concurrency limits need the worker\'s Temporal client (ActivityDependencies.slots is unset)');
  return deps;
}

export function createSlotActivities(given?: SlotDependencies) {
  return {
    async acquireSlot(request: AcquireSlotRequest): Promise<void> {
      const deps = needed(given);
      const { key, fairnessKey, ...asking } = request;
      await deps.temporal.workflow.signalWithStart<RunSlotsWorkflow, [typeof asking]>(WORKFLOW_TYPES.runSlots, {
        workflowId: slotsWorkflowId(key),
        taskQueue: deps.taskQueue,
        // a limit's askers are all of one organization; only a start sets it (default priority: the
        // semaphore serves runs of every priority)
        ...(fairnessKey ? { priority: { fairnessKey } } : {}),
        args: [{ key, limit: request.limit, holders: [], queue: [], checkSeconds: deps.slotCheckSeconds }],
        signal: slotAcquireSignal,
        signalArgs: [asking],
      });
    },

    /** The run IDs among `runIds` whose workflows are closed or unknown. */
    async slotHoldersClosed(runIds: string[]): Promise<string[]> {
      const deps = needed(given);
      const closed: string[] = [];
      for (const runId of runIds) {
        try {
          const description = await deps.temporal.workflow.getHandle(runId).describe();
          if (description.status.name !== 'RUNNING') closed.push(runId);
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) closed.push(runId);
          else throw err;
        }
      }
      return closed;
    },
  };
}
