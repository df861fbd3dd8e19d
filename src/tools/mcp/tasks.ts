/**
 * MCP Tasks (protocol 2025-11-25, experimental there) backed by Temporal, generic over the task
 * kinds the tool servers register (task-kind.ts; the built-in ones are listed in
 * src/tools/servers/task-kinds.ts): a task-augmented `tools/call` on a tool of a kind starts that
 * kind's workflow and answers at once; the task id is the workflow id. A workflow is a task when
 * a kind of its workflow type owns its memo (that memo names the organization, and the ttl).
 * A task lives its ttl (the requested one, clamped to the maximum; stored in the workflow's memo):
 * past it, it is unknown, exactly like a missing one, whatever its workflow does.
 * Nothing is kept in this process: every answer is read from Temporal (describe, the kind's
 * queries, the result, visibility for tasks/list), so a task outlives the gateway that created it
 * and any replica can answer for it. A task belongs to the organization whose token started it:
 * another organization's task id is unknown, exactly like a missing one.
 * One piece: every task method goes through the same describe, ownership and ttl rule (describe()),
 * which is what keeps organizations apart; split, each part would have to repeat it.
 */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { optionalTsToDate, tsToDate } from '@temporalio/common/lib/time';
import { decodeMapFromPayloads } from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import { z } from 'zod';
import type { McpTask, TaskStatus } from '../../contracts/mcp';
import { SEARCH_ATTRIBUTES } from '../../common/search-attributes';
import { ToolCallError, type ToolResult, type ToolServer } from '../server';
import { TaskCursorError, TaskNotFoundError, TaskNotReadyError, TaskTerminalError } from './task-errors';
import type { PendingApproval, TaskApprovalAnswer, TaskCallContext, TaskDecider, TaskDecideOutcome, TaskKind } from './task-kind';

export { TaskCursorError, TaskNotFoundError, TaskNotReadyError, TaskTerminalError } from './task-errors';
export type { McpTask, TaskStatus } from '../../contracts/mcp';
export type { PendingApproval, TaskCallContext, TaskKind } from './task-kind';

export const DEFAULT_TASK_POLL_INTERVAL_MS = 1000;
/**
 * How long `tasks/result` blocks on an open task before telling the caller to keep polling: below
 * the official SDK client's default 60 s request timeout, so a waiting client hears the answer.
 */
export const TASK_RESULT_WAIT_MS = 50_000;
/** Tasks per tasks/list page unless configured (FLOWGATE_TASKS_PAGE_SIZE). */
export const DEFAULT_TASK_PAGE_SIZE = 50;
/** The longest ttl a task gets unless configured (FLOWGATE_TASKS_MAX_TTL_SECONDS), and the ttl of a task that asked for none. */
export const DEFAULT_TASK_MAX_TTL_MS = 7 * 24 * 3600 * 1000;
/** The shortest ttl a task gets. */
export const MIN_TASK_TTL_MS = 1000;
/** Workflows read from visibility per tasks/list call at most: workflows that are no task (trigger runs, plain invocations) are there too and are skipped. */
const TASK_LIST_SCAN_LIMIT = 1000;
const VISIBILITY_PAGE = 100;

export interface WorkflowTasksOptions {
  client: Client;
  /** the task kinds, in order: the first that owns a workflow answers for it */
  kinds: readonly TaskKind[];
  /** the longest ttl (ms); default DEFAULT_TASK_MAX_TTL_MS */
  maxTtlMs?: number;
  pollIntervalMs?: number;
  resultWaitMs?: number;
  pageSize?: number;
}

function expired(created: Date, ttl: number | null, now = Date.now()): boolean {
  return ttl !== null && now >= created.getTime() + ttl;
}

/** The tasks/list cursor: a visibility page token and how many of that page's entries were already looked at. */
const CursorSchema = z.object({ p: z.string().max(3000).nullable(), s: z.number().int().min(0).max(VISIBILITY_PAGE) });
type Cursor = z.infer<typeof CursorSchema>;

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(text: string): Cursor {
  try {
    const parsed = CursorSchema.safeParse(JSON.parse(Buffer.from(text, 'base64url').toString('utf8')));
    if (parsed.success) return parsed.data;
  } catch {
    // fall through
  }
  throw new TaskCursorError('tasks/list: the cursor is not one this server handed out');
}

const STATUS_BY_CODE: Record<number, string> = { 1: 'RUNNING', 2: 'COMPLETED', 3: 'FAILED', 4: 'CANCELLED', 5: 'TERMINATED', 6: 'CONTINUED_AS_NEW', 7: 'TIMED_OUT' };

/** A task's workflow and the kind that owns it. */
interface FoundTask {
  workflow: WorkflowExecutionDescription;
  kind: TaskKind;
}

export class WorkflowTasks {
  constructor(private readonly options: WorkflowTasksOptions) {}

  private get pollInterval(): number {
    return this.options.pollIntervalMs ?? DEFAULT_TASK_POLL_INTERVAL_MS;
  }

  /** How long `tasks/result` waits for an open task. */
  get resultWaitMs(): number {
    return this.options.resultWaitMs ?? TASK_RESULT_WAIT_MS;
  }

  /** Whether some tool of this server may be task-augmented (the `tasks` capability of its path). */
  supports(server: ToolServer | string): boolean {
    return this.options.kinds.some((kind) => serves(kind, server, undefined));
  }

  /** Whether `tools/call` of this tool may be task-augmented. */
  supportsTool(server: ToolServer | string, toolName: string): boolean {
    return this.kindOfTool(server, toolName) !== undefined;
  }

  /** Whether a task of this tool may wait on an approval (its kind reads pending approvals). */
  asksForInput(server: ToolServer | string, toolName: string): boolean {
    return this.kindOfTool(server, toolName)?.pendingApproval !== undefined;
  }

  private kindOfTool(server: ToolServer | string, toolName: string): TaskKind | undefined {
    return this.options.kinds.find((kind) => serves(kind, server, toolName));
  }

  /** The kind whose task the workflow is, for `orgId`. */
  private kindOf(type: string | undefined, memo: unknown, orgId: string): TaskKind | undefined {
    return this.options.kinds.find((kind) => kind.workflowType === type && kind.owns(memo, orgId));
  }

  /** The ttl (ms) a task gets for the requested one: clamped to [MIN_TASK_TTL_MS, the maximum]; none asked: the maximum. */
  effectiveTtl(requested: number | undefined): number {
    const max = this.options.maxTtlMs ?? DEFAULT_TASK_MAX_TTL_MS;
    if (requested === undefined || !Number.isFinite(requested)) return max;
    return Math.min(max, Math.max(MIN_TASK_TTL_MS, Math.round(requested)));
  }

  /** Starts the workflow behind a task-augmented call and answers its task (working). */
  async create(orgId: string, server: ToolServer | string, toolName: string, args: Record<string, unknown>, call: TaskCallContext): Promise<McpTask> {
    const kind = this.kindOfTool(server, toolName);
    if (!kind) throw new ToolCallError('UNKNOWN_TOOL', `${toolName} on /${typeof server === 'string' ? server : server.name} cannot run as a task`);
    const exists = async (taskId: string): Promise<boolean> => {
      try {
        await this.describe(orgId, taskId);
        return true;
      } catch (error) {
        if (error instanceof TaskNotFoundError) return false;
        throw error;
      }
    };
    const taskId = await kind.start(orgId, toolName, args, { ...call, ttlMs: this.effectiveTtl(call.ttl), exists, ...(typeof server === 'string' ? {} : { server }) });
    return this.get(orgId, taskId);
  }

  async get(orgId: string, taskId: string): Promise<McpTask> {
    return this.taskOf(orgId, taskId, await this.describe(orgId, taskId));
  }

  /**
   * One page of the organization's tasks, newest first, and the cursor of the next page (absent
   * on the last). A page reads at most TASK_LIST_SCAN_LIMIT workflows from visibility, so it may
   * hold fewer tasks than the page size and still have a next page.
   */
  async list(orgId: string, cursorText?: string): Promise<{ tasks: McpTask[]; nextCursor?: string }> {
    const cursor = cursorText === undefined ? { p: null, s: 0 } : decodeCursor(cursorText);
    if (!/^[A-Za-z0-9_.-]+$/.test(orgId)) return { tasks: [] };
    const pageSize = this.options.pageSize ?? DEFAULT_TASK_PAGE_SIZE;
    const types = [...new Set(this.options.kinds.map((kind) => kind.workflowType))];
    if (types.length === 0) return { tasks: [] };
    const query = `(${types.map((type) => `WorkflowType = '${type}'`).join(' OR ')}) AND ${SEARCH_ATTRIBUTES.orgId.name} = '${orgId}'`;
    const { client } = this.options;
    const converter = client.workflow.options.loadedDataConverter;
    const tasks: McpTask[] = [];
    /** the page being read, as the cursor names it (null: the first) */
    let page = cursor.p;
    let skip = cursor.s;
    let scanned = 0;
    for (;;) {
      let response: temporal.api.workflowservice.v1.IListWorkflowExecutionsResponse;
      try {
        response = await client.workflowService.listWorkflowExecutions({ namespace: client.options.namespace, query, pageSize: VISIBILITY_PAGE, nextPageToken: page === null ? undefined : Buffer.from(page, 'base64url') });
      } catch (error) {
        if (page !== null && /token|page/i.test(error instanceof Error ? error.message : '')) throw new TaskCursorError('tasks/list: the cursor is not one this server handed out');
        throw error;
      }
      const executions = response.executions ?? [];
      const next = response.nextPageToken && response.nextPageToken.length > 0 ? Buffer.from(response.nextPageToken).toString('base64url') : null;
      for (let i = skip; i < executions.length; i++) {
        const execution = executions[i]!;
        scanned++;
        const memo = await decodeMapFromPayloads(converter, execution.memo?.fields).then((m) => m ?? {}, () => undefined);
        if (!memo) continue; // through the client's codec: sealed under a data key this process lacks, no task of its
        const type = execution.type?.name ?? undefined;
        const created = tsToDate(execution.startTime!);
        const kind = this.kindOf(type, memo, orgId);
        const ttl = kind ? kind.ttlOf(memo) : null;
        if (kind && !expired(created, ttl)) {
          // Open workflows show as working here: telling input_required apart takes a query per run (tasks/get does).
          const status = statusOfClosed(STATUS_BY_CODE[execution.status ?? 1] ?? 'RUNNING') ?? 'working';
          tasks.push(this.shape(execution.execution?.workflowId ?? '', status, created, ttl, optionalTsToDate(execution.closeTime)));
        }
        if (tasks.length >= pageSize || scanned >= TASK_LIST_SCAN_LIMIT) {
          const rest: Cursor | null = i + 1 < executions.length ? { p: page, s: i + 1 } : next === null ? null : { p: next, s: 0 };
          return { tasks, ...(rest ? { nextCursor: encodeCursor(rest) } : {}) };
        }
      }
      if (next === null) return { tasks };
      page = next;
      skip = 0;
    }
  }

  /**
   * The task as the Tasks extension's `tasks/get` shows it: with the approval its run waits on
   * (input_required), or the `tools/call` result once its workflow closed (read at once, never waited for).
   */
  async detailed(orgId: string, taskId: string): Promise<{ task: McpTask; result?: ToolResult; approval?: PendingApproval }> {
    const found = await this.describe(orgId, taskId);
    const task = await this.taskOf(orgId, taskId, found);
    const { kind, workflow } = found;
    if (task.status === 'input_required' && kind.pendingApproval && workflow.status.name === 'RUNNING') {
      const approval = await kind.pendingApproval(taskId);
      return { task, ...(approval ? { approval } : {}) };
    }
    if (task.status !== 'completed' && task.status !== 'failed') return { task };
    const result = await kind.result(orgId, taskId, workflow, 0);
    return { task, ...(result ? { result } : {}) };
  }

  /** Requests cancellation of the workflow (Temporal takes it without a worker); the task answers `cancelled` at once. */
  async cancel(orgId: string, taskId: string): Promise<McpTask> {
    const { workflow, kind } = await this.describe(orgId, taskId);
    const closed = statusOfClosed(workflow.status.name);
    if (closed) throw new TaskTerminalError(`task ${taskId} is already ${closed}; it cannot be cancelled`);
    await this.options.client.workflow.getHandle(taskId).cancel().catch((error: unknown) => {
      throw error instanceof WorkflowNotFoundError ? new TaskTerminalError(`task ${taskId} has ended; it cannot be cancelled`) : error; // closed since describe
    });
    return { ...this.shape(taskId, 'cancelled', workflow.startTime, kind.ttlOf(workflow.memo), undefined, kind.cancelledMessage), lastUpdatedAt: new Date().toISOString() };
  }

  /**
   * The `tools/call` result of the task, once its workflow closed: waits for an open one at most
   * the result wait (or until `signal` aborts), then throws TaskNotReadyError.
   */
  async result(orgId: string, taskId: string, signal?: AbortSignal): Promise<ToolResult> {
    const { workflow, kind } = await this.describe(orgId, taskId);
    const result = await kind.result(orgId, taskId, workflow, this.resultWaitMs, signal);
    if (!result) throw new TaskNotReadyError(`task ${taskId} is still ${(await this.get(orgId, taskId)).status}; poll tasks/get and ask again`);
    return result;
  }

  /** Throws TaskNotFoundError unless `taskId` is a live task of the organization: describe alone, no worker needed. */
  async owned(orgId: string, taskId: string): Promise<void> {
    await this.describe(orgId, taskId);
  }

  /** The approval the task's run waits on now, if it does (the task is then input_required). */
  async pendingApproval(orgId: string, taskId: string): Promise<PendingApproval | undefined> {
    const { workflow, kind } = await this.describe(orgId, taskId);
    if (!kind.pendingApproval || workflow.status.name !== 'RUNNING') return undefined;
    return kind.pendingApproval(taskId);
  }

  /**
   * An approval decision given through the task (an elicitation answer): decided by the API key
   * behind the caller's runtime token, under exactly the rules of `POST …/approval` with that key
   * (it may name one of the step's approvers; it counts as one approval).
   */
  async decide(orgId: string, decider: TaskDecider, taskId: string, stepIndex: number, answer: TaskApprovalAnswer): Promise<TaskDecideOutcome> {
    const { kind } = await this.describe(orgId, taskId);
    if (!kind.decide) throw new TaskNotFoundError(taskId);
    return kind.decide(decider, taskId, stepIndex, answer);
  }

  /** The task's workflow and kind, if it is a task of the organization that has not outlived its ttl. */
  private async describe(orgId: string, taskId: string): Promise<FoundTask> {
    let workflow: WorkflowExecutionDescription;
    try {
      workflow = await this.options.client.workflow.getHandle(taskId).describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new TaskNotFoundError(taskId);
      throw err;
    }
    const kind = this.kindOf(workflow.type, workflow.memo, orgId);
    if (!kind || expired(workflow.startTime, kind.ttlOf(workflow.memo))) throw new TaskNotFoundError(taskId);
    return { workflow, kind };
  }

  private async taskOf(orgId: string, taskId: string, { workflow, kind }: FoundTask): Promise<McpTask> {
    const closed = statusOfClosed(workflow.status.name);
    const state = await kind.state(orgId, taskId, workflow, closed);
    return this.shape(taskId, state.status, workflow.startTime, kind.ttlOf(workflow.memo), workflow.closeTime, state.statusMessage);
  }

  private shape(taskId: string, status: TaskStatus, started: Date, ttl: number | null, closed?: Date, statusMessage?: string): McpTask {
    return {
      taskId, status, ttl, createdAt: started.toISOString(), lastUpdatedAt: (closed ?? started).toISOString(),
      pollInterval: this.pollInterval, ...(statusMessage ? { statusMessage } : {}),
    };
  }
}

/**
 * Whether `kind` runs tools of `server` as tasks (`toolName` undefined: some tool of it): a kind
 * with a fixed server by its path, another by what the resolved server is (servesTool).
 */
function serves(kind: TaskKind, server: ToolServer | string, toolName: string | undefined): boolean {
  const name = typeof server === 'string' ? server : server.name;
  if (kind.server !== undefined) return kind.server === name && (toolName === undefined || kind.runsAsTask(toolName));
  return typeof server !== 'string' && kind.servesTool !== undefined && kind.servesTool(server, toolName);
}

/** The task status a closed workflow's Temporal status means; undefined while it runs. */
export function statusOfClosed(temporalStatus: string): TaskStatus | undefined {
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
