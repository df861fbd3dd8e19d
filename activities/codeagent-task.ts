/**
 * The activities of the code-agent waiter (workflows/codeagent-task.ts): each talks to the
 * code-agent backend through the in-process tool dispatcher, as the task's organization, with the
 * connection named by its PCID, so no credential ever enters Temporal's history.
 *
 * waitForCodeAgentRun is one long activity: it polls Get Run with a growing pause (1 s, then ×1.5
 * up to 15 s; a 429's Retry-After when longer), heartbeating around every poll, so a dead worker is
 * noticed within the heartbeat timeout and the activity goes on elsewhere. Transient failures
 * (backend unreachable or silent, 5xx, 429) are polled through; a missing agent or run, a refused
 * key or connection end the wait with a non-retryable failure.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  CODEAGENT_SERVER, CodeAgentTaskFailureType, TERMINAL_CODEAGENT_RUN_STATUSES, type CodeAgentTaskInput,
} from '../src/common/codeagent-task';
import { fieldOf, isOneOf } from '../src/common/narrow';
import type { ToolCaller } from '../src/tools/caller';
import { ToolCallError } from '../src/tools/errors';
import type { ToolResult } from '../src/tools/server';

export interface CodeAgentTaskDeps {
  tools?: ToolCaller;
}

type RunRef = Pick<CodeAgentTaskInput, 'orgId' | 'pcid' | 'agentId' | 'runId'>;

export const FIRST_POLL_PAUSE_MS = 1000;
export const MAX_POLL_PAUSE_MS = 15_000;
const POLL_GROWTH = 1.5;
/** one Get Run may take this long; the heartbeat timeout (workflows/codeagent-task.ts) is above it and the longest pause */
const POLL_CALL_TIMEOUT_MS = 20_000;
/** stream_run's answer kept in history at most (Temporal refuses payloads over 2 MB) */
const MAX_STREAM_ANSWER_CHARS = 1024 * 1024;

function toolsOf(deps: CodeAgentTaskDeps): ToolCaller {
  if (!deps.tools) throw ApplicationFailure.nonRetryable('this worker has no tool dispatcher', CodeAgentTaskFailureType.RUN_UNREADABLE);
  return deps.tools;
}

/** The backend's HTTP status and Retry-After of a tool error (ToolFailure details), when it gave them. */
function backendStatus(result: Extract<ToolResult, { isError: true }>): { status?: number; retryAfter?: number } {
  const { status, retryAfter } = result.value;
  return { ...(typeof status === 'number' ? { status } : {}), ...(typeof retryAfter === 'number' ? { retryAfter } : {}) };
}

export function createCodeAgentTaskActivities(deps: CodeAgentTaskDeps) {
  /** Polls the run until it is over and answers it (the Get Run body). */
  async function waitForCodeAgentRun(ref: RunRef): Promise<Record<string, unknown>> {
    const tools = toolsOf(deps);
    const ctx = Context.current();
    let pause = FIRST_POLL_PAUSE_MS;
    for (;;) {
      ctx.heartbeat();
      let result: ToolResult | undefined;
      try {
        result = await tools.call(ref.orgId, CODEAGENT_SERVER, 'codeagent_get_run', { PCID: ref.pcid, id: ref.agentId, runId: ref.runId }, {
          signal: ctx.cancellationSignal, timeoutMs: POLL_CALL_TIMEOUT_MS, idempotencyKey: `${ctx.info.workflowExecution?.workflowId ?? ref.runId}:poll`,
        });
      } catch (error) {
        if (ctx.cancellationSignal.aborted) throw error;
        // unreachable or silent: poll on; anything else (connection gone or refused) will not get better
        if (!(error instanceof ToolCallError) || (error.code !== 'UNAVAILABLE' && error.code !== 'TIMEOUT')) {
          throw ApplicationFailure.nonRetryable(`cannot read the agent's run: ${error instanceof Error ? error.message : String(error)}`, CodeAgentTaskFailureType.RUN_UNREADABLE);
        }
      }
      ctx.heartbeat();
      if (result && !result.isError) {
        const status = result.value.status;
        if (typeof status === 'string' && isOneOf(TERMINAL_CODEAGENT_RUN_STATUSES, status)) return result.value;
      }
      if (result?.isError) {
        const { status, retryAfter } = backendStatus(result);
        if (status === 400 || status === 401 || status === 403 || status === 404) {
          throw ApplicationFailure.create({ message: result.message, type: CodeAgentTaskFailureType.RUN_UNREADABLE, nonRetryable: true, details: [result.value] });
        }
        if (retryAfter !== undefined) pause = Math.max(pause, retryAfter * 1000);
      }
      await ctx.sleep(pause);
      pause = Math.min(MAX_POLL_PAUSE_MS, Math.round(pause * POLL_GROWTH));
    }
  }

  /**
   * stream_run's answer once the run is over: its events after `lastEventId` up to `done` (the
   * tool reads to the end at once). An answer too large for history keeps the leading events and
   * says `truncated: true`, `ended: false`: the caller continues with stream_run after its lastEventId.
   */
  async function readCodeAgentRunStream(ref: RunRef & { lastEventId?: string }): Promise<ToolResult> {
    const tools = toolsOf(deps);
    const ctx = Context.current();
    const result = await tools.call(ref.orgId, CODEAGENT_SERVER, 'codeagent_stream_run', {
      PCID: ref.pcid, id: ref.agentId, runId: ref.runId, waitSeconds: 30, ...(ref.lastEventId === undefined ? {} : { 'Last-Event-ID': ref.lastEventId }),
    }, { signal: ctx.cancellationSignal });
    if (result.isError) return { isError: true, message: result.message, value: result.value };
    return { isError: false, value: fitStreamAnswer(result.value, ref.lastEventId) };
  }

  /** Asks the backend to cancel the run (tasks/cancel); a run already over is fine. */
  async function cancelCodeAgentRun(ref: RunRef): Promise<{ cancelled: boolean; message?: string }> {
    const tools = toolsOf(deps);
    const ctx = Context.current();
    const result = await tools.call(ref.orgId, CODEAGENT_SERVER, 'codeagent_cancel_run', { PCID: ref.pcid, id: ref.agentId, runId: ref.runId }, {
      signal: ctx.cancellationSignal, idempotencyKey: `${ctx.info.workflowExecution?.workflowId ?? ref.runId}:cancel`,
    });
    return result.isError ? { cancelled: false, message: result.message } : { cancelled: true };
  }

  return { waitForCodeAgentRun, readCodeAgentRunStream, cancelCodeAgentRun };
}

function fitStreamAnswer(value: Record<string, unknown>, from: string | undefined): Record<string, unknown> {
  if (JSON.stringify(value).length <= MAX_STREAM_ANSWER_CHARS || !Array.isArray(value.events)) return value;
  const kept: unknown[] = [];
  let size = 0;
  let lastKeptId: string | undefined;
  let lastKeptIndex = -1;
  for (const event of value.events) {
    size += JSON.stringify(event).length;
    if (size > MAX_STREAM_ANSWER_CHARS) break;
    kept.push(event);
    const id = fieldOf(event, 'id');
    if (typeof id === 'string') {
      lastKeptId = id;
      lastKeptIndex = kept.length - 1;
    }
  }
  // answered events end with one that has an id, so the next read resumes exactly after it
  const events = kept.slice(0, lastKeptIndex + 1);
  return { ...value, events, lastEventId: lastKeptId ?? from ?? null, ended: false, truncated: true };
}
