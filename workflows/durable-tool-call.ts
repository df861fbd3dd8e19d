/**
 * durableToolCall: one call of a durable custom server's tool (src/common/durable-call.ts), its
 * workflow id the MCP task id. It holds one activity (activities/durable-tool-call.ts) whose
 * Temporal retry policy is the server's `durable` settings: the retries are Temporal's, decided in
 * that one place (no caller retries on top: a step or agent waits for this workflow). The
 * activity's per-attempt deadline is `attemptTimeoutSeconds`; the whole call's is `timeoutSeconds`
 * (the activity's schedule-to-close), never longer than the task's ttl (the workflow's execution
 * timeout). An attempt at a remote MCP server that answers with a task of its own follows that
 * task (src/tools/custom/remote-tasks.ts): its activity may then last until the overall deadline.
 *
 * Answers the tool's result; a tool error, a refusal for good, or the last failed attempt fail the
 * workflow with the tool's error result as the failure's first detail (the task is `failed`, its
 * result `isError`). Cancelled (tasks/cancel): the activity's request is aborted through its
 * heartbeat, a remote's own task an attempt was handed is cancelled at the remote (also when no
 * attempt ran at that moment), and the workflow ends CANCELLED. No signals or queries: the
 * gateway reads the task from the workflow's status, memo and result.
 */
import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, patched, proxyActivities, setCurrentDetails, TimeoutFailure } from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  DEFAULT_DURABLE_ATTEMPT_TIMEOUT_SECONDS, DurableFailureType, durableRetryPolicy, type DurableToolCallInput, type DurableToolCallResult,
} from '../src/common/durable-call';
import { withCallSlot } from './durable-call-slot';

export async function durableToolCall(input: DurableToolCallInput): Promise<DurableToolCallResult> {
  // the organization's concurrency limit, when the call takes a slot of it (durable-call-slot.ts)
  return withCallSlot(input, () => callDurably(input));
}

async function callDurably(input: DurableToolCallInput): Promise<DurableToolCallResult> {
  const attemptMs = (input.policy.attemptTimeoutSeconds ?? DEFAULT_DURABLE_ATTEMPT_TIMEOUT_SECONDS) * 1000;
  const overallMs = Math.min(input.ttlMs, input.policy.timeoutSeconds === undefined ? input.ttlMs : input.policy.timeoutSeconds * 1000);
  const { callDurableTool } = proxyActivities<Activities>({
    // a little above the attempt's own deadline: the dispatcher ends the request at that deadline and says why;
    // an attempt at a remote MCP server may follow the remote's own task up to the overall deadline (each request still has the attempt's)
    startToCloseTimeout: input.upstreamTasks ? overallMs : attemptMs + 5000,
    scheduleToCloseTimeout: overallMs,
    heartbeatTimeout: '10s',
    retry: durableRetryPolicy(input.policy),
    cancellationType: 'TRY_CANCEL',
  });
  setCurrentDetails(`calling ${input.serverName}/${input.tool} (at most ${input.policy.maxAttempts} attempts)`);
  try {
    return await callDurableTool.executeWithOptions({ summary: `${input.serverName}/${input.tool}` }, [input]);
  } catch (error) {
    // tasks/cancel: the workflow ends CANCELLED (its activity's request is aborted at its next heartbeat)
    if (isCancellation(error)) {
      if (input.upstreamTasks && patched('durable-cancel-upstream')) await cancelUpstreamTask(input);
      throw error;
    }
    // the activity's own failure (the tool's error, the last retryable one) is the task's reason, not "activity failed"
    if (error instanceof ActivityFailure && error.cause instanceof ApplicationFailure) {
      const { message, type, details } = error.cause;
      throw ApplicationFailure.create({ message, type: type ?? DurableFailureType.TOOL_ERROR, nonRetryable: true, details: details ? [...details] : [] });
    }
    if (error instanceof ActivityFailure && error.cause instanceof TimeoutFailure) {
      // the whole call's deadline passed (or the attempt's, on the last attempt): a timeout
      throw ApplicationFailure.create({
        message: `${input.serverName}/${input.tool}: ${error.cause.message}`, type: DurableFailureType.RETRYABLE, nonRetryable: true,
        details: [{ isError: true, message: error.cause.message, value: { error: error.cause.message, code: 'TIMEOUT' }, reason: 'timeout' }],
      });
    }
    throw error;
  }
}

/**
 * A cancelled call whose attempts may have been handed a remote's own task: the clean-up sends the
 * remote tasks/cancel for it (activities/durable-tool-call.ts cancelDurableUpstream), also when no
 * attempt ran at the moment of the cancel (between two attempts, or with the worker down). Outside
 * the cancelled scope; a failure of the clean-up leaves the remote's task to run to its end.
 */
async function cancelUpstreamTask(input: DurableToolCallInput): Promise<void> {
  const { cancelDurableUpstream } = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 3, initialInterval: '1s' } });
  await CancellationScope.nonCancellable(async () => {
    try {
      await cancelDurableUpstream.executeWithOptions({ summary: `cancel ${input.serverName}/${input.tool} at the remote` }, [input]);
    } catch {
      // the remote's task runs to its end, unread
    }
  });
}
