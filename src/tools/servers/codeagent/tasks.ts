/**
 * MCP Tasks of the code-agent tools that wait (`codeagent_create_agent`, `codeagent_create_run`,
 * `codeagent_stream_run`): the gateway side. A task-augmented call makes the call that starts the
 * agent's run here, through the dispatcher like a plain call (create_agent, create_run; stream_run
 * only reads the run, which checks that it exists), then starts the waiter workflow
 * (workflows/codeagent-task.ts) whose id is the task id. Everything after that is read from
 * Temporal (src/tools/mcp/tasks.ts), so any replica answers for the task.
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
  CODEAGENT_SERVER, CODEAGENT_TASK_WORKFLOW, type CodeAgentTaskInput, type CodeAgentTaskMemo, type CodeAgentTaskTool,
} from '../../../common/codeagent-task';
import { SEARCH_ATTRIBUTES } from '../../../common/search-attributes';
import type { ToolCaller } from '../../dispatcher';
import { describeIssues } from '../../define-tool';
import { ToolCallError, ToolFailure, type ToolResult } from '../../server';
import { StreamRunInput } from './schemas';
import type { codeAgentTask } from '../../../../workflows/codeagent-task';

const CodeAgentTaskMemoSchema = z.object({
  codeAgentTask: z.object({ orgId: z.string(), tool: z.string(), agentId: z.string(), runId: z.string(), ttlMs: z.number() }).loose(),
}).loose();

/** The task's memo when the workflow is a code-agent task of `orgId`. */
export function codeAgentTaskMemo(memo: unknown, orgId: string): CodeAgentTaskMemo['codeAgentTask'] | undefined {
  const parsed = CodeAgentTaskMemoSchema.safeParse(memo);
  return parsed.success && parsed.data.codeAgentTask.orgId === orgId ? parsed.data.codeAgentTask as CodeAgentTaskMemo['codeAgentTask'] : undefined;
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
    const base = { orgId, taskId, tool, pcid, ttlMs: call.ttlMs };
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
      const secrets = Object.values((args.envVars ?? {}) as Record<string, unknown>).filter((v): v is string => typeof v === 'string' && v !== '');
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
    const memo: CodeAgentTaskMemo = { codeAgentTask: { orgId, tool, agentId: input.agentId, runId: input.runId, ttlMs: call.ttlMs } };
    try {
      await this.options.client.workflow.start<typeof codeAgentTask>(CODEAGENT_TASK_WORKFLOW, {
        workflowId: taskId, taskQueue: this.options.taskQueue, args: [input], workflowExecutionTimeout: call.ttlMs,
        workflowIdReusePolicy: 'REJECT_DUPLICATE', memo: memo as unknown as Record<string, unknown>,
        typedSearchAttributes: [{ key: SEARCH_ATTRIBUTES.orgId, value: orgId }],
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
    const handle = this.options.client.workflow.getHandle<typeof codeAgentTask>(taskId);
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
  const scrub = (value: unknown): unknown => {
    if (typeof value === 'string') return secrets.reduce((text, secret) => text.split(secret).join('[redacted]'), value);
    if (Array.isArray(value)) return value.map(scrub);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrub(v)]));
    return value;
  };
  return { ...result, value: scrub(result.value) as Record<string, unknown>, ...(result.isError ? { message: scrub(result.message) as string } : {}) } as ToolResult;
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
  const value = detail !== null && typeof detail === 'object' && !Array.isArray(detail) ? detail as Record<string, unknown> : {};
  return { isError: true, message, value: { ...value, error: message } };
}
