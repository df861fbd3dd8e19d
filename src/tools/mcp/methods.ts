/**
 * The MCP method table of the tool gateway: one handler per method name, each given the request's
 * params and the call it belongs to, answering the JSON-RPC `result` or throwing (the endpoint maps
 * the error). A method absent from the table is "method not found" (-32601): the task methods are
 * in it only when this gateway has tasks.
 */
import {
  InitializeParamsSchema, ListTasksParamsSchema, RELATED_TASK_META_KEY, TaskAugmentationSchema, TaskIdParamsSchema, type JsonRpcMessage,
} from '../../contracts/mcp';
import type { AuditSource, McpApprovalEvent, ToolCallEvent } from '../../audit/audit-trail';
import type { RuntimePrincipal } from '../../crypto/runtime-tokens';
import type { LazyAbortController } from '../../common/lazy-abort';
import type { ToolDispatcher } from '../dispatcher';
import { ToolCallError, type ToolResult, type ToolServer } from '../server';
import { ErrorCode, IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_META_KEY, JsonRpcError, negotiateProtocolVersion, parseToolsCallParams } from './jsonrpc';
import type { McpRequestHeaders } from './era';
import type { WorkflowTasks } from './tasks';
import { isUnanswerable, legacyRefusal } from './unanswerable';

export const SERVER_VERSION = '0.1.0';

/** One request to the endpoint (a batch's entries share it), as the HTTP route received it. */
export interface McpCall {
  /** the tool server the request's path names */
  server: ToolServer;
  principal: RuntimePrincipal;
  /** aborts when the caller goes away */
  caller: LazyAbortController;
  /** the request's id, for logs and internal-error messages */
  requestId?: string;
  /** the request's `X-Pf-Forward-*` headers, reduced by forwardableHeaders() */
  forwardHeaders(): Readonly<Record<string, string>>;
  /** the standard MCP request headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name), which the 2026 era checks */
  headers?: McpRequestHeaders;
  /** where the request came from, for the audit trail */
  source?: AuditSource;
}

/** Where tool calls and approvals given through tasks are recorded (the audit trail, docs/audit.md): awaited before the answer leaves. */
export interface ToolCallRecorder {
  toolCalled(event: ToolCallEvent, source: AuditSource): Promise<unknown>;
  approvalDecided(event: McpApprovalEvent, source: AuditSource): Promise<unknown>;
}

/** A message's params (`{}` when it has none) and the call it came with; `idempotencyKey`: the one the request's header gives it. */
export type MethodHandler = (
  params: NonNullable<JsonRpcMessage['params']>, call: McpCall, idempotencyKey: string | undefined,
) => Promise<Record<string, unknown>>;

export interface McpMethodsDeps {
  tools: Pick<ToolDispatcher, 'list' | 'call'>;
  /** MCP Tasks; without it the task methods are not found */
  tasks?: WorkflowTasks;
  /** records every tools/call (the audit trail); without it none is recorded */
  audit?: ToolCallRecorder;
}

const invalidParams = (message: string): JsonRpcError => new JsonRpcError(ErrorCode.INVALID_PARAMS, message);

/** The MCP `tools/call` result: structured content, its JSON as text unless the server gave content blocks. */
export function callResult(result: ToolResult): Record<string, unknown> {
  const value = result.isError ? { ...result.value, error: result.message } : result.value;
  return { content: result.content ?? [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value, isError: result.isError };
}

/**
 * A tools/call's idempotency key: its own `_meta` key (`idempotencyKey` or `io.flowgate/idempotencyKey`),
 * else the one the request's `Idempotency-Key` header gives it (`requestKey`). Without either the
 * call has none: a JSON-RPC id is no identity (clients count from 1 again on every connection).
 */
function callKey(meta: Record<string, unknown> | undefined, requestKey: string | undefined): string | undefined {
  const own = meta?.idempotencyKey ?? meta?.[IDEMPOTENCY_META_KEY];
  if (own === undefined) return requestKey;
  if (typeof own !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(own)) throw invalidParams('params._meta.idempotencyKey must be 1 to 255 visible ASCII characters');
  return own;
}

export const NO_SOURCE: AuditSource = { sourceIp: null, userAgent: null, requestId: null };

/** The code an audit record keeps of a call that did not run, and whether it was refused rather than failed. */
function errorFacts(error: unknown): { errorCode: string; refused: boolean } {
  if (error instanceof ToolCallError) return { errorCode: error.code, refused: error.code === 'UNKNOWN_TOOL' };
  if (error instanceof JsonRpcError) return { errorCode: String(error.code), refused: error.code === ErrorCode.INVALID_PARAMS || error.code === ErrorCode.METHOD_NOT_FOUND };
  return { errorCode: 'INTERNAL', refused: false };
}

/**
 * Runs one tools/call and records it (server, tool, a digest of the arguments, duration, outcome)
 * before its answer goes back; the arguments themselves are never recorded.
 */
async function recorded<T extends Record<string, unknown>>(
  audit: ToolCallRecorder | undefined, call: McpCall, tool: string, args: unknown, task: boolean, run: () => Promise<{ answer: T; isError: boolean }>,
): Promise<T> {
  const started = performance.now();
  const { member } = call.principal;
  const base = { orgId: call.principal.orgId, keyId: call.principal.keyId, ...(member ? { member } : {}), server: call.server.name, tool, arguments: args, ...(task ? { task } : {}) };
  try {
    const { answer, isError } = await run();
    await audit?.toolCalled({ ...base, durationMs: performance.now() - started, ran: true, isError }, call.source ?? NO_SOURCE);
    return answer;
  } catch (error) {
    await audit?.toolCalled({ ...base, durationMs: performance.now() - started, ran: false, ...errorFacts(error) }, call.source ?? NO_SOURCE);
    throw error;
  }
}

function toolMethods({ tools, tasks, audit }: McpMethodsDeps): [string, MethodHandler][] {
  return [
    ['initialize', async (params, { server }) => {
      const init = InitializeParamsSchema.safeParse(params);
      if (!init.success) throw invalidParams('initialize needs params.protocolVersion');
      return {
        protocolVersion: negotiateProtocolVersion(init.data.protocolVersion),
        capabilities: {
          tools: { listChanged: false },
          // only a server with task-capable tools advertises tasks (the methods answer on every path)
          ...(tasks?.supports(server) ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {}),
        },
        serverInfo: { name: `flowgate/${server.name}`, version: SERVER_VERSION },
        instructions: server.description,
      };
    }],
    ['ping', () => Promise.resolve({})],
    ['tools/list', async (params, { server, principal }) => {
      if (Array.isArray(params)) throw invalidParams('tools/list takes no positional params');
      return { tools: await tools.list(principal.orgId, server.name) };
    }],
    ['tools/call', async (params, call, requestKey) => {
      const toolCall = parseToolsCallParams(params);
      if (!toolCall) throw invalidParams('tools/call needs params.name (a string) and params.arguments (an object)');
      const idempotencyKey = callKey(toolCall._meta, requestKey);
      const { server, principal, caller } = call;
      const augmentation = 'task' in params ? TaskAugmentationSchema.safeParse(params) : undefined;
      if (augmentation?.success && augmentation.data.task) {
        // MCP Tasks: servers answer -32601 to a task-augmented call on a tool without task support
        const ttl = augmentation.data.task.ttl;
        return recorded(audit, call, toolCall.name, toolCall.arguments, true, async () => {
          if (!tasks?.supportsTool(server, toolCall.name)) throw new JsonRpcError(ErrorCode.METHOD_NOT_FOUND, `${toolCall.name} on /${server.name} cannot run as a task`);
          const task = await tasks.create(principal.orgId, server, toolCall.name, toolCall.arguments ?? {}, {
            idempotencyKey, forwardHeaders: call.forwardHeaders(), ttl, keyId: principal.keyId,
          });
          return { answer: { task }, isError: false };
        });
      }
      return recorded(audit, call, toolCall.name, toolCall.arguments, false, async () => {
        // the server this request resolved: the call does not look it up again
        const result = await tools.call(principal.orgId, server, toolCall.name, toolCall.arguments ?? {}, {
          idempotencyKey, keyId: principal.keyId,
          forwardHeaders: call.forwardHeaders(),
          // made only if the tool reads its signal (most never do)
          get signal() {
            return caller.signal;
          },
        }).catch((error: unknown) => {
          // a plain call cannot be asked for an approval: a tool whose run may wait on one must run as a task
          throw isUnanswerable(error) ? legacyRefusal(error) : error;
        });
        return { answer: callResult(result), isError: result.isError };
      });
    }],
  ];
}

function taskMethods(tasks: WorkflowTasks): [string, MethodHandler][] {
  const taskId = (method: string, params: unknown): string => {
    const parsed = TaskIdParamsSchema.safeParse(params);
    if (!parsed.success) throw invalidParams(`${method} needs params.taskId (a string)`);
    return parsed.data.taskId;
  };
  return [
    ['tasks/get', async (params, { principal }) => ({ ...await tasks.get(principal.orgId, taskId('tasks/get', params)) })],
    ['tasks/result', async (params, { principal, caller }) => {
      const id = taskId('tasks/result', params);
      const result = await tasks.result(principal.orgId, id, caller.signal);
      return { ...callResult(result), _meta: { [RELATED_TASK_META_KEY]: { taskId: id } } };
    }],
    ['tasks/cancel', async (params, { principal }) => ({ ...await tasks.cancel(principal.orgId, taskId('tasks/cancel', params)) })],
    ['tasks/list', async (params, { principal }) => {
      const list = ListTasksParamsSchema.safeParse(params);
      if (!list.success) throw invalidParams('tasks/list takes an optional params.cursor (a string)');
      return { ...await tasks.list(principal.orgId, list.data.cursor) };
    }],
  ];
}

/** The method table: the tool methods, and the task methods when there are tasks. */
export function mcpMethods(deps: McpMethodsDeps): ReadonlyMap<string, MethodHandler> {
  return new Map([...toolMethods(deps), ...(deps.tasks ? taskMethods(deps.tasks) : [])]);
}
