/**
 * The 2026-07-28 method table of the tool gateway (era.ts decides which table answers), and the
 * Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) over the same Temporal-backed tasks
 * as the 2025 task methods (tasks.ts). There is no `initialize`, `ping` or `tasks/list` here, nor
 * `tasks/result`: a method not in this table is -32601 (HTTP 404).
 *   - `server/discover`: the versions flowgate speaks in this era, the capabilities of the path
 *     (the Tasks extension on a path with task-capable tools), the server's description.
 *   - `tools/list`: the tools (without the 2025 `execution` field), with cache hints (listCacheHint).
 *   - `tools/call`: first its `Mcp-Param-*` headers are checked against the arguments, for a tool whose
 *     schema declares `x-mcp-header` (checkParamHeaders: -32020, HTTP 400, on a mismatch); then
 *     a task-capable tool, from a client whose request declares the Tasks extension,
 *     runs as a task and answers at once with the task (`resultType: "task"`); a workflow tool
 *     otherwise follows its run and asks for an approval it waits on as `input_required` (Multi
 *     Round-Trip Requests, round-trip.ts; a call that declares no elicitation is refused, before its
 *     run starts, a workflow that holds an approval: -32021, unanswerable.ts); any other call
 *     answers its result, as in the 2025 era, or the `input_required` a remote server answered (passed on as it is; the caller's next call
 *     takes its `inputResponses` and `requestState` back to the remote unchanged: roundTripOf).
 *   - `tasks/get`: the task; with the pending approval as `inputRequests` while it waits on one;
 *     once done, with the result inline (a run that failed is a tool error: `completed` with
 *     `isError`; `failed` with `error` only when no result can be read).
 *   - `tasks/update`: answers to the task's `inputRequests` (an approval: the decision of the
 *     token's API key, recorded exactly as `POST …/approval` records it, and like it recorded to be
 *     applied when the run resumes if the run does not answer in time); an empty acknowledgement.
 *   - `tasks/cancel`: asks the run to cancel; an empty acknowledgement, also for a task already done.
 * Task methods from a request whose capabilities do not declare the extension are -32021.
 * Every result carries `resultType` and names the server in `_meta`.
 */
import {
  MODERN_PROTOCOL_VERSIONS, SERVER_INFO_META_KEY, TASKS_EXTENSION, TaskIdParamsSchema, TaskUpdateParamsSchema, type McpTask,
  type JsonRpcMessage,
} from '../../contracts/mcp';
import type { InputRoundTrip, ToolResult, ToolServer } from '../server';
import type { ToolEntry } from '../server';
import { fieldOf, isObjectLike, isRecord } from '../../common/narrow';
import { headerMismatchError, type ModernRequest } from './era';
import { ErrorCode, IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_META_KEY, JsonRpcError, parseToolsCallParams } from './jsonrpc';
import { callResult, NO_SOURCE, SERVER_VERSION, type McpCall, type McpMethodsDeps } from './methods';
import { paramHeaderMismatch, scanDeclarations } from './param-headers';
import { applyInputResponses, callWithRoundTrips, inputRequestsOf } from './round-trip';
import { TaskTerminalError } from './task-errors';
import { isUnanswerable, modernRefusal } from './unanswerable';

/**
 * How long a client may keep a server's tools/list, and who may share it. A built-in server's list
 * is fixed by flowgate's code and configuration: it changes only when flowgate is deployed again,
 * and is the same for every organization (public, an hour). An organization's own servers — its
 * published workflows (`workflows`), its OpenAPI and remote servers — change whenever someone of
 * the organization publishes or edits one, and belong to it alone (private, five seconds: a tool
 * published or removed shows within that; the gateway itself reads them afresh on every list,
 * a remote's list at most a minute old, or as old as the remote's own `ttlMs` allows: then no
 * more than what remains of it is told, see ToolServer.listFreshForMs).
 */
export const BUILT_IN_LIST_TTL_MS = 3_600_000;
export const ORGANIZATION_LIST_TTL_MS = 5_000;

export function listCacheHint(server: ToolServer): { ttlMs: number; cacheScope: 'public' | 'private' } {
  if (server.embedded) return { ttlMs: BUILT_IN_LIST_TTL_MS, cacheScope: 'public' };
  // a remote server's list is no fresher than what remains of the remote's own ttlMs (whatever its cacheScope: the server is the organization's)
  const remaining = server.listFreshForMs?.();
  return { ttlMs: remaining === undefined ? ORGANIZATION_LIST_TTL_MS : Math.min(ORGANIZATION_LIST_TTL_MS, remaining), cacheScope: 'private' };
}

/** A 2026 method: the message's params, the call, its idempotency key and the request's envelope. */
export type ModernHandler = (
  params: NonNullable<JsonRpcMessage['params']>, call: McpCall, idempotencyKey: string | undefined, request: ModernRequest,
) => Promise<Record<string, unknown>>;

const invalidParams = (message: string): JsonRpcError => new JsonRpcError(ErrorCode.INVALID_PARAMS, message);
const ACK = {};

const declaresTasks = (request: ModernRequest): boolean => request.capabilities.extensions?.[TASKS_EXTENSION] !== undefined;

function requireTasks(request: ModernRequest, method: string): void {
  if (declaresTasks(request)) return;
  throw new JsonRpcError(ErrorCode.MISSING_CLIENT_CAPABILITY, `${method} needs the ${TASKS_EXTENSION} extension in the request's _meta clientCapabilities`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
}

/** A 2026 result: its `resultType` (complete unless the handler said otherwise) and the server's identity in `_meta`. */
export function modernResult(result: Record<string, unknown>, server: ToolServer): Record<string, unknown> {
  const meta = isObjectLike(result._meta) ? result._meta : {};
  return { resultType: 'complete', ...result, _meta: { [SERVER_INFO_META_KEY]: { name: `flowgate/${server.name}`, version: SERVER_VERSION }, ...meta } };
}

/** A tool as the 2026 era lists it: no `execution` (the 2025 task vocabulary). */
function modernTool(tool: ToolEntry): Record<string, unknown> {
  const { execution: _execution, ...rest } = tool;
  return rest;
}

/** The task fields of the extension: integer milliseconds under their 2026 names. */
function taskFields(task: McpTask): Record<string, unknown> {
  return {
    taskId: task.taskId, status: task.status, ...(task.statusMessage ? { statusMessage: task.statusMessage } : {}),
    createdAt: task.createdAt, lastUpdatedAt: task.lastUpdatedAt, ttlMs: task.ttl, pollIntervalMs: task.pollInterval,
  };
}

function callKey(meta: Record<string, unknown> | undefined, requestKey: string | undefined): string | undefined {
  const own = meta?.idempotencyKey ?? meta?.[IDEMPOTENCY_META_KEY];
  if (own === undefined) return requestKey;
  if (typeof own !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(own)) throw invalidParams('params._meta.idempotencyKey must be 1 to 255 visible ASCII characters');
  return own;
}

/**
 * Refuses (HeaderMismatch) a call whose `Mcp-Param-*` headers disagree with its arguments, when the
 * tool's schema as this server lists it declares `x-mcp-header`. Only remote servers pass a schema
 * through as its author wrote it; built-in, workflow and OpenAPI tools have schemas flowgate makes,
 * and are not checked (a workflow tool's call would otherwise pay a registry read for nothing). A
 * tool whose declarations are invalid is one a 2026 client drops: its headers are not checked (remote
 * tools like it are not listed at all). The schema is read from the list the remote server keeps
 * (keptTools), so the check asks the remote nothing.
 */
async function checkParamHeaders(tools: McpMethodsDeps['tools'], call: McpCall, name: string, args: unknown): Promise<void> {
  if (call.server.embedded || call.server.keptTools === undefined) return;
  const listed = call.server.keptTools() ?? await tools.list(call.principal.orgId, call.server.name);
  const entry = listed.find((tool) => tool.name === name);
  const scan = entry === undefined ? undefined : scanDeclarations(entry.inputSchema);
  if (!scan?.valid || scan.declarations.length === 0) return;
  const mismatch = paramHeaderMismatch(scan.declarations, args, call.headers?.params ?? {});
  if (mismatch) throw headerMismatchError(mismatch.message, mismatch.header, mismatch.body);
}

/** The client capabilities a remote may ask input of: what the caller declared of them is passed on. */
const INPUT_CAPABILITIES = ['elicitation', 'sampling', 'roots'];

/**
 * What a plain 2026 call hands a tool about Multi Round-Trip Requests: the caller's capabilities
 * for input, and on a call that answers an earlier `input_required` its `inputResponses` (an object)
 * and `requestState` (a string), which flowgate does not read (they are the remote's).
 */
function roundTripOf(params: unknown, request: ModernRequest): InputRoundTrip {
  const inputResponses = fieldOf(params, 'inputResponses');
  const requestState = fieldOf(params, 'requestState');
  if (inputResponses !== undefined && !isRecord(inputResponses)) throw invalidParams('params.inputResponses must be an object');
  if (requestState !== undefined && typeof requestState !== 'string') throw invalidParams('params.requestState must be a string');
  const capabilities = Object.fromEntries(INPUT_CAPABILITIES.filter((name) => request.capabilities[name] !== undefined).map((name) => [name, request.capabilities[name]]));
  return {
    capabilities, ...(inputResponses === undefined ? {} : { inputResponses }),
    ...(requestState === undefined ? {} : { requestState }),
  };
}

const inlineResult = (result: ToolResult): Record<string, unknown> => ({ resultType: 'complete', ...callResult(result) });

export function modernMethods({ tools, tasks, audit }: McpMethodsDeps): ReadonlyMap<string, ModernHandler> {
  const taskId = (method: string, params: unknown): string => {
    const parsed = TaskIdParamsSchema.safeParse(params);
    if (!parsed.success) throw invalidParams(`${method} needs params.taskId (a string)`);
    return parsed.data.taskId;
  };
  const table: [string, ModernHandler][] = [
    ['server/discover', async (_params, { server }) => ({
      supportedVersions: [...MODERN_PROTOCOL_VERSIONS],
      capabilities: { tools: { listChanged: false }, ...(tasks?.supports(server) ? { extensions: { [TASKS_EXTENSION]: {} } } : {}) },
      instructions: server.description,
      ...listCacheHint(server),
    })],
    ['tools/list', async (params, { server, principal }) => {
      if (Array.isArray(params)) throw invalidParams('tools/list takes no positional params');
      return { tools: (await tools.list(principal.orgId, server.name)).map(modernTool), ...listCacheHint(server) };
    }],
    ['tools/call', async (params, call, requestKey, request) => {
      const toolCall = parseToolsCallParams(params);
      if (!toolCall) throw invalidParams('tools/call needs params.name (a string) and params.arguments (an object)');
      await checkParamHeaders(tools, call, toolCall.name, toolCall.arguments ?? {});
      const idempotencyKey = callKey(toolCall._meta, requestKey);
      const { server, principal, caller } = call;
      if (tasks && declaresTasks(request) && tasks.supportsTool(server, toolCall.name)) {
        const task = await tasks.create(principal.orgId, server, toolCall.name, toolCall.arguments ?? {}, { idempotencyKey, forwardHeaders: call.forwardHeaders(), keyId: principal.keyId });
        return { resultType: 'task', ...taskFields(task) };
      }
      if (tasks?.asksForInput(server, toolCall.name)) {
        const answered = await callWithRoundTrips({
          tasks, principal, server: server.name, tool: toolCall.name, args: toolCall.arguments ?? {}, requestState: fieldOf(params, 'requestState'),
          inputResponses: fieldOf(params, 'inputResponses'),
          canElicit: request.capabilities.elicitation !== undefined, idempotencyKey, forwardHeaders: call.forwardHeaders(), signal: caller.signal,
          ...(audit ? { audit: { recorder: audit, source: call.source ?? NO_SOURCE } } : {}),
        });
        return 'inputRequired' in answered ? answered.inputRequired : callResult(answered.result);
      }
      const result = await tools.call(principal.orgId, server, toolCall.name, toolCall.arguments ?? {}, {
        idempotencyKey, keyId: principal.keyId, forwardHeaders: call.forwardHeaders(), roundTrip: roundTripOf(params, request),
        get signal() {
          return caller.signal;
        },
      }).catch((error: unknown) => {
        throw isUnanswerable(error) ? modernRefusal(error) : error;
      });
      return !result.isError && result.inputRequired ? result.inputRequired : callResult(result);
    }],
  ];
  if (tasks) {
    table.push(
      ['tasks/get', async (params, { principal }, _key, request) => {
        requireTasks(request, 'tasks/get');
        const { task, result, approval } = await tasks.detailed(principal.orgId, taskId('tasks/get', params));
        if (approval) return { ...taskFields(task), inputRequests: inputRequestsOf(task.taskId, approval) };
        if (result) return { ...taskFields({ ...task, status: 'completed' }), result: inlineResult(result) };
        if (task.status === 'failed') {
          return { ...taskFields(task), error: { code: ErrorCode.INTERNAL_ERROR, message: task.statusMessage ?? 'the task failed' } };
        }
        return taskFields(task);
      }],
      ['tasks/update', async (params, { principal, source }, _key, request) => {
        requireTasks(request, 'tasks/update');
        const update = TaskUpdateParamsSchema.safeParse(params);
        if (!update.success) throw invalidParams('tasks/update needs params.taskId (a string) and params.inputResponses (an object)');
        const { taskId: id, inputResponses } = update.data;
        // describe alone (the answer must not wait for a worker): the run itself refuses a step it does not wait on
        await tasks.owned(principal.orgId, id);
        await applyInputResponses(tasks, principal, id, undefined, inputResponses, audit ? { recorder: audit, source: source ?? NO_SOURCE } : undefined);
        return ACK;
      }],
      ['tasks/cancel', async (params, { principal }, _key, request) => {
        requireTasks(request, 'tasks/cancel');
        try {
          await tasks.cancel(principal.orgId, taskId('tasks/cancel', params));
        } catch (error) {
          if (!(error instanceof TaskTerminalError)) throw error;
        }
        return ACK;
      }],
    );
  }
  return new Map(table);
}
