/**
 * A remote MCP server's own tasks, followed by a durable attempt (docs/tool-gateway.md, "Durable
 * calls"; src/common/durable-call.ts). A durable attempt at a remote lets it answer with a task: a
 * 2026-07-28 remote is told that the call's client declares the Tasks extension
 * (`io.modelcontextprotocol/tasks`); a 2025-11-25 remote gets `params.task: {ttl}` on a tool its
 * list says may run as a task (`execution.taskSupport` optional or required). A task answer (2026
 * `resultType: "task"`, 2025 `{task}`) is handed to the attempt, which heartbeats it, and then
 * followed: `tasks/get` at the poll interval the remote asks for (kept between 0.1 and 5 s), each
 * request under the attempt's deadline, until the task ends; its result is the one a 2026
 * `tasks/get` carries inline, or the 2025 `tasks/result`. A task the remote ends `cancelled`, or
 * one that asks for input (nobody can answer a durable call's question), is a tool error.
 *
 * When the durable call is over while its attempt follows the task (tasks/cancel of the durable
 * call, its overall deadline: UpstreamTaskHold.abandoned), the remote gets `tasks/cancel` with its
 * task id; when it is cancelled while no attempt runs (between two attempts, the worker down), the
 * workflow's clean-up sends it (UpstreamTaskHold.cancelOnly). An attempt after a lost one (a worker killed, a poll that failed) follows the task the
 * lost one was handed; a remote that no longer knows it (-32602) is called again, with the call's
 * same idempotency key.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { UpstreamTask } from '../../common/durable-call';
import { isRecord } from '../../common/narrow';
import { TASKS_EXTENSION } from '../../contracts/mcp';
import { ToolFailure, type UpstreamTaskHold } from '../server';
import { RemoteRpcError } from './remote-mcp';

/** What a 2026 request declares to be answered, and followed, as a task. */
export const TASKS_CAPABILITIES: Readonly<Record<string, unknown>> = { extensions: { [TASKS_EXTENSION]: {} } };
const DEFAULT_POLL_MS = 1000;
const MIN_POLL_MS = 100;
const MAX_POLL_MS = 5000;
/** How long the remote's tasks/cancel may take (the call itself is already over). */
const CANCEL_TIMEOUT_MS = 5000;
/** A JSON-RPC "invalid params": what a remote answers for a task it does not know. */
const INVALID_PARAMS = -32602;

/** One request to the remote about its task: under `signal`, and by `deadline` (epoch ms). */
export type TaskRequest = (method: string, params: Record<string, unknown>, signal: AbortSignal, deadline: number) => Promise<Record<string, unknown>>;

/** A tools/call at the remote with what lets it answer a task: the 2026 capabilities, the 2025 `task` param when the tool allows it. */
export type TaskCall = (extra: { clientCapabilities: Readonly<Record<string, unknown>>; legacyParams(): Promise<Record<string, unknown>> }) => Promise<Record<string, unknown>>;

const pollOf = (value: unknown): { pollIntervalMs?: number } => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? { pollIntervalMs: Math.round(value) } : {});

/** The remote's task, when it answered a tools/call with one (either era). */
export function upstreamTaskOf(result: Record<string, unknown>): UpstreamTask | undefined {
  if (result.resultType === 'task' && typeof result.taskId === 'string' && result.taskId !== '') {
    return { taskId: result.taskId, era: 'modern', ...pollOf(result.pollIntervalMs) };
  }
  const task = result.task;
  if (isRecord(task) && typeof task.taskId === 'string' && task.taskId !== '' && typeof task.status === 'string') {
    return { taskId: task.taskId, era: 'legacy', ...pollOf(task.pollInterval) };
  }
  return undefined;
}

export interface FollowOptions {
  hold: UpstreamTaskHold;
  /** the call's signal (the durable call's cancellation, its deadline) */
  signal: AbortSignal;
  /** whether the tool, as a 2025 remote lists it, may run as a task */
  legacyTaskSupport(): Promise<boolean>;
  call: TaskCall;
  request: TaskRequest;
}

/**
 * A durable attempt's tools/call at a remote that may answer with a task: the task an earlier
 * attempt was handed is followed (no second call); otherwise the tool is called, and a task answer
 * is told to the hold and followed. Answers the tools/call result as the remote gave it.
 */
export async function callFollowingTasks(options: FollowOptions): Promise<Record<string, unknown>> {
  const { hold } = options;
  if (hold.cancelOnly) {
    // the durable call was cancelled between attempts: the remote's task is no longer wanted
    const sent = hold.resume ? await cancelUpstream(hold.resume, options.request) : false;
    return { content: [], structuredContent: { upstreamTaskCancelled: sent } };
  }
  if (hold.resume) {
    try {
      return await follow(hold.resume, options);
    } catch (error) {
      // the remote no longer knows the task (restarted, expired, bound to a session of a process gone): call again, same key
      if (!(error instanceof RemoteRpcError && error.code === INVALID_PARAMS)) throw error;
    }
  }
  const result = await options.call({
    clientCapabilities: TASKS_CAPABILITIES,
    legacyParams: async () => (await options.legacyTaskSupport() ? { task: { ttl: hold.ttlMs } } : {}),
  });
  const task = upstreamTaskOf(result);
  if (!task) return result;
  await hold.received(task);
  return follow(task, options);
}

/** Follows the task to its result; when the call is over first, cancels it at the remote. */
async function follow(task: UpstreamTask, options: FollowOptions): Promise<Record<string, unknown>> {
  try {
    return await poll(task, options);
  } catch (error) {
    if ((options.signal.aborted && options.hold.abandoned()) || (error instanceof ToolFailure && error.details.inputRequired === true)) {
      await cancelUpstream(task, options.request);
    }
    throw error;
  }
}

/** Sends the remote tasks/cancel for its task; a failure is the remote's (the task may have ended already). */
export async function cancelUpstream(task: UpstreamTask, request: TaskRequest): Promise<boolean> {
  try {
    await request('tasks/cancel', { taskId: task.taskId }, AbortSignal.timeout(CANCEL_TIMEOUT_MS), Date.now() + CANCEL_TIMEOUT_MS);
    return true;
  } catch {
    return false;
  }
}

async function poll(task: UpstreamTask, { request, signal, hold }: FollowOptions): Promise<Record<string, unknown>> {
  let interval = task.pollIntervalMs ?? DEFAULT_POLL_MS;
  for (;;) {
    const got = await request('tasks/get', { taskId: task.taskId }, signal, Date.now() + hold.requestTimeoutMs);
    const status = got.status;
    if (status === 'completed' || status === 'failed') {
      if (task.era === 'legacy') return request('tasks/result', { taskId: task.taskId }, signal, Date.now() + hold.requestTimeoutMs);
      if (isRecord(got.result)) return got.result;
      const message = isRecord(got.error) && typeof got.error.message === 'string' ? got.error.message : `the remote's task ${task.taskId} ${status === 'failed' ? 'failed' : 'answered no result'}`;
      throw new ToolFailure(message, { upstreamTaskId: task.taskId });
    }
    if (status === 'cancelled') throw new ToolFailure(`the remote cancelled its task ${task.taskId}`, { upstreamTaskId: task.taskId });
    if (status === 'input_required') {
      throw new ToolFailure(`the remote's task ${task.taskId} asks for input, which a durable call cannot answer; it was cancelled`, { upstreamTaskId: task.taskId, inputRequired: true });
    }
    interval = pollOf(task.era === 'modern' ? got.pollIntervalMs : got.pollInterval).pollIntervalMs ?? interval;
    await sleep(Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, interval)), undefined, { signal });
  }
}
