/**
 * A durable tool call's slot of its organization's concurrency limit (FLOWGATE_ORG_MAX_RUNNING;
 * src/common/slots.ts): a call whose input carries `slot` asks the limit's semaphore
 * (run-slots.ts, the one its organization's runs share) for a slot before its first attempt and
 * waits for the grant, at most the slot's `maxWaitSeconds`; when the call ends, whatever the
 * ending (completed, failed, cancelled while it waited or ran), it gives the slot back outside any
 * cancelled scope. A call without `slot` (none set, or made by a run's step or agent: those run
 * within their run's slot) does none of this.
 */
import {
  ApplicationFailure, CancellationScope, condition, getExternalWorkflowHandle, patched, proxyLocalActivities, setCurrentDetails, setHandler, upsertMemo, workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DurableFailureType, WAITING_FOR_SLOT_MEMO, type DurableToolCallInput } from '../src/common/durable-call';
import { slotsWorkflowId } from '../src/common/slots';
import { slotGrantSignal, slotReleaseSignal } from '../src/common/workflow-contracts';

const { acquireSlot } = proxyLocalActivities<Activities>({
  // short: a request lost with a killed worker is sent again soon (a repeat is ignored)
  startToCloseTimeout: '10s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s' },
});

/** Runs `body` (the call) holding a slot of the organization's limit when the input asks for one. */
export async function withCallSlot<T>(input: DurableToolCallInput, body: () => Promise<T>): Promise<T> {
  const slot = input.slot;
  if (!slot) return body();
  let granted = false;
  setHandler(slotGrantSignal, (grant) => {
    if (grant.key === slot.key && grant.supersededBy === undefined) granted = true;
  });
  const { workflowId: callId, priority } = workflowInfo();
  // the memo says so while the call waits (tasks/get reads it): two memo changes, only for a call that takes a slot
  const showsWait = patched('durable-call-slot-memo');
  try {
    setCurrentDetails(`waiting for a slot of the organization's concurrency limit (${slot.limit})`);
    if (showsWait) upsertMemo({ [WAITING_FOR_SLOT_MEMO]: { limit: slot.limit } });
    await acquireSlot({ key: slot.key, runId: callId, limit: slot.limit, started: slot.started, ...(priority?.fairnessKey ? { fairnessKey: priority.fairnessKey } : {}) });
    const got = await condition(() => granted, slot.maxWaitSeconds * 1000);
    if (showsWait) upsertMemo({ [WAITING_FOR_SLOT_MEMO]: null });
    if (!got) {
      const message = `${input.serverName}/${input.tool} waited ${slot.maxWaitSeconds} s for a slot of its organization's concurrency limit (${slot.limit}) and did not call the upstream`;
      throw ApplicationFailure.create({
        message, type: DurableFailureType.RETRYABLE, nonRetryable: true,
        details: [{ isError: true, message, value: { error: message, code: 'UNAVAILABLE' }, attempts: 0 }],
      });
    }
    return await body();
  } finally {
    await CancellationScope.nonCancellable(async () => {
      try {
        await getExternalWorkflowHandle(slotsWorkflowId(slot.key)).signal(slotReleaseSignal, { runId: callId });
      } catch {
        // no such semaphore (the request never reached it): nothing to give back
      }
    });
  }
}
