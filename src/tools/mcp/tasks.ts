/**
 * MCP Tasks (protocol 2025-11-25, experimental there) backed by Temporal: a task-augmented
 * `tools/call` on a long-running tool starts its workflow and answers at once; the task id is the
 * workflow id. Three kinds of tools run as tasks:
 * - the `workflows` server's tools: the task is the run (a `runAutomation` workflow);
 * - `agent_invoke` on `agent-management`: the task is the invocation (an `invokeAgent` workflow);
 * - the code-agent tools that wait (`codeagent_create_agent`, `_create_run`, `_stream_run`): the
 *   task is a waiter (a `codeAgentTask` workflow, src/tools/servers/codeagent/tasks.ts) that polls the
 *   backend until the agent's run ends.
 * A task lives its ttl (the requested one, clamped to the maximum; stored in the workflow's memo):
 * past it, it is unknown, exactly like a missing one, whatever its workflow does.
 * Nothing is kept in this process: every answer is read from Temporal (describe, the `state`
 * query, the result, visibility for tasks/list), so a task outlives the gateway that created it
 * and any replica can answer for it. A task belongs to the organization whose token started it:
 * another organization's task id is unknown, exactly like a missing one. Only workflows started by
 * a task-augmented call (or a workflow tool) are tasks.
 */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { optionalTsToDate, tsToDate } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import { z } from 'zod';
import type { AgentService, InvocationView } from '../../agents/service';
import type { RunMemo } from '../../common/run-memo';
import type { ApprovalDecision, WaitingOn } from '../../common/run-types';
import { SEARCH_ATTRIBUTES } from '../../common/search-attributes';
import type { RunService } from '../../runs/run-service';
import { CODEAGENT_SERVER, CODEAGENT_TASK_WORKFLOW, isCodeAgentTaskTool } from '../../common/codeagent-task';
import { ToolCallError, type ToolResult, type ToolServices } from '../server';
import { codeAgentTaskMemo, type CodeAgentTasks } from '../servers/codeagent/tasks';
import { AGENT_INVOKE_TOOL, AGENT_MANAGEMENT_SERVER_NAME, agentInvokeInput, unprefixedAgentTool } from '../servers/agent-management';
import { describeIssues } from '../define-tool';
import { WORKFLOWS_SERVER, type WorkflowTools } from '../servers/workflows/index';

export const TaskStatusSchema = z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

/** The `task` field of a task-augmented request. */
export const TaskCreationParamsSchema = z.object({ ttl: z.number().optional(), pollInterval: z.number().optional() }).loose();
/** `tasks/get`, `tasks/result` and `tasks/cancel` params. */
export const TaskIdParamsSchema = z.object({ taskId: z.string().min(1).max(200) }).loose();
export const ListTasksParamsSchema = z.object({ cursor: z.string().max(4096).optional() }).loose();

export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

export interface McpTask {
  taskId: string;
  status: TaskStatus;
  /** ms from createdAt the task lives; null (tasks made before ttl was kept): as long as Temporal keeps the closed workflow */
  ttl: number | null;
  createdAt: string;
  lastUpdatedAt: string;
  pollInterval: number;
  statusMessage?: string;
}

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
/** Workflows read from visibility per tasks/list call at most: trigger runs and plain invocations are there too and are skipped. */
const TASK_LIST_SCAN_LIMIT = 1000;
const VISIBILITY_PAGE = 100;
const TERMINAL: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];
/** Runs started by a workflow tool carry this `startedBy` prefix. */
const TOOL_STARTED_BY = `tool:${WORKFLOWS_SERVER}/`;
const RUN_TYPE = 'runAutomation';
const AGENT_TYPE = 'invokeAgent';
const CODEAGENT_TYPE = CODEAGENT_TASK_WORKFLOW;

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

/** A tasks/list cursor this gateway did not hand out. */
export class TaskCursorError extends Error {
  override readonly name = 'TaskCursorError';
}

/** What a task-augmented call carries besides its arguments. */
export interface TaskCallContext {
  idempotencyKey?: string;
  /** the requested ttl (ms) */
  ttl?: number;
  forwardHeaders: Readonly<Record<string, string>>;
}

/** The approval a task's run waits on (input_required). */
export type PendingApproval = Extract<WaitingOn, { kind: 'approval' }>;

export interface WorkflowTasksOptions {
  client: Client;
  runs: RunService;
  workflowTools: WorkflowTools;
  /** agent invocations as tasks; without it agent_invoke is not task-capable here */
  agents?: AgentService;
  services: Pick<ToolServices, 'blobs' | 'signer'>;
  /** the code-agent tools that wait as tasks; without it they are not task-capable here */
  codeAgents?: CodeAgentTasks;
  /** the longest ttl (ms); default DEFAULT_TASK_MAX_TTL_MS */
  maxTtlMs?: number;
  pollIntervalMs?: number;
  resultWaitMs?: number;
  pageSize?: number;
}

const InvocationMemoSchema = z.object({ agent: z.object({ orgId: z.string(), mcpTask: z.literal(true), taskTtlMs: z.number().optional() }).loose() }).loose();

function isRunTask(memo: unknown, orgId: string): boolean {
  const m = memo as RunMemo | undefined;
  return m?.orgId === orgId && typeof m.startedBy === 'string' && m.startedBy.startsWith(TOOL_STARTED_BY);
}

function isAgentTask(memo: unknown, orgId: string): boolean {
  const parsed = InvocationMemoSchema.safeParse(memo);
  return parsed.success && parsed.data.agent.orgId === orgId;
}

function isTask(type: string | undefined, memo: unknown, orgId: string): boolean {
  if (type === RUN_TYPE) return isRunTask(memo, orgId);
  if (type === AGENT_TYPE) return isAgentTask(memo, orgId);
  if (type === CODEAGENT_TYPE) return codeAgentTaskMemo(memo, orgId) !== undefined;
  return false;
}

/** The ttl a task was given (ms), from its workflow's memo; null for tasks made before ttl was kept. */
function ttlOf(type: string | undefined, memo: unknown): number | null {
  let ttl: unknown;
  if (type === RUN_TYPE) ttl = (memo as RunMemo | undefined)?.taskTtlMs;
  else if (type === AGENT_TYPE) ttl = (memo as { agent?: { taskTtlMs?: unknown } } | undefined)?.agent?.taskTtlMs;
  else if (type === CODEAGENT_TYPE) ttl = (memo as { codeAgentTask?: { ttlMs?: unknown } } | undefined)?.codeAgentTask?.ttlMs;
  return typeof ttl === 'number' ? ttl : null;
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
  supports(serverName: string): boolean {
    return serverName === WORKFLOWS_SERVER || (serverName === AGENT_MANAGEMENT_SERVER_NAME && this.options.agents !== undefined)
      || (serverName === CODEAGENT_SERVER && this.options.codeAgents !== undefined);
  }

  /** Whether `tools/call` of this tool may be task-augmented. */
  supportsTool(serverName: string, toolName: string): boolean {
    if (serverName === WORKFLOWS_SERVER) return true;
    if (serverName === CODEAGENT_SERVER) return this.options.codeAgents !== undefined && isCodeAgentTaskTool(toolName);
    return serverName === AGENT_MANAGEMENT_SERVER_NAME && this.options.agents !== undefined && unprefixedAgentTool(toolName) === AGENT_INVOKE_TOOL;
  }

  /** The ttl (ms) a task gets for the requested one: clamped to [MIN_TASK_TTL_MS, the maximum]; none asked: the maximum. */
  effectiveTtl(requested: number | undefined): number {
    const max = this.options.maxTtlMs ?? DEFAULT_TASK_MAX_TTL_MS;
    if (requested === undefined || !Number.isFinite(requested)) return max;
    return Math.min(max, Math.max(MIN_TASK_TTL_MS, Math.round(requested)));
  }

  /** Starts the workflow behind a task-augmented call and answers its task (working). */
  async create(orgId: string, serverName: string, toolName: string, args: Record<string, unknown>, call: TaskCallContext): Promise<McpTask> {
    const taskTtlMs = this.effectiveTtl(call.ttl);
    if (serverName === CODEAGENT_SERVER && this.options.codeAgents) {
      const tool = toolName;
      if (!isCodeAgentTaskTool(tool)) throw new ToolCallError('UNKNOWN_TOOL', `${toolName} on /${CODEAGENT_SERVER} cannot run as a task`);
      const exists = async (taskId: string): Promise<boolean> => {
        try {
          await this.describe(orgId, taskId);
          return true;
        } catch (error) {
          if (error instanceof TaskNotFoundError) return false;
          throw error;
        }
      };
      const taskId = await this.options.codeAgents.start(orgId, tool, args, { ...call, ttlMs: taskTtlMs }, exists);
      return this.get(orgId, taskId);
    }
    if (serverName === AGENT_MANAGEMENT_SERVER_NAME && this.options.agents) {
      const parsed = agentInvokeInput(Number.MAX_SAFE_INTEGER).safeParse(args);
      if (!parsed.success) throw new ToolCallError('INVALID_ARGUMENTS', describeIssues(AGENT_INVOKE_TOOL, parsed.error));
      const { waitSeconds: _ignored, ...request } = parsed.data;
      const view = await this.options.agents.invoke(orgId, {
        ...request, forwardHeaders: { ...call.forwardHeaders }, startedBy: 'agent-management', waitSeconds: 0, asTask: true, taskTtlMs,
      });
      return this.get(orgId, view.invocationId);
    }
    const { runId } = await this.options.workflowTools.start(orgId, toolName, args, call.idempotencyKey, { taskTtlMs });
    return this.get(orgId, runId);
  }

  async get(orgId: string, taskId: string): Promise<McpTask> {
    const description = await this.describe(orgId, taskId);
    return this.taskOf(orgId, taskId, description);
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
    const query = `(WorkflowType = '${RUN_TYPE}' OR WorkflowType = '${AGENT_TYPE}' OR WorkflowType = '${CODEAGENT_TYPE}') AND ${SEARCH_ATTRIBUTES.orgId.name} = '${orgId}'`;
    const { client } = this.options;
    const converter = client.workflow.options.loadedDataConverter.payloadConverter;
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
        const memo = Object.fromEntries(Object.entries(execution.memo?.fields ?? {}).map(([k, v]) => [k, converter.fromPayload(v)]));
        const type = execution.type?.name ?? undefined;
        const created = tsToDate(execution.startTime!);
        const ttl = ttlOf(type, memo);
        if (isTask(type, memo, orgId) && !expired(created, ttl)) {
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

  /** Requests cancellation of the workflow; the task answers `cancelled` at once (the workflow closes shortly). */
  async cancel(orgId: string, taskId: string): Promise<McpTask> {
    const task = await this.get(orgId, taskId);
    if (TERMINAL.includes(task.status)) throw new TaskTerminalError(`task ${taskId} is already ${task.status}; it cannot be cancelled`);
    await this.options.client.workflow.getHandle(taskId).cancel();
    const type = (await this.describe(orgId, taskId)).type;
    const message = type === AGENT_TYPE ? 'the invocation was cancelled' : type === CODEAGENT_TYPE ? 'the task was cancelled' : 'the run was cancelled';
    return { ...task, status: 'cancelled', statusMessage: message, lastUpdatedAt: new Date().toISOString() };
  }

  /**
   * The `tools/call` result of the task, once its workflow closed: waits for an open one at most
   * the result wait (or until `signal` aborts), then throws TaskNotReadyError.
   */
  async result(orgId: string, taskId: string, signal?: AbortSignal): Promise<ToolResult> {
    const description = await this.describe(orgId, taskId);
    const waitMs = this.resultWaitMs;
    if (description.type === AGENT_TYPE) return this.agentResult(orgId, taskId, description, waitMs, signal);
    if (description.type === CODEAGENT_TYPE) return this.codeAgentResult(taskId, description, waitMs, signal);
    let view;
    if (description.status.name === 'RUNNING') {
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

  /** The approval the task's run waits on now, if it does (the task is then input_required). */
  async pendingApproval(orgId: string, taskId: string): Promise<PendingApproval | undefined> {
    const description = await this.describe(orgId, taskId);
    if (description.type !== RUN_TYPE || description.status.name !== 'RUNNING') return undefined;
    const view = await this.options.runs.view(taskId);
    return view?.status === 'PAUSED' && view.waitingOn?.kind === 'approval' ? view.waitingOn : undefined;
  }

  /**
   * An approval decision given through the task (an elicitation answer): decided by the API key
   * behind the caller's runtime token, under exactly the rules of `POST …/approval` with that key
   * (it may name one of the step's approvers; it counts as one approval).
   */
  async decide(orgId: string, keyId: string, taskId: string, stepIndex: number, answer: { decision: 'approve' | 'reject'; approver?: string; comment?: string }): Promise<{ ok: true; decision: ApprovalDecision } | { ok: false; message: string }> {
    const description = await this.describe(orgId, taskId);
    if (description.type !== RUN_TYPE) throw new TaskNotFoundError(taskId);
    const outcome = await this.options.runs.decide(taskId, { ...answer, stepIndex, actor: `api-key:${keyId}`, via: 'api' });
    return outcome.ok ? outcome : { ok: false, message: outcome.message };
  }

  private async agentResult(orgId: string, taskId: string, description: WorkflowExecutionDescription, waitMs: number, signal?: AbortSignal): Promise<ToolResult> {
    const agents = this.options.agents;
    if (!agents) throw new TaskNotFoundError(taskId);
    const view = await agents.wait(orgId, taskId, description.status.name === 'RUNNING' ? waitMs : 0, signal);
    if (view.status === 'RUNNING') throw new TaskNotReadyError(`task ${taskId} is still working; poll tasks/get and ask again`);
    return agentToolResult(view, description.status.name === 'CANCELLED');
  }

  private async codeAgentResult(taskId: string, description: WorkflowExecutionDescription, waitMs: number, signal?: AbortSignal): Promise<ToolResult> {
    const codeAgents = this.options.codeAgents;
    if (!codeAgents) throw new TaskNotFoundError(taskId);
    const result = await codeAgents.result(taskId, description.status.name === 'RUNNING' ? waitMs : undefined, signal);
    if (!result) throw new TaskNotReadyError(`task ${taskId} is still working; poll tasks/get and ask again`);
    return result;
  }

  /** The task's workflow, if it is a task of the organization that has not outlived its ttl. */
  private async describe(orgId: string, taskId: string): Promise<WorkflowExecutionDescription> {
    try {
      const description = await this.options.client.workflow.getHandle(taskId).describe();
      if (!isTask(description.type, description.memo, orgId)) throw new TaskNotFoundError(taskId);
      if (expired(description.startTime, ttlOf(description.type, description.memo))) throw new TaskNotFoundError(taskId);
      if (description.type === AGENT_TYPE && !this.options.agents) throw new TaskNotFoundError(taskId);
      if (description.type === CODEAGENT_TYPE && !this.options.codeAgents) throw new TaskNotFoundError(taskId);
      return description;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new TaskNotFoundError(taskId);
      throw err;
    }
  }

  private async taskOf(orgId: string, taskId: string, description: WorkflowExecutionDescription): Promise<McpTask> {
    const closed = statusOfClosed(description.status.name);
    const ttl = ttlOf(description.type, description.memo);
    if (description.type === AGENT_TYPE) {
      const ended = closed === 'failed' ? await this.options.agents?.wait(orgId, taskId, 0) : undefined;
      const message = ended && ended.status !== 'COMPLETE' ? ended.error : undefined;
      return this.shape(taskId, closed ?? 'working', description.startTime, ttl, description.closeTime, message);
    }
    if (description.type === CODEAGENT_TYPE) {
      const result = closed === 'failed' ? await this.options.codeAgents?.result(taskId, undefined) : undefined;
      const memo = codeAgentTaskMemo(description.memo, orgId);
      const message = closed ? result?.isError ? result.message : undefined : memo ? `waiting for the agent's run ${memo.runId}` : undefined;
      return this.shape(taskId, closed ?? 'working', description.startTime, ttl, description.closeTime, message);
    }
    if (closed) {
      const message = closed === 'failed' ? (await this.options.runs.view(taskId))?.error : undefined;
      return this.shape(taskId, closed, description.startTime, ttl, description.closeTime, message);
    }
    const view = await this.options.runs.view(taskId);
    if (view?.status === 'PAUSED' && view.waitingOn?.kind === 'approval') {
      return this.shape(taskId, 'input_required', description.startTime, ttl, undefined, view.waitingOn.message);
    }
    return this.shape(taskId, 'working', description.startTime, ttl, undefined, view?.status === 'PAUSED' ? 'waiting for a timer' : undefined);
  }

  private shape(taskId: string, status: TaskStatus, started: Date, ttl: number | null, closed?: Date, statusMessage?: string): McpTask {
    return {
      taskId, status, ttl, createdAt: started.toISOString(), lastUpdatedAt: (closed ?? started).toISOString(),
      pollInterval: this.pollInterval, ...(statusMessage ? { statusMessage } : {}),
    };
  }
}

/** A closed invocation as agent_invoke's result: the answer, or a tool error saying why it ended. */
function agentToolResult(view: InvocationView, cancelled: boolean): ToolResult {
  if (view.status === 'COMPLETE') return { isError: false, value: { ...view } };
  const error = cancelled ? 'the invocation was cancelled' : view.error ?? `the invocation ended ${view.status}`;
  const status = cancelled ? 'CANCELLED' : view.status;
  return { isError: true, message: error, value: { ...view, status, error } };
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
