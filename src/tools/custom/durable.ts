/**
 * Durable calls of custom servers (src/common/durable-call.ts): the gateway side. A server marked
 * `durable` runs every call of its tools as a `durableToolCall` workflow whose id is the task id:
 *   - a task-augmented call (MCP Tasks, both eras) answers the task at once; tasks/get, tasks/result
 *     and tasks/cancel read and cancel the workflow through the generic task methods
 *     (src/tools/mcp/tasks.ts) by the task kind below;
 *   - any other call (a plain MCP call, a workflow `tool` step, an agent's tool call) goes through the
 *     dispatcher, which hands it here (DurableCalls.call): the task is started the same way and its
 *     result waited for, at most the call's wait; past it, a TIMEOUT naming the task to poll (the call
 *     goes on: its retries do not depend on the caller staying).
 * With an idempotency key (the caller's, a step's `<runId>:<step>`, an agent's) the task id follows
 * from it: a retried call finds its task and starts nothing, so a step retried by Temporal waits
 * for the same upstream call instead of making another.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  ApplicationFailure, CancelledFailure, TerminatedFailure, TimeoutFailure, WorkflowExecutionAlreadyStartedError, WorkflowFailedError, type Client,
} from '@temporalio/client';
import { z } from 'zod';
import {
  DURABLE_TOOL_CALL_WORKFLOW, DurableFailureType, WAITING_FOR_SLOT_MEMO, durableIdempotencyKey, type DurablePolicy, type DurableToolCallInput, type DurableToolCallMemo,
} from '../../common/durable-call';
import { anyDurable, durablePolicyFor } from '../../common/durable-tools';
import { startPriority } from '../../common/priority';
import { orgSlotKey } from '../../common/slots';
import { SEARCH_ATTRIBUTES } from '../../common/search-attributes';
import { isRecord } from '../../common/narrow';
import type { DurableToolCallWorkflow } from '../../common/workflow-contracts';
import type { CallOptions } from '../caller';
import type { TaskKind } from '../mcp/task-kind';
import { ToolCallError, type ToolCallErrorCode, type ToolResult, type ToolServer } from '../server';

/** How long a plain call of a durable tool waits for its result unless told (the task result wait). */
export const DEFAULT_DURABLE_WAIT_MS = 50_000;
/** The ttl of a task started by a plain call (nobody asked for one): a day. */
export const PLAIN_CALL_TASK_TTL_MS = 24 * 3600 * 1000;

const MemoSchema = z.object({
  durableToolCall: z.object({ orgId: z.string(), server: z.string(), tool: z.string(), ttlMs: z.number() }).loose(),
  [WAITING_FOR_SLOT_MEMO]: z.object({ limit: z.number() }).loose().optional(),
}).loose();

function memoOf(memo: unknown, orgId: string): DurableToolCallMemo['durableToolCall'] | undefined {
  const parsed = MemoSchema.safeParse(memo);
  return parsed.success && parsed.data.durableToolCall.orgId === orgId ? parsed.data.durableToolCall : undefined;
}

/** What a running durable call is doing, as tasks/get says it: waiting for its organization's slot, or calling. */
function workingMessage(memo: unknown, orgId: string): string | undefined {
  const parsed = MemoSchema.safeParse(memo);
  if (!parsed.success || parsed.data.durableToolCall.orgId !== orgId) return undefined;
  const { durableToolCall: call, waitingForSlot } = parsed.data;
  return waitingForSlot
    ? `waiting for a slot of the organization's concurrency limit (${waitingForSlot.limit}) before calling ${call.tool} on /${call.server}`
    : `calling ${call.tool} on /${call.server}`;
}

const CODES: readonly ToolCallErrorCode[] = ['UNKNOWN_SERVER', 'UNKNOWN_TOOL', 'INVALID_ARGUMENTS', 'CONNECTION_REFUSED', 'TIMEOUT', 'UNAVAILABLE', 'UNANSWERABLE'];
const codeOf = (value: unknown): ToolCallErrorCode | undefined => CODES.find((code) => code === value);

/** The task id of a durable call made with an idempotency key: the organization, server, tool and key name it. */
export function durableTaskId(orgId: string, server: string, tool: string, idempotencyKey: string): string {
  return `dtask_${createHash('sha256').update(`${orgId}\n${server}\n${tool}\n${idempotencyKey}`).digest('hex').slice(0, 32)}`;
}

/** What a durable call started with: who made it (for the audit trail) and how long its task lives. */
export interface DurableStart {
  idempotencyKey?: string;
  forwardHeaders: Readonly<Record<string, string>>;
  ttlMs: number;
  keyId?: string;
}

/** Told of each durable call started (the audit trail's `durable_call.started`). */
export type DurableStartRecorder = (input: DurableToolCallInput, reused: boolean) => Promise<void>;

export interface DurableCallsOptions {
  client: Client;
  taskQueue: string;
  onStarted?: DurableStartRecorder;
  /**
   * The organization's concurrency limit (config.concurrency): with `orgMaxRunning` above 0, a call
   * made through the tool gateway takes a slot of it, shared with the organization's runs.
   */
  limits?: { orgMaxRunning: number; slotMaxWaitSeconds: number };
}

/** A closed durable call as a plain call answers it: the tool's result, or the ToolCallError of a call that could not be made. */
type Outcome = { result: ToolResult } | { error: ToolCallError };

export class DurableCalls {
  constructor(private readonly options: DurableCallsOptions) {}

  /** The task id of a call: from its idempotency key when it has one (the same call finds the same task), else fresh. */
  taskIdOf(orgId: string, server: string, tool: string, idempotencyKey: string | undefined): string {
    return idempotencyKey === undefined ? `dtask_${randomUUID()}` : durableTaskId(orgId, server, tool, idempotencyKey);
  }

  /** Starts the call's workflow (or finds the one its idempotency key already started) and answers its task id. */
  async start(orgId: string, server: ToolServer, policy: DurablePolicy, tool: string, args: Record<string, unknown>, call: DurableStart): Promise<string> {
    const taskId = this.taskIdOf(orgId, server.name, tool, call.idempotencyKey);
    const input: DurableToolCallInput = {
      orgId, taskId, server: server.name, serverName: server.description.slice(0, 80), tool, args, policy,
      idempotencyKey: call.idempotencyKey ?? durableIdempotencyKey(taskId), forwardHeaders: { ...call.forwardHeaders }, ttlMs: call.ttlMs,
      ...(call.keyId === undefined ? {} : { keyId: call.keyId }), ...(server.followsUpstreamTasks ? { upstreamTasks: true } : {}), ...this.slotOf(orgId, call),
    };
    const memo = { durableToolCall: { orgId, server: server.name, tool, ttlMs: call.ttlMs } } satisfies DurableToolCallMemo;
    let reused = false;
    try {
      await this.options.client.workflow.start<DurableToolCallWorkflow>(DURABLE_TOOL_CALL_WORKFLOW, {
        workflowId: taskId, taskQueue: this.options.taskQueue, args: [input], workflowExecutionTimeout: call.ttlMs,
        workflowIdReusePolicy: 'REJECT_DUPLICATE', workflowIdConflictPolicy: 'USE_EXISTING', memo,
        typedSearchAttributes: [{ key: SEARCH_ATTRIBUTES.orgId, value: orgId }],
        staticSummary: `durable tool call ${server.name}/${tool}`,
        staticDetails: `MCP task ${taskId} of organization ${orgId}: ${tool} of the durable server /${server.name}, at most ${policy.maxAttempts} attempts.`,
        priority: startPriority(orgId),
      });
    } catch (error) {
      if (!(call.idempotencyKey !== undefined && error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      reused = true;
    }
    await this.options.onStarted?.(input, reused);
    return taskId;
  }

  /**
   * The slot of the organization's limit a call takes: one made through the tool gateway (its
   * caller's key known) when the limit is set; a run's step or agent calls within its run's slot
   * (waiting for a second slot of the same limit could hold every slot at once).
   */
  private slotOf(orgId: string, call: DurableStart): Pick<DurableToolCallInput, 'slot'> {
    const limits = this.options.limits;
    if (!limits || limits.orgMaxRunning <= 0 || call.keyId === undefined) return {};
    return {
      slot: { key: orgSlotKey(orgId, this.options.taskQueue), limit: limits.orgMaxRunning, maxWaitSeconds: limits.slotMaxWaitSeconds, started: new Date().toISOString() },
    };
  }

  /**
   * A plain call of a durable tool (the dispatcher's): starts its task and waits for the result at
   * most `durableWaitMs` (or until the caller's signal aborts); past it, a TIMEOUT naming the task.
   */
  async call(orgId: string, server: ToolServer, policy: DurablePolicy, tool: string, args: Record<string, unknown>, options: CallOptions): Promise<ToolResult> {
    const taskId = await this.start(orgId, server, policy, tool, args, {
      ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }), forwardHeaders: options.forwardHeaders ?? {}, ttlMs: PLAIN_CALL_TASK_TTL_MS,
      ...(options.keyId === undefined ? {} : { keyId: options.keyId }),
    });
    const waitMs = options.durableWaitMs ?? options.timeoutMs ?? DEFAULT_DURABLE_WAIT_MS;
    const outcome = await this.outcome(taskId, waitMs, options.signal);
    if (!outcome) {
      throw new ToolCallError('TIMEOUT', `${tool} on /${server.name} runs as durable task ${taskId} and did not finish within ${waitMs} ms; it goes on: poll tasks/get with taskId ${taskId} for its result`);
    }
    if ('error' in outcome) throw outcome.error;
    return outcome.result;
  }

  /** The task's result as a task shows it: a call that could not be made is a tool error too. */
  async result(taskId: string, waitMs: number | undefined, signal?: AbortSignal): Promise<ToolResult | undefined> {
    const outcome = await this.outcome(taskId, waitMs, signal);
    if (!outcome) return undefined;
    if ('result' in outcome) return outcome.result;
    return { isError: true, message: outcome.error.message, value: { error: outcome.error.message, code: outcome.error.code } };
  }

  /** The closed workflow's outcome, or an open one's once it closes within `waitMs` (undefined: still open). */
  private async outcome(taskId: string, waitMs: number | undefined, signal?: AbortSignal): Promise<Outcome | undefined> {
    const handle = this.options.client.workflow.getHandle<DurableToolCallWorkflow>(taskId);
    const abort = new AbortController();
    const timer = waitMs === undefined ? undefined : setTimeout(() => abort.abort(), Math.max(0, waitMs));
    const stop = (): void => abort.abort();
    if (signal?.aborted) abort.abort();
    signal?.addEventListener('abort', stop, { once: true });
    try {
      const value = await this.options.client.connection.withAbortSignal(abort.signal, () => handle.result());
      return { result: { isError: false, value: value.value, ...(value.content ? { content: value.content } : {}) } };
    } catch (error) {
      if (abort.signal.aborted) return undefined;
      if (!(error instanceof WorkflowFailedError)) throw error;
      return failedOutcome(error.cause, taskId);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
    }
  }
}

/** A failed durable call: its tool error, or the ToolCallError of a call that could not be made (or never reached the upstream). */
function failedOutcome(cause: Error | undefined, taskId: string): Outcome {
  if (cause instanceof CancelledFailure) return { result: { isError: true, message: 'the task was cancelled', value: { status: 'CANCELLED', error: 'the task was cancelled' } } };
  if (cause instanceof TimeoutFailure) return { error: new ToolCallError('TIMEOUT', `durable task ${taskId} outlived its ttl`) };
  if (cause instanceof TerminatedFailure) return { result: { isError: true, message: 'the task was terminated', value: { error: 'the task was terminated' } } };
  const message = cause?.message ?? 'the durable call failed';
  if (!(cause instanceof ApplicationFailure)) return { result: { isError: true, message, value: { error: message } } };
  const detail: unknown = cause.details?.[0];
  const value = isRecord(detail) && isRecord(detail.value) ? detail.value : {};
  const content = isRecord(detail) && Array.isArray(detail.content) ? detail.content.filter(isRecord).map((block) => ({ ...block, type: String(block.type) })) : undefined;
  if (cause.type === DurableFailureType.NOT_CALLABLE) {
    return { error: new ToolCallError(codeOf(isRecord(detail) ? detail.code : undefined) ?? 'UNAVAILABLE', message) };
  }
  const code = codeOf(value.code);
  if (cause.type === DurableFailureType.RETRYABLE && (code === 'UNAVAILABLE' || code === 'TIMEOUT')) {
    // every attempt failed before the upstream answered
    return { error: new ToolCallError(code, `${message} (after ${isRecord(detail) && typeof detail.attempts === 'number' ? detail.attempts : 'every'} attempt(s) of durable task ${taskId})`) };
  }
  return { result: { isError: true, message, value: { ...value, error: message }, ...(content ? { content } : {}) } };
}

/**
 * The task kind of durable calls: the tools of every custom server marked durable (the resolved
 * server says so: its `durable`), each task one durableToolCall workflow.
 */
export function durableTaskKind(calls: DurableCalls): TaskKind {
  return {
    workflowType: DURABLE_TOOL_CALL_WORKFLOW,
    cancelledMessage: 'the task was cancelled',
    servesTool: (server, toolName) => !server.embedded
      && (toolName === undefined ? anyDurable(server.durable, server.durableTools) : durablePolicyFor(server.durable, server.durableTools, toolName) !== undefined),
    runsAsTask: () => true,
    owns: (memo, orgId) => memoOf(memo, orgId) !== undefined,
    ttlOf(memo) {
      const parsed = z.object({ durableToolCall: z.object({ ttlMs: z.unknown() }).loose() }).loose().safeParse(memo);
      return parsed.success && typeof parsed.data.durableToolCall.ttlMs === 'number' ? parsed.data.durableToolCall.ttlMs : null;
    },
    start(orgId, toolName, args, call) {
      const server = call.server;
      const policy = server && durablePolicyFor(server.durable, server.durableTools, toolName);
      if (!server || !policy) throw new ToolCallError('UNKNOWN_TOOL', `${toolName} cannot run as a durable task`);
      return calls.start(orgId, server, policy, toolName, args, {
        ...(call.idempotencyKey === undefined ? {} : { idempotencyKey: call.idempotencyKey }), forwardHeaders: call.forwardHeaders, ttlMs: call.ttlMs,
        ...(call.keyId === undefined ? {} : { keyId: call.keyId }),
      });
    },
    async state(orgId, taskId, workflow, closed) {
      if (closed) {
        const result = closed === 'failed' ? await calls.result(taskId, undefined) : undefined;
        return { status: closed, statusMessage: result?.isError ? result.message : undefined };
      }
      return { status: 'working', statusMessage: workingMessage(workflow.memo, orgId) };
    },
    result: (_orgId, taskId, workflow, waitMs, signal) => calls.result(taskId, workflow.status.name === 'RUNNING' ? waitMs : undefined, signal),
  };
}
