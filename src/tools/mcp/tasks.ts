/**
 * MCP Tasks (protocol 2025-11-25, experimental there) backed by Temporal: a task-augmented
 * `tools/call` on a workflow tool starts the run and answers at once; the task id is the run id.
 * Nothing is kept in this process: every answer is read from Temporal (describe, the `state`
 * query, the result), so a task outlives the gateway that created it and any replica can answer
 * for it. A task belongs to the organization whose token started it: another organization's task
 * id is unknown, exactly like a missing one. Only runs started through a workflow tool are tasks.
 */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { z } from 'zod';
import type { RunMemo } from '../../common/run-memo';
import { SEARCH_ATTRIBUTES } from '../../common/search-attributes';
import type { RunService } from '../../runs/run-service';
import type { ToolResult, ToolServices } from '../server';
import { WORKFLOWS_SERVER, type WorkflowTools } from '../workflow-tools/workflow-tools';

export const TaskStatusSchema = z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

/** The `task` field of a task-augmented request. */
export const TaskCreationParamsSchema = z.object({ ttl: z.number().optional(), pollInterval: z.number().optional() }).loose();
/** `tasks/get`, `tasks/result` and `tasks/cancel` params. */
export const TaskIdParamsSchema = z.object({ taskId: z.string().min(1).max(200) }).loose();
export const ListTasksParamsSchema = z.object({ cursor: z.string().optional() }).loose();

export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

export interface McpTask {
  taskId: string;
  status: TaskStatus;
  /** null: kept as long as Temporal keeps the closed run (the namespace's retention) */
  ttl: number | null;
  createdAt: string;
  lastUpdatedAt: string;
  pollInterval: number;
  statusMessage?: string;
}

export const DEFAULT_TASK_POLL_INTERVAL_MS = 1000;
/** How long `tasks/result` blocks on an open run before telling the caller to keep polling. */
export const TASK_RESULT_WAIT_MS = 60_000;
const TASK_LIST_LIMIT = 100;
/** Runs read from visibility per tasks/list at most: an organization's trigger runs are there too and are skipped. */
const TASK_LIST_SCAN_LIMIT = 2000;
const TERMINAL: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];
/** Runs started by a workflow tool carry this `startedBy` prefix. */
const TOOL_STARTED_BY = `tool:${WORKFLOWS_SERVER}/`;

/** The task id names no task of the caller's organization (missing, or another organization's). */
export class TaskNotFoundError extends Error {
  override readonly name = 'TaskNotFoundError';
  constructor(taskId: string) {
    super(`no task ${taskId}`);
  }
}

/** The task is closed and cannot be cancelled. */
export class TaskTerminalError extends Error {
  override readonly name = 'TaskTerminalError';
}

/** The task is still open after the wait `tasks/result` allows. */
export class TaskNotReadyError extends Error {
  override readonly name = 'TaskNotReadyError';
}

export interface WorkflowTasksOptions {
  client: Client;
  runs: RunService;
  workflowTools: WorkflowTools;
  services: Pick<ToolServices, 'blobs' | 'signer'>;
  pollIntervalMs?: number;
  resultWaitMs?: number;
}

function isTaskRun(memo: RunMemo | undefined, orgId: string): memo is RunMemo {
  return memo?.orgId === orgId && typeof memo.startedBy === 'string' && memo.startedBy.startsWith(TOOL_STARTED_BY);
}

export class WorkflowTasks {
  constructor(private readonly options: WorkflowTasksOptions) {}

  private get pollInterval(): number {
    return this.options.pollIntervalMs ?? DEFAULT_TASK_POLL_INTERVAL_MS;
  }

  /** Whether `tools/call` on this server and tool may be task-augmented. */
  supports(serverName: string): boolean {
    return serverName === WORKFLOWS_SERVER;
  }

  /** Starts the run behind a task-augmented call and answers its task (working). */
  async create(orgId: string, toolName: string, args: Record<string, unknown>, idempotencyKey?: string): Promise<McpTask> {
    const { runId } = await this.options.workflowTools.start(orgId, toolName, args, idempotencyKey);
    return this.get(orgId, runId);
  }

  async get(orgId: string, taskId: string): Promise<McpTask> {
    const description = await this.describe(orgId, taskId);
    return this.taskOf(taskId, description);
  }

  /** The organization's tasks, newest first (at most TASK_LIST_LIMIT among its newest TASK_LIST_SCAN_LIMIT runs; no further pages). */
  async list(orgId: string): Promise<McpTask[]> {
    if (!/^[A-Za-z0-9_.-]+$/.test(orgId)) return [];
    const query = `WorkflowType = 'runAutomation' AND ${SEARCH_ATTRIBUTES.orgId.name} = '${orgId}'`;
    const tasks: McpTask[] = [];
    let scanned = 0;
    for await (const execution of this.options.client.workflow.list({ query })) {
      if (++scanned > TASK_LIST_SCAN_LIMIT) break;
      if (!isTaskRun(execution.memo as RunMemo | undefined, orgId)) continue;
      // Open runs show as working here: telling input_required apart takes a query per run (tasks/get does).
      const status = statusOfClosed(execution.status.name) ?? 'working';
      tasks.push(this.shape(execution.workflowId, status, execution.startTime, execution.closeTime));
      if (tasks.length >= TASK_LIST_LIMIT) break;
    }
    return tasks;
  }

  /** Requests cancellation of the run; the task answers `cancelled` at once (the run closes shortly). */
  async cancel(orgId: string, taskId: string): Promise<McpTask> {
    const task = await this.get(orgId, taskId);
    if (TERMINAL.includes(task.status)) throw new TaskTerminalError(`task ${taskId} is already ${task.status}; it cannot be cancelled`);
    await this.options.client.workflow.getHandle(taskId).cancel();
    return { ...task, status: 'cancelled', statusMessage: 'the run was cancelled', lastUpdatedAt: new Date().toISOString() };
  }

  /**
   * The `tools/call` result of the task, once its run closed: waits for an open run at most the
   * result wait (or until `signal` aborts), then throws TaskNotReadyError.
   */
  async result(orgId: string, taskId: string, signal?: AbortSignal): Promise<ToolResult> {
    const description = await this.describe(orgId, taskId);
    let view;
    if (description.status.name === 'RUNNING') {
      const waitMs = this.options.resultWaitMs ?? TASK_RESULT_WAIT_MS;
      const outcome = await Promise.race([
        this.options.runs.waitFor(taskId, waitMs),
        new Promise<{ done: false }>((resolve) => signal?.addEventListener('abort', () => resolve({ done: false }), { once: true })),
      ]);
      if (!outcome.done) throw new TaskNotReadyError(`task ${taskId} is still ${(await this.get(orgId, taskId)).status}; poll tasks/get and ask again`);
      view = outcome.view;
    } else {
      view = await this.options.runs.view(taskId);
      if (!view) throw new TaskNotFoundError(taskId);
    }
    if (description.status.name === 'CANCELLED' || view.error === 'the run was cancelled') {
      return { isError: true, message: 'the run was cancelled', value: { runId: taskId, status: 'CANCELLED', error: 'the run was cancelled' } };
    }
    const output = await this.options.workflowTools.output(view, this.options.services);
    if (output.isError) {
      const message = typeof output.value.error === 'string' ? output.value.error : 'the run failed';
      return { isError: true, message, value: output.value, content: output.content };
    }
    return { isError: false, value: output.value, content: output.content };
  }

  private async describe(orgId: string, taskId: string): Promise<WorkflowExecutionDescription> {
    try {
      const description = await this.options.client.workflow.getHandle(taskId).describe();
      if (description.type !== 'runAutomation' || !isTaskRun(description.memo as RunMemo | undefined, orgId)) throw new TaskNotFoundError(taskId);
      return description;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new TaskNotFoundError(taskId);
      throw err;
    }
  }

  private async taskOf(taskId: string, description: WorkflowExecutionDescription): Promise<McpTask> {
    const closed = statusOfClosed(description.status.name);
    if (closed) {
      const message = closed === 'failed' ? (await this.options.runs.view(taskId))?.error : undefined;
      return this.shape(taskId, closed, description.startTime, description.closeTime, message);
    }
    const view = await this.options.runs.view(taskId);
    if (view?.status === 'PAUSED' && view.waitingOn?.kind === 'approval') {
      return this.shape(taskId, 'input_required', description.startTime, undefined, view.waitingOn.message);
    }
    return this.shape(taskId, 'working', description.startTime, undefined, view?.status === 'PAUSED' ? 'waiting for a timer' : undefined);
  }

  private shape(taskId: string, status: TaskStatus, started: Date, closed?: Date, statusMessage?: string): McpTask {
    return {
      taskId, status, ttl: null, createdAt: started.toISOString(), lastUpdatedAt: (closed ?? started).toISOString(),
      pollInterval: this.pollInterval, ...(statusMessage ? { statusMessage } : {}),
    };
  }
}

function statusOfClosed(temporalStatus: string): TaskStatus | undefined {
  switch (temporalStatus) {
    case 'RUNNING':
      return undefined;
    case 'COMPLETED':
      return 'completed';
    case 'CANCELLED':
      return 'cancelled';
    default:
      return 'failed';
  }
}
