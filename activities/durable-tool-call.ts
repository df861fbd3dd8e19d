/**
 * The activity of a durable tool call (workflows/durable-tool-call.ts): one attempt at the
 * upstream, through the in-process dispatcher as the task's organization (`durableAttempt`: the
 * server is called directly), with the call's one idempotency key on every attempt: an OpenAPI
 * server sends it as `Idempotency-Key`, a remote MCP server as the request's
 * `_meta["io.flowgate/idempotencyKey"]`. Temporal's retry policy (built from the server's
 * `durable`) decides the next attempt; this activity only says whether the failure may be retried:
 *   - the upstream unreachable, the connection dropped, no answer within the attempt's deadline,
 *     a 5xx: retried after the policy's pause;
 *   - a 429: retried after its `Retry-After` when it gives one (nextRetryDelay), else the pause;
 *   - any other 4xx, a tool error, a call that cannot be made (unknown tool, bad arguments,
 *     refused connection): not retried.
 * It heartbeats while the upstream works, so tasks/cancel reaches it (and aborts the request) and
 * a dead worker is noticed within the heartbeat timeout. Each failed attempt, and the outcome,
 * go to the audit trail and the metrics when the worker has them.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  DurableFailureType, DEFAULT_DURABLE_ATTEMPT_TIMEOUT_SECONDS, type DurableHeartbeat, type DurableRetryReason, type DurableToolCallInput,
  type DurableToolCallResult,
} from '../src/common/durable-call';
import { DurableHeartbeatSchema } from '../src/contracts/durable-policy';
import type { ToolCaller } from '../src/tools/caller';
import { ToolCallError } from '../src/tools/errors';
import type { ToolResult, UpstreamTaskHold } from '../src/tools/server';

/** What the activity records of a durable call (the audit trail: action `durable_call.<event>`). */
export interface DurableCallEvent {
  /** `upstream_task`: the remote answered with its own task (or this attempt resumes following the one an earlier attempt was handed) */
  event: 'retried' | 'completed' | 'failed' | 'cancelled' | 'upstream_task';
  attempt: number;
  reason?: DurableRetryReason;
  message?: string;
  /** the upstream's HTTP status, when it answered one */
  status?: number;
  /** the remote's own task id (event `upstream_task`), and whether this attempt resumed following it */
  upstreamTaskId?: string;
  resumed?: boolean;
}

export interface DurableCallObserver {
  /** records one event of the call; never throws */
  record(input: DurableToolCallInput, event: DurableCallEvent): Promise<void>;
  /** counts one attempt (outcome ok, retry or failed) and, for a retry, its reason */
  attempt(server: string, tool: string, outcome: 'ok' | 'retry' | 'failed', reason?: DurableRetryReason): void;
  /** the remote's own task id the call's attempts were last handed (its `upstream_task` records), if any */
  lastUpstreamTask(input: DurableToolCallInput): Promise<string | undefined>;
}

export interface DurableToolCallDeps {
  tools?: ToolCaller;
  durableCalls?: DurableCallObserver;
}

/** How often the attempt heartbeats while the upstream works (below the heartbeat timeout the workflow sets). */
export const DURABLE_HEARTBEAT_MS = 2000;

/** A retryable attempt: what failed, and when Temporal should try again if the upstream said. */
interface Retryable {
  reason: DurableRetryReason;
  message: string;
  status?: number;
  delayMs?: number;
  /** the tool error to answer if this was the last attempt */
  result?: Extract<ToolResult, { isError: true }>;
}

function retryableOf(result: Extract<ToolResult, { isError: true }>): Retryable | undefined {
  const status = typeof result.value.status === 'number' ? result.value.status : undefined;
  if (status === 429) {
    const retryAfter = typeof result.value.retryAfter === 'number' ? result.value.retryAfter : undefined;
    return { reason: 'http_429', message: result.message, status, result, ...(retryAfter === undefined ? {} : { delayMs: Math.round(retryAfter * 1000) }) };
  }
  if (status !== undefined && status >= 500) return { reason: 'http_5xx', message: result.message, status, result };
  return undefined;
}

/**
 * The hold of an attempt at a remote MCP server (src/tools/custom/remote-tasks.ts): the task the
 * remote hands it is heartbeat at once (a later attempt follows it) and audited; the attempt may
 * follow it until the overall deadline (`followForMs`), each request under the attempt's deadline;
 * the remote's task is cancelled when the durable call is (tasks/cancel: the activity is cancelled,
 * or its workflow is gone) or its overall deadline passes.
 */
function upstreamTaskHold(ctx: Context, input: DurableToolCallInput, details: DurableHeartbeat, attemptMs: number, observer: DurableCallObserver | undefined) {
  const { info } = ctx;
  const overall = info.scheduleToCloseTimeoutMs > 0 ? info.scheduledTimestampMs + info.scheduleToCloseTimeoutMs : Infinity;
  const until = Math.min(overall, info.startToCloseTimeoutMs > 0 ? info.currentAttemptScheduledTimestampMs + info.startToCloseTimeoutMs : Infinity);
  const followForMs = Number.isFinite(until) ? Math.max(1000, until - Date.now()) : input.ttlMs;
  const hold: UpstreamTaskHold = {
    ...(details.upstreamTask ? { resume: details.upstreamTask } : {}),
    requestTimeoutMs: attemptMs,
    ttlMs: input.ttlMs,
    async received(task) {
      details.upstreamTask = task;
      ctx.heartbeat(details);
      await observer?.record(input, { event: 'upstream_task', attempt: details.attempt, upstreamTaskId: task.taskId });
    },
    abandoned: () => {
      const cancelled = ctx.cancellationDetails;
      return cancelled?.cancelRequested === true || cancelled?.notFound === true || Date.now() >= until - 1000;
    },
  };
  return { hold, followForMs };
}

export function createDurableToolCallActivities(deps: DurableToolCallDeps) {
  async function callDurableTool(input: DurableToolCallInput): Promise<DurableToolCallResult> {
    const ctx = Context.current();
    const attempt = ctx.info.attempt;
    const last = attempt >= input.policy.maxAttempts;
    const observer = deps.durableCalls;
    if (!deps.tools) throw ApplicationFailure.create({ message: 'this worker has no tool dispatcher', type: DurableFailureType.NOT_CALLABLE, nonRetryable: true });
    const attemptMs = (input.policy.attemptTimeoutSeconds ?? DEFAULT_DURABLE_ATTEMPT_TIMEOUT_SECONDS) * 1000;
    // what an earlier attempt heartbeat: the remote's task it was handed, which this one follows rather than calling again
    const earlier = DurableHeartbeatSchema.safeParse(ctx.info.heartbeatDetails);
    const details: DurableHeartbeat = { attempt, ...(earlier.success && earlier.data.upstreamTask ? { upstreamTask: earlier.data.upstreamTask } : {}) };
    if (details.upstreamTask) {
      await observer?.record(input, { event: 'upstream_task', attempt, upstreamTaskId: details.upstreamTask.taskId, resumed: true });
      ctx.heartbeat(details);
    }
    const heartbeat = setInterval(() => ctx.heartbeat(details), DURABLE_HEARTBEAT_MS);
    let result: ToolResult;
    let retry: Retryable | undefined;
    try {
      const hold = input.upstreamTasks ? upstreamTaskHold(ctx, input, details, attemptMs, observer) : undefined;
      result = await deps.tools.call(input.orgId, input.server, input.tool, input.args, {
        idempotencyKey: input.idempotencyKey, forwardHeaders: input.forwardHeaders, durableAttempt: true,
        timeoutMs: hold ? hold.followForMs : attemptMs, signal: ctx.cancellationSignal, ...(hold ? { upstreamTask: hold.hold } : {}),
      });
      retry = result.isError ? retryableOf(result) : undefined;
    } catch (error) {
      if (ctx.cancellationSignal.aborted) {
        await observer?.record(input, { event: 'cancelled', attempt });
        throw error;
      }
      if (!(error instanceof ToolCallError)) throw error; // unexpected: Temporal retries it under the same policy
      if (error.code !== 'UNAVAILABLE' && error.code !== 'TIMEOUT') {
        observer?.attempt(input.server, input.tool, 'failed');
        await observer?.record(input, { event: 'failed', attempt, message: error.message });
        throw ApplicationFailure.create({ message: error.message, type: DurableFailureType.NOT_CALLABLE, nonRetryable: true, details: [{ code: error.code }] });
      }
      result = { isError: true, message: error.message, value: { error: error.message, code: error.code } };
      retry = { reason: error.code === 'TIMEOUT' ? 'timeout' : 'network', message: error.message };
    } finally {
      clearInterval(heartbeat);
    }
    if (!result.isError) {
      observer?.attempt(input.server, input.tool, 'ok');
      await observer?.record(input, { event: 'completed', attempt });
      return { isError: false, value: result.value, ...(result.content ? { content: result.content } : {}), attempts: attempt };
    }
    if (!retry) {
      // refused for good (another 4xx, a tool error): the tool's error result, not retried
      observer?.attempt(input.server, input.tool, 'failed');
      const status = typeof result.value.status === 'number' ? result.value.status : undefined;
      await observer?.record(input, { event: 'failed', attempt, message: result.message, ...(status === undefined ? {} : { status }) });
      throw ApplicationFailure.create({
        message: result.message, type: DurableFailureType.TOOL_ERROR, nonRetryable: true,
        details: [{ isError: true, message: result.message, value: result.value, ...(result.content ? { content: result.content } : {}), attempts: attempt }],
      });
    }
    observer?.attempt(input.server, input.tool, last ? 'failed' : 'retry', retry.reason);
    await observer?.record(input, {
      event: last ? 'failed' : 'retried', attempt, reason: retry.reason, message: retry.message, ...(retry.status === undefined ? {} : { status: retry.status }),
    });
    throw ApplicationFailure.create({
      message: retry.message, type: DurableFailureType.RETRYABLE,
      ...(retry.delayMs === undefined ? {} : { nextRetryDelay: retry.delayMs }),
      details: [{ isError: true, message: retry.message, value: retry.result?.value ?? result.value, reason: retry.reason, attempts: attempt }],
    });
  }

  /**
   * The clean-up of a durable call cancelled while no attempt ran (between two attempts, or while
   * the worker was down): the remote's task an attempt was handed, if any, gets tasks/cancel. An
   * attempt that was running has sent it already; a second one is harmless (the remote answers an
   * error for a task it no longer runs, which is ignored). Answers whether a cancel was sent.
   */
  async function cancelDurableUpstream(input: DurableToolCallInput): Promise<boolean> {
    const observer = deps.durableCalls;
    const upstreamTaskId = input.upstreamTasks ? await observer?.lastUpstreamTask(input) : undefined;
    if (!deps.tools || upstreamTaskId === undefined) return false;
    const cancelOnly: UpstreamTaskHold = {
      resume: { taskId: upstreamTaskId, era: 'modern' }, cancelOnly: true, received: async () => undefined,
      requestTimeoutMs: CANCEL_REQUEST_MS, ttlMs: input.ttlMs, abandoned: () => true,
    };
    const result = await deps.tools.call(input.orgId, input.server, input.tool, input.args, {
      idempotencyKey: input.idempotencyKey, forwardHeaders: input.forwardHeaders, durableAttempt: true, timeoutMs: CANCEL_REQUEST_MS, upstreamTask: cancelOnly,
    });
    const sent = !result.isError && result.value.upstreamTaskCancelled === true;
    if (sent) await observer?.record(input, { event: 'cancelled', attempt: 0, upstreamTaskId, message: 'the remote\'s task was cancelled after the call was' });
    return sent;
  }

  return { callDurableTool, cancelDurableUpstream };
}

/** How long the clean-up's tasks/cancel at the remote may take. */
const CANCEL_REQUEST_MS = 10_000;
