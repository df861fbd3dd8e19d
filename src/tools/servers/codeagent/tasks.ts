/**
 * MCP Tasks of the code-agent tools that wait (`codeagent_create_agent`, `codeagent_create_run`,
 * `codeagent_stream_run`): the gateway side. A task-augmented call makes the call that starts the
 * agent's run here, through the dispatcher like a plain call (create_agent, create_run; stream_run
 * only reads the run, which checks that it exists), then starts the waiter workflow
 * (workflows/codeagent-task.ts) whose id is the task id. Everything after that is read from
 * Temporal (src/tools/mcp/tasks.ts, through codeAgentTaskKind below), so any replica answers for the task.
 *
 * The call's arguments (prompt, envVars values) never reach Temporal: the waiter gets the ids, the
 * connection's PCID and the starting call's answer.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  ApplicationFailure, CancelledFailure, TerminatedFailure, TimeoutFailure, WorkflowExecutionAlreadyStartedError, WorkflowFailedError, type Client,
} from '@temporalio/client';
import { z } from 'zod';
import {
  CODEAGENT_SERVER, CODEAGENT_TASK_TOOLS, CODEAGENT_TASK_WORKFLOW, isCodeAgentTaskTool, type CodeAgentTaskInput, type CodeAgentTaskMemo, type CodeAgentTaskTool,
} from '../../../common/codeagent-task';
import { startPriority } from '../../../common/priority';
import { ENGINE_LEVEL } from '../../../common/run-types';
import { SEARCH_ATTRIBUTES } from '../../../common/search-attributes';
import type { CodeAgentTaskWorkflow } from '../../../common/workflow-contracts';
import type { ToolCaller } from '../../dispatcher';
import { describeIssues } from '../../define-tool';
import { ToolCallError, ToolFailure, type ToolResult } from '../../server';
import type { TaskKind } from '../../mcp/task-kind';
import { StreamRunInput } from './schemas';

const CodeAgentTaskMemoSchema = z.object({
  codeAgentTask: z.object({ orgId: z.string(), tool: z.enum(CODEAGENT_TASK_TOOLS), agentId: z.string(), runId: z.string(), ttlMs: z.number() }).loose(),
}).loose();

/** The task's memo when the workflow is a code-agent task of `orgId`. */
export function codeAgentTaskMemo(memo: unknown, orgId: string): CodeAgentTaskMemo['codeAgentTask'] | undefined {
  const parsed = CodeAgentTaskMemoSchema.safeParse(memo);
  return parsed.success && parsed.data.codeAgentTask.orgId === orgId ? parsed.data.codeAgentTask : undefined;
}

const CreatedAgentSchema = z.object({ agent: z.object({ id: z.string() }).loose(), run: z.object({ id: z.string() }).loose() }).loose();
const CreatedRunSchema = z.object({ run: z.object({ id: z.string() }).loose() }).loose();
const StreamTaskArgs = StreamRunInput.extend({ PCID: z.string().min(1) });

export interface CodeAgentTaskStarterOptions {
  client: Client;
  taskQueue: string;
  tools: ToolCaller;
}

export interface CodeAgentTaskCall {
  idempotencyKey?: string;
  forwardHeaders: Readonly<Record<string, string>>;
  ttlMs: number;
}

export class CodeAgentTasks {
  constructor(private readonly options: CodeAgentTaskStarterOptions) {}

  /**
   * Starts the task of a task-augmented call and answers its id. With an idempotency key the task id
   * follows from it: a retry after the first call answered finds that task and starts nothing.
   * Arguments the tool refuses, or an unusable connection, are thrown (ToolCallError) as for a
   * plain call; a backend that refused the starting call (409 agent_busy, say) makes a task that
   * is failed at once, its result that tool error.
   */
  async start(orgId: string, tool: CodeAgentTaskTool, args: Record<string, unknown>, call: CodeAgentTaskCall, exists: (taskId: string) => Promise<boolean>): Promise<string> {
    const taskId = call.idempotencyKey === undefined ? `catask_${randomUUID()}`
      : `catask_${createHash('sha256').update(`${orgId}\n${call.idempotencyKey}`).digest('hex').slice(0, 32)}`;
    if (call.idempotencyKey !== undefined && await exists(taskId)) return taskId;
    const pcid = typeof args.PCID === 'string' ? args.PCID : '';
    const base = { orgId, taskId, tool, pcid, ttlMs: call.ttlMs, engine: ENGINE_LEVEL };
    let input: CodeAgentTaskInput;
    if (tool === 'codeagent_stream_run') {
      const parsed = StreamTaskArgs.safeParse(args);
      if (!parsed.success) throw new ToolCallError('INVALID_ARGUMENTS', describeIssues(tool, parsed.error));
      const { id, runId } = parsed.data;
      // reading the run checks the connection and that the run exists before anyone waits on it
      const run = await this.call(orgId, 'codeagent_get_run', { PCID: pcid, id, runId }, call);
      input = { ...base, agentId: id, runId, ...(parsed.data['Last-Event-ID'] === undefined ? {} : { lastEventId: parsed.data['Last-Event-ID'] }), ...refusal(run) };
    } else {
      // the backend's answer goes into history: envVars values it might echo are cut out first
      const secrets = Object.values<unknown>(Object(args.envVars ?? {})).filter((v): v is string => typeof v === 'string' && v !== '');
      const result = scrubbed(await this.call(orgId, tool, args, call), secrets);
      if (result.isError) {
        input = { ...base, agentId: typeof args.id === 'string' ? args.id : '', runId: '', refused: { message: result.message, value: result.value } };
      } else if (tool === 'codeagent_create_agent') {
        const created = CreatedAgentSchema.safeParse(result.value);
        if (!created.success) throw new ToolFailure('the codeagent backend answered create agent without an agent and run id', { code: 'invalid_response' });
        input = { ...base, agentId: created.data.agent.id, runId: created.data.run.id, started: result.value };
      } else {
        const created = CreatedRunSchema.safeParse(result.value);
        if (!created.success) throw new ToolFailure('the codeagent backend answered create run without a run id', { code: 'invalid_response' });
        input = { ...base, agentId: String(args.id), runId: created.data.run.id, started: result.value };
      }
    }
    const memo = { codeAgentTask: { orgId, tool, agentId: input.agentId, runId: input.runId, ttlMs: call.ttlMs } } satisfies CodeAgentTaskMemo;
    try {
      await this.options.client.workflow.start<CodeAgentTaskWorkflow>(CODEAGENT_TASK_WORKFLOW, {
        workflowId: taskId, taskQueue: this.options.taskQueue, args: [input], workflowExecutionTimeout: call.ttlMs,
        workflowIdReusePolicy: 'REJECT_DUPLICATE', memo,
        typedSearchAttributes: [{ key: SEARCH_ATTRIBUTES.orgId, value: orgId }],
        staticSummary: `code-agent task ${tool}${input.agentId ? ` · agent ${input.agentId}` : ''}${input.runId ? ` · run ${input.runId}` : ''}`,
        staticDetails: `MCP task ${taskId} of organization ${orgId}: the code agent's run, waited for by this workflow${input.refused ? ' (the backend refused it)' : ''}.`,
        priority: startPriority(orgId),
      });
    } catch (error) {
      if (!(call.idempotencyKey !== undefined && error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
    return taskId;
  }

  private call(orgId: string, tool: string, args: Record<string, unknown>, call: CodeAgentTaskCall): Promise<ToolResult> {
    return this.options.tools.call(orgId, CODEAGENT_SERVER, tool, args, {
      ...(call.idempotencyKey === undefined ? {} : { idempotencyKey: call.idempotencyKey }), forwardHeaders: call.forwardHeaders,
    });
  }

  /**
   * The tool result of the waiter: a closed one's (`waitMs` undefined), or an open one's once it
   * closes within `waitMs` (undefined if it does not, or `signal` aborts). A failed waiter's
   * message is the task's statusMessage.
   */
  async result(taskId: string, waitMs: number | undefined, signal?: AbortSignal): Promise<ToolResult | undefined> {
    const handle = this.options.client.workflow.getHandle<CodeAgentTaskWorkflow>(taskId);
    const abort = new AbortController();
    const timer = waitMs === undefined ? undefined : setTimeout(() => abort.abort(), Math.max(0, waitMs));
    const stop = (): void => abort.abort();
    signal?.addEventListener('abort', stop, { once: true });
    try {
      const value = await this.options.client.connection.withAbortSignal(abort.signal, () => handle.result());
      return { isError: false, value };
    } catch (error) {
      if (abort.signal.aborted) return undefined;
      if (!(error instanceof WorkflowFailedError)) throw error;
      return failedResult(error.cause);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
    }
  }
}

/** `result` with every occurrence of a secret in its strings replaced. */
function scrubbed(result: ToolResult, secrets: readonly string[]): ToolResult {
  if (secrets.length === 0) return result;
  const scrubText = (text: string): string => secrets.reduce((scrubbing, secret) => scrubbing.split(secret).join('[redacted]'), text);
  const scrubRecord = (record: object): Record<string, unknown> => Object.fromEntries(Object.entries(record).map(([k, v]) => [k, scrub(v)]));
  const scrub = (value: unknown): unknown => {
    if (typeof value === 'string') return scrubText(value);
    if (Array.isArray(value)) return value.map(scrub);
    if (value !== null && typeof value === 'object') return scrubRecord(value);
    return value;
  };
  return result.isError ? { ...result, value: scrubRecord(result.value), message: scrubText(result.message) } : { ...result, value: scrubRecord(result.value) };
}

function refusal(result: ToolResult): Pick<CodeAgentTaskInput, 'refused'> {
  return result.isError ? { refused: { message: result.message, value: result.value } } : {};
}

/** A failed waiter as the tool's error result. */
export function failedResult(cause: Error | undefined): Extract<ToolResult, { isError: true }> {
  if (cause instanceof CancelledFailure) return { isError: true, message: 'the task was cancelled', value: { status: 'CANCELLED', error: 'the task was cancelled' } };
  if (cause instanceof TimeoutFailure) return { isError: true, message: 'the task outlived its ttl', value: { error: 'the task outlived its ttl' } };
  if (cause instanceof TerminatedFailure) return { isError: true, message: 'the task was terminated', value: { error: 'the task was terminated' } };
  const message = cause?.message ?? 'the task failed';
  const detail = cause instanceof ApplicationFailure ? cause.details?.[0] : undefined;
  const value: object = detail !== null && typeof detail === 'object' && !Array.isArray(detail) ? detail : {};
  return { isError: true, message, value: { ...value, error: message } };
}

/**
 * The `codeagent` server's task kind: the tools that wait (CODEAGENT_TASK_TOOLS) may run as MCP
 * tasks, each a waiter workflow (CodeAgentTasks.start) that polls the backend until the agent's
 * run ends; an open task says which run it waits for.
 */
export function codeAgentTaskKind(tasks: CodeAgentTasks): TaskKind {
  return {
    server: CODEAGENT_SERVER,
    workflowType: CODEAGENT_TASK_WORKFLOW,
    cancelledMessage: 'the task was cancelled',
    runsAsTask: isCodeAgentTaskTool,
    owns: (memo, orgId) => codeAgentTaskMemo(memo, orgId) !== undefined,
    ttlOf(memo) {
      const parsed = z.object({ codeAgentTask: z.object({ ttlMs: z.unknown() }).loose() }).loose().safeParse(memo);
      return parsed.success && typeof parsed.data.codeAgentTask.ttlMs === 'number' ? parsed.data.codeAgentTask.ttlMs : null;
    },
    start(orgId, toolName, args, call) {
      if (!isCodeAgentTaskTool(toolName)) throw new ToolCallError('UNKNOWN_TOOL', `${toolName} on /${CODEAGENT_SERVER} cannot run as a task`);
      return tasks.start(orgId, toolName, args, call, call.exists);
    },
    async state(orgId, taskId, workflow, closed) {
      if (closed) {
        const result = closed === 'failed' ? await tasks.result(taskId, undefined) : undefined;
        return { status: closed, statusMessage: result?.isError ? result.message : undefined };
      }
      const memo = codeAgentTaskMemo(workflow.memo, orgId);
      return { status: 'working', statusMessage: memo ? `waiting for the agent's run ${memo.runId}` : undefined };
    },
    result: (_orgId, taskId, workflow, waitMs, signal) => tasks.result(taskId, workflow.status.name === 'RUNNING' ? waitMs : undefined, signal),
  };
}
