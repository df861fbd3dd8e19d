/**
 * The tool gateway (contract 4.5 and 7; ARCHITECTURE.md, "Tool gateway"): `POST
 * {toolsBasePath}/<server>` speaks JSON-RPC 2.0 with a runtime token, and is a stateless MCP
 * Streamable HTTP endpoint: `initialize`, `ping`, `tools/list`, `tools/call`, notifications (202),
 * one JSON reply per POST, `GET`/`DELETE` 405. Every failure leaves as a JSON-RPC error object; a
 * tool that ran and failed is a result with `isError: true`. MCP Tasks (`tasks/get`,
 * `tasks/result`, `tasks/list`, `tasks/cancel`, task-augmented `tools/call`) are answered from
 * Temporal by src/tools/mcp/tasks.ts. The one streamed answer: `tasks/result` from a client that
 * accepts `text/event-stream` gets an SSE stream carrying `notifications/tasks/status` while it
 * waits, an `elicitation/create` request when the run waits on an approval, then the result. The
 * client's answer to that request (a JSON-RPC response POSTed to any replica, answered 202) is
 * an approval decision by the token's API key. Bodies are limited per server before they are read
 * (4 MiB; codeagent, whose tools take images, about 110 MiB: ToolServer.maxRequestBytes), and one
 * over 4 MiB is parsed off the event loop (json-thread.ts) within a budget of such bodies per process.
 */
import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { ToolCallError, type ToolResult, type ToolServer } from '../../tools';
import { DEFAULT_MAX_REQUEST_BYTES } from '../../tools/server';
import { forwardableHeaders } from '../../tools/forward-headers';
import {
  ErrorCode, IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_META_KEY, InitializeParamsSchema, JsonRpcError, JsonRpcMessageSchema, failure, negotiateProtocolVersion,
  parseJsonRpcMessage, parseToolsCallParams, salvageId, success, type JsonRpcResponse,
} from '../../tools/mcp/jsonrpc';
import {
  ListTasksParamsSchema, RELATED_TASK_META_KEY, TaskCreationParamsSchema, TaskCursorError, TaskIdParamsSchema, TaskNotFoundError, TaskNotReadyError,
  TaskTerminalError, type McpTask, type PendingApproval, type WorkflowTasks,
} from '../../tools/mcp/tasks';
import type { RuntimePrincipal } from '../../crypto/runtime-tokens';
import { LazyAbortController } from '../../common/lazy-abort';
import type { GatewayDeps } from '../deps';
import { jsonDepthExceeds, MAX_JSON_DEPTH, tooDeepMessage } from '../../common/json-depth';
import type { TakeRateTokens } from '../middleware/rate-limit';
import { parseJsonOffThread } from '../../documents/json-thread';
import { LargeBodyBudget } from '../large-body-budget';
import { BodyNotAdmittedError, BodyTooLargeError, readBoundedBody } from '../read-body';

/** The body limit of a server whose tools take no more (most); codeagent's is about 110 MiB. */
export const TOOLS_BODY_LIMIT_BYTES = DEFAULT_MAX_REQUEST_BYTES;
/** What a caller refused for want of room for its large body is told to wait. */
const LARGE_BODY_RETRY_SECONDS = 2;
/** A JSON-RPC batch's most entries, and how many of them run at once. */
export const MAX_BATCH_ENTRIES = 100;
export const BATCH_CONCURRENCY = 8;
const SERVER_VERSION = '0.1.0';

const mebibytes = (bytes: number): number => Math.round((bytes / (1024 * 1024)) * 10) / 10;

function acceptsEventStream(accept: string): boolean {
  return accept.split(',').some((part) => part.split(';')[0]?.trim().toLowerCase() === 'text/event-stream');
}

/** The contract's `application/json` and MCP clients' `application/json, text/event-stream` both qualify. */
function acceptsJson(accept: string): boolean {
  return accept.split(',').some((part) => {
    const type = part.split(';')[0]?.trim().toLowerCase();
    return type === 'application/json' || type === 'application/*' || type === '*/*';
  });
}

function reply(ctx: Context, status: number, body: JsonRpcResponse | JsonRpcResponse[] | undefined): void {
  ctx.status = status;
  if (body === undefined) {
    // '' keeps the status (Koa turns a null body into 204) and sends nothing
    ctx.body = '';
    ctx.remove('Content-Type');
    return;
  }
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(body);
}

/** The MCP `tools/call` result: structured content, its JSON as text unless the server gave content blocks. */
function callResult(result: ToolResult): Record<string, unknown> {
  const value = result.isError ? { ...result.value, error: result.message } : result.value;
  return { content: result.content ?? [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value, isError: result.isError };
}

const rpcError = (code: (typeof ErrorCode)[keyof typeof ErrorCode], message: string): JsonRpcError => new JsonRpcError(code, message);

/**
 * A tools/call's idempotency key: its own `_meta` key (`idempotencyKey` or `io.flowgate/idempotencyKey`),
 * else the one the request's `Idempotency-Key` header gives it (`requestKey`). Without either the
 * call has none: a JSON-RPC id is no identity (clients count from 1 again on every connection).
 */
function callKey(meta: Record<string, unknown> | undefined, requestKey: string | undefined): string | undefined {
  const own = meta?.idempotencyKey ?? meta?.[IDEMPOTENCY_META_KEY];
  if (own === undefined) return requestKey;
  if (typeof own !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(own)) throw rpcError(ErrorCode.INVALID_PARAMS, 'params._meta.idempotencyKey must be 1 to 255 visible ASCII characters');
  return own;
}

/** The `task` field that makes a `tools/call` task-augmented (MCP Tasks). */
const TaskAugmentationSchema = z.object({ task: TaskCreationParamsSchema.optional() }).loose();

/**
 * The id of an approval elicitation names its task and step, so whichever replica receives the
 * client's answer can act on it: `flowgate-approval/<taskId>/<stepIndex>/<nonce>`.
 */
const APPROVAL_ELICITATION_PREFIX = 'flowgate-approval/';
const ApprovalAnswerSchema = z.object({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.object({
    decision: z.enum(['approve', 'reject']),
    approver: z.string().min(1).max(320).optional(),
    comment: z.string().max(2000).optional(),
  }).loose().optional(),
}).loose();
/** A JSON-RPC response (the client answering a request of ours): an id and a result or error, no method. */
const JsonRpcResponseSchema = z.object({
  jsonrpc: z.literal('2.0'), id: z.union([z.string(), z.number()]), result: z.record(z.string(), z.unknown()).optional(), error: z.unknown().optional(),
}).strict();
const isMethodless = (raw: unknown): boolean => typeof raw === 'object' && raw !== null && !('method' in raw);
/** SSE comment lines keep idle proxies from closing a waiting stream. */
const SSE_KEEPALIVE_MS = 15_000;

function approvalElicitation(taskId: string, approval: PendingApproval): Record<string, unknown> {
  const properties: Record<string, unknown> = {
    decision: { type: 'string', title: 'Decision', description: 'approve or reject', enum: ['approve', 'reject'] },
    ...(approval.approvers.length > 0
      ? { approver: { type: 'string', title: 'Approver', description: 'decide as this approver (optional: else the API key decides as itself)', enum: approval.approvers } }
      : {}),
    comment: { type: 'string', title: 'Comment', maxLength: 2000 },
  };
  return {
    jsonrpc: '2.0',
    id: `${APPROVAL_ELICITATION_PREFIX}${taskId}/${approval.stepIndex}/${randomUUID()}`,
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message: approval.message,
      requestedSchema: { type: 'object', properties, required: ['decision'] },
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export function toolRoutes(deps: GatewayDeps): Router {
  const router = new Router({ prefix: deps.config.toolsBasePath === '/' ? '' : deps.config.toolsBasePath.replace(/\/+$/, '') });

  const largeBodies = new LargeBodyBudget(deps.config.toolsLargeBodyBytes);

  /**
   * The most a request to `server` may carry: the default, or what the server's tools take (see
   * ToolServer.maxRequestBytes), though never more than this process may hold of large bodies.
   */
  function bodyLimitOf(server: ToolServer): number {
    const wanted = server.maxRequestBytes ?? TOOLS_BODY_LIMIT_BYTES;
    return wanted <= TOOLS_BODY_LIMIT_BYTES ? wanted : Math.max(TOOLS_BODY_LIMIT_BYTES, Math.min(wanted, largeBodies.bytes));
  }

  /**
   * The request's JSON, or undefined once a refusal has been answered. A body over the default
   * limit is read only when `admit` grants its memory, and parsed off the event loop, after a
   * pass that refuses one nesting too deep or large otherwise than through its strings.
   */
  async function readJson(ctx: Context, server: ToolServer, limit: number, admit: (bytes: number) => boolean): Promise<{ raw: unknown } | undefined> {
    const refuse = (status: number, code: (typeof ErrorCode)[keyof typeof ErrorCode], message: string): undefined => {
      reply(ctx, status, failure(null, rpcError(code, message)));
      return undefined;
    };
    const notJson = (): undefined => refuse(400, ErrorCode.PARSE_ERROR, 'parse error: the body is not valid JSON');
    const tooDeep = (): undefined => refuse(400, ErrorCode.INVALID_REQUEST, `invalid request: ${tooDeepMessage()}`);
    let body: Buffer;
    try {
      body = await readBoundedBody(ctx.req, limit, { freeBytes: TOOLS_BODY_LIMIT_BYTES, admit });
    } catch (error) {
      if (error instanceof BodyTooLargeError) return refuse(413, ErrorCode.TOOL_ERROR, `the body is larger than ${limit} bytes (${mebibytes(limit)} MiB), the most /${server.name} takes`);
      if (error instanceof BodyNotAdmittedError) {
        ctx.set('Retry-After', String(LARGE_BODY_RETRY_SECONDS));
        return refuse(503, ErrorCode.TOOL_ERROR,
          `busy: this gateway holds as many large request bodies as it may (FLOWGATE_TOOLS_LARGE_BODIES_MB); retry in ${LARGE_BODY_RETRY_SECONDS} s`);
      }
      return notJson();
    }
    if (body.length <= TOOLS_BODY_LIMIT_BYTES) {
      let raw: unknown;
      try {
        raw = JSON.parse(body.toString('utf8'));
      } catch {
        return notJson();
      }
      return jsonDepthExceeds(raw) ? tooDeep() : { raw };
    }
    const parsed = await parseJsonOffThread(body, { maxDepth: MAX_JSON_DEPTH, maxStructureBytes: TOOLS_BODY_LIMIT_BYTES });
    switch (parsed.kind) {
      case 'parsed':
        return { raw: parsed.value };
      case 'invalid':
        return notJson();
      case 'too-deep':
        return tooDeep();
      case 'too-structured':
        return refuse(413, ErrorCode.TOOL_ERROR,
          `a body over ${TOOLS_BODY_LIMIT_BYTES} bytes may be large only through its strings (base64 images, say): at most ${TOOLS_BODY_LIMIT_BYTES} bytes outside them`);
      case 'failed':
        deps.log.error('the tool gateway could not parse a large body', { requestId: ctx.state.requestId, server: server.name, bytes: body.length, reason: parsed.reason });
        return refuse(500, ErrorCode.INTERNAL_ERROR, `internal error (request ${String(ctx.state.requestId ?? 'unknown')})`);
    }
  }

  /** A plain value for a token whose key this process checked within the last second (see RuntimeTokens.verify). */
  function authenticate(ctx: Context): RuntimePrincipal | undefined | Promise<RuntimePrincipal | undefined> {
    const match = /^Bearer\s+(\S+)$/i.exec(ctx.get('Authorization'));
    return match?.[1] ? deps.runtimeTokens.verify(match[1]) : undefined;
  }

  /**
   * A JSON-RPC response from the client: only answers to approval elicitations mean something (an
   * approval decision by the token's API key); any other is dropped. Never answered (202).
   */
  async function handleClientResponse(response: z.infer<typeof JsonRpcResponseSchema>, principal: RuntimePrincipal, ctx: Context): Promise<void> {
    if (typeof response.id !== 'string' || !response.id.startsWith(APPROVAL_ELICITATION_PREFIX) || !deps.tasks) return;
    const [taskId, step] = response.id.slice(APPROVAL_ELICITATION_PREFIX.length).split('/');
    const answer = ApprovalAnswerSchema.safeParse(response.result);
    const stepIndex = Number(step);
    if (!taskId || !Number.isInteger(stepIndex) || !answer.success || answer.data.action !== 'accept' || !answer.data.content) return;
    const { decision, approver, comment } = answer.data.content;
    try {
      const outcome = await deps.tasks.decide(principal.orgId, principal.keyId, taskId, stepIndex, { decision, ...(approver ? { approver } : {}), ...(comment ? { comment } : {}) });
      if (!outcome.ok) deps.log.info('an approval given through a task was refused', { requestId: ctx.state.requestId, taskId, stepIndex, reason: outcome.message });
    } catch (error) {
      if (error instanceof TaskNotFoundError) return;
      deps.log.error('an approval given through a task failed', { requestId: ctx.state.requestId, taskId, error });
    }
  }

  /** `requestKey`: the idempotency key the request's header gives this message (see callKey). */
  async function handleMessage(
    raw: unknown, server: ToolServer, principal: RuntimePrincipal, ctx: Context, caller: LazyAbortController, requestKey?: string,
  ): Promise<JsonRpcResponse | undefined> {
    // a response has no method: the schema's failure (an error object built) is not paid by requests
    const response = isMethodless(raw) ? JsonRpcResponseSchema.safeParse(raw) : undefined;
    if (response?.success && (response.data.result !== undefined) !== (response.data.error !== undefined)) {
      await handleClientResponse(response.data, principal, ctx);
      return undefined;
    }
    const message = parseJsonRpcMessage(raw);
    if (!message) return failure(salvageId(raw), rpcError(ErrorCode.INVALID_REQUEST, 'not a JSON-RPC 2.0 request: needs jsonrpc "2.0", a method and an integer or string id'));
    // Notifications (no id) get no answer, whatever their method.
    if (message.id === undefined) return undefined;
    const id = message.id;
    const params = message.params ?? {};
    try {
      switch (message.method) {
        case 'initialize': {
          const init = InitializeParamsSchema.safeParse(params);
          if (!init.success) throw rpcError(ErrorCode.INVALID_PARAMS, 'initialize needs params.protocolVersion');
          return success(id, {
            protocolVersion: negotiateProtocolVersion(init.data.protocolVersion),
            capabilities: {
              tools: { listChanged: false },
              // only a server with task-capable tools advertises tasks (the methods answer on every path)
              ...(deps.tasks?.supports(server.name) ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {}),
            },
            serverInfo: { name: `flowgate/${server.name}`, version: SERVER_VERSION },
            instructions: server.description,
          });
        }
        case 'ping':
          return success(id, {});
        case 'tools/list':
          if (Array.isArray(params)) throw rpcError(ErrorCode.INVALID_PARAMS, 'tools/list takes no positional params');
          return success(id, { tools: await deps.tools.list(principal.orgId, server.name) });
        case 'tools/call': {
          const call = parseToolsCallParams(params);
          if (!call) throw rpcError(ErrorCode.INVALID_PARAMS, 'tools/call needs params.name (a string) and params.arguments (an object)');
          const idempotencyKey = callKey(call._meta, requestKey);
          const augmentation = 'task' in params ? TaskAugmentationSchema.safeParse(params) : undefined;
          if (augmentation?.success && augmentation.data.task) {
            // MCP Tasks: servers answer -32601 to a task-augmented call on a tool without task support
            if (!deps.tasks?.supportsTool(server.name, call.name)) throw rpcError(ErrorCode.METHOD_NOT_FOUND, `${call.name} on /${server.name} cannot run as a task`);
            return success(id, {
              task: await deps.tasks.create(principal.orgId, server.name, call.name, call.arguments ?? {}, {
                idempotencyKey, forwardHeaders: forwardableHeaders(ctx.req.headers), ttl: augmentation.data.task.ttl,
              }),
            });
          }
          // the server this request resolved: the call does not look it up again
          const result = await deps.tools.call(principal.orgId, server, call.name, call.arguments ?? {}, {
            idempotencyKey,
            forwardHeaders: forwardableHeaders(ctx.req.headers),
            // made only if the tool reads its signal (most never do)
            get signal() {
              return caller.signal;
            },
          });
          return success(id, callResult(result));
        }
        case 'tasks/get':
        case 'tasks/result':
        case 'tasks/cancel': {
          if (!deps.tasks) throw rpcError(ErrorCode.METHOD_NOT_FOUND, `method not found: ${message.method}`);
          const task = TaskIdParamsSchema.safeParse(params);
          if (!task.success) throw rpcError(ErrorCode.INVALID_PARAMS, `${message.method} needs params.taskId (a string)`);
          const { taskId } = task.data;
          if (message.method === 'tasks/get') return success(id, { ...await deps.tasks.get(principal.orgId, taskId) });
          if (message.method === 'tasks/cancel') return success(id, { ...await deps.tasks.cancel(principal.orgId, taskId) });
          const result = await deps.tasks.result(principal.orgId, taskId, caller.signal);
          return success(id, { ...callResult(result), _meta: { [RELATED_TASK_META_KEY]: { taskId } } });
        }
        case 'tasks/list': {
          if (!deps.tasks) throw rpcError(ErrorCode.METHOD_NOT_FOUND, `method not found: ${message.method}`);
          const list = ListTasksParamsSchema.safeParse(params);
          if (!list.success) throw rpcError(ErrorCode.INVALID_PARAMS, 'tasks/list takes an optional params.cursor (a string)');
          return success(id, { ...await deps.tasks.list(principal.orgId, list.data.cursor) });
        }
        default:
          throw rpcError(ErrorCode.METHOD_NOT_FOUND, `method not found: ${message.method}`);
      }
    } catch (error) {
      if (error instanceof JsonRpcError) return failure(id, error);
      if (error instanceof TaskNotFoundError || error instanceof TaskTerminalError || error instanceof TaskCursorError) return failure(id, rpcError(ErrorCode.INVALID_PARAMS, error.message));
      if (error instanceof TaskNotReadyError) return failure(id, rpcError(ErrorCode.TOOL_ERROR, error.message));
      if (error instanceof ToolCallError) {
        return failure(id, rpcError(error.code === 'UNKNOWN_TOOL' ? ErrorCode.INVALID_PARAMS : ErrorCode.TOOL_ERROR, error.message));
      }
      deps.log.error('tool gateway call failed', { requestId: ctx.state.requestId, server: server.name, method: message.method, error });
      return failure(id, rpcError(ErrorCode.INTERNAL_ERROR, `internal error (request ${String(ctx.state.requestId ?? 'unknown')})`));
    }
  }

  /**
   * A batch's entries each count against the caller's rate limit (the request's own token pays
   * for the first): an entry without a token is answered with an error and not run. At most
   * BATCH_CONCURRENCY entries run at once, in order of the batch. With an `Idempotency-Key` header
   * each entry of a batch of several gets a key of its own, `<key>:<index>` (from 0): one key for
   * different calls would make the second look like a repeat of the first.
   */
  async function handleBatch(
    raw: unknown[], server: ToolServer, principal: RuntimePrincipal, ctx: Context, caller: LazyAbortController, requestKey: string | undefined,
  ): Promise<(JsonRpcResponse | undefined)[]> {
    const take = ctx.state.takeRateTokens as TakeRateTokens | undefined;
    const answers: (JsonRpcResponse | undefined)[] = new Array(raw.length);
    // the entries past the first, in order, as far as the budget goes
    const grant = take && raw.length > 1 ? await take(raw.length - 1) : { granted: raw.length - 1, retryAfterSeconds: 0 };
    const runnable: number[] = [];
    raw.forEach((message, index) => {
      if (index <= grant.granted) {
        runnable.push(index);
        return;
      }
      answers[index] = failure(salvageId(message), rpcError(ErrorCode.TOOL_ERROR, `rate limited: this batch entry exceeds the credential's limit; retry in ${grant.retryAfterSeconds} s`));
    });
    if (runnable.length < raw.length) ctx.set('Retry-After', String(grant.retryAfterSeconds));
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, runnable.length) }, async () => {
      while (next < runnable.length) {
        const index = runnable[next++]!;
        const key = requestKey === undefined || raw.length === 1 ? requestKey : `${requestKey}:${index}`;
        answers[index] = await handleMessage(raw[index], server, principal, ctx, caller, key);
      }
    }));
    return answers;
  }

  /**
   * `tasks/result` as an SSE stream: status notifications while the task is open, an approval
   * elicitation when its run waits on one, then the result (or, past the result wait, the
   * not-ready error). Answers false (nothing sent) when the task cannot be read: the caller then
   * answers the request as JSON, error included.
   */
  async function streamTaskResult(tasks: WorkflowTasks, raw: unknown, server: ToolServer, principal: RuntimePrincipal, ctx: Context, caller: LazyAbortController): Promise<boolean> {
    const { signal } = caller;
    const message = JsonRpcMessageSchema.safeParse(raw);
    const params = TaskIdParamsSchema.safeParse(message.data?.params);
    if (!message.success || message.data.id === undefined || !params.success) return false;
    const { id } = message.data;
    const { taskId } = params.data;
    let task: McpTask;
    try {
      task = await tasks.get(principal.orgId, taskId);
    } catch {
      return false;
    }
    // Written to the socket directly, not as a Koa stream body: a client that goes away is normal here, not an error to report.
    ctx.status = 200;
    ctx.respond = false;
    const stream = ctx.res;
    stream.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
    const send = (payload: unknown): void => {
      if (!stream.writableEnded && !stream.destroyed) stream.write(`event: message\ndata: ${JSON.stringify(payload)}\n\n`);
    };
    const pump = async (): Promise<void> => {
      const deadline = Date.now() + tasks.resultWaitMs;
      const asked = new Set<number>();
      let seen = `${task.status}\n${task.statusMessage ?? ''}`;
      let quietSince = Date.now();
      while (!signal.aborted && !['completed', 'failed', 'cancelled'].includes(task.status) && Date.now() < deadline) {
        if (task.status === 'input_required') {
          const approval = await tasks.pendingApproval(principal.orgId, taskId);
          if (approval && !asked.has(approval.stepIndex)) {
            asked.add(approval.stepIndex);
            send(approvalElicitation(taskId, approval));
          }
        }
        await sleep(task.pollInterval, signal);
        if (signal.aborted) break;
        task = await tasks.get(principal.orgId, taskId);
        const now = `${task.status}\n${task.statusMessage ?? ''}`;
        if (now !== seen) {
          seen = now;
          send({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: { ...task } });
          quietSince = Date.now();
        } else if (Date.now() - quietSince > SSE_KEEPALIVE_MS) {
          if (!stream.destroyed) stream.write(': keep-alive\n\n');
          quietSince = Date.now();
        }
      }
      if (signal.aborted) return;
      const closed = ['completed', 'failed', 'cancelled'].includes(task.status);
      const answer = closed ? await handleMessage(raw, server, principal, ctx, caller)
        : failure(id, rpcError(ErrorCode.TOOL_ERROR, `task ${taskId} is still ${task.status}; poll tasks/get and ask again`));
      if (answer) send(answer);
    };
    void pump().catch((error: unknown) => {
      deps.log.error('tool gateway task stream failed', { requestId: ctx.state.requestId, taskId, error });
      if (!signal.aborted) send(failure(id, rpcError(ErrorCode.INTERNAL_ERROR, `internal error (request ${String(ctx.state.requestId ?? 'unknown')})`)));
    }).finally(() => stream.end());
    return true;
  }

  router.post('/:server', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    // no promise (nor the await's) for the common case of an answer already known
    const verified = authenticate(ctx);
    const principal = verified instanceof Promise ? await verified : verified;
    if (!principal) {
      ctx.set('WWW-Authenticate', 'Bearer realm="flowgate-tools"');
      reply(ctx, 401, failure(null, rpcError(ErrorCode.TOOL_ERROR, 'unauthorized: send Authorization: Bearer <runtime token> (from POST /auth/token)')));
      return;
    }
    if (!ctx.is('application/json')) {
      reply(ctx, 415, failure(null, rpcError(ErrorCode.TOOL_ERROR, `unsupported media type: the body must be application/json, not ${ctx.get('Content-Type') || 'untyped'}`)));
      return;
    }
    if (!acceptsJson(ctx.get('Accept'))) {
      reply(ctx, 406, failure(null, rpcError(ErrorCode.TOOL_ERROR, 'not acceptable: the Accept header must include application/json')));
      return;
    }
    const requestKey = ctx.get('Idempotency-Key') || undefined;
    if (requestKey !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(requestKey)) {
      reply(ctx, 400, failure(null, rpcError(ErrorCode.INVALID_REQUEST, 'invalid request: Idempotency-Key must be 1 to 255 visible ASCII characters')));
      return;
    }
    let server: ToolServer;
    try {
      const resolved = deps.tools.server(principal.orgId, ctx.params.server ?? '');
      server = resolved instanceof Promise ? await resolved : resolved;
    } catch (error) {
      if (!(error instanceof ToolCallError)) throw error;
      reply(ctx, 404, failure(null, rpcError(ErrorCode.TOOL_ERROR, error.message)));
      return;
    }
    const limit = bodyLimitOf(server);
    let held = 0;
    try {
      const read = await readJson(ctx, server, limit, (bytes) => {
        if (!largeBodies.take(bytes)) return false;
        held = bytes;
        return true;
      });
      if (read) await answerRequest(ctx, read.raw, server, principal, requestKey);
    } finally {
      // a large body's share is given back once it has been answered: its parsed arguments lived that long
      largeBodies.give(held);
    }
  });

  async function answerRequest(ctx: Context, raw: unknown, server: ToolServer, principal: RuntimePrincipal, requestKey: string | undefined): Promise<void> {
    const caller = new LazyAbortController();
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) caller.abort(new Error('the caller went away'));
    });
    if (Array.isArray(raw)) {
      if (raw.length === 0) {
        reply(ctx, 400, failure(null, rpcError(ErrorCode.INVALID_REQUEST, 'an empty batch is not a request')));
        return;
      }
      if (raw.length > MAX_BATCH_ENTRIES) {
        reply(ctx, 400, failure(null, rpcError(ErrorCode.INVALID_REQUEST, `a batch may hold at most ${MAX_BATCH_ENTRIES} entries, not ${raw.length}`)));
        return;
      }
      const answers = (await handleBatch(raw, server, principal, ctx, caller, requestKey)).filter((a): a is JsonRpcResponse => a !== undefined);
      reply(ctx, answers.length === 0 ? 202 : 200, answers.length === 0 ? undefined : answers);
      return;
    }
    if (deps.tasks && acceptsEventStream(ctx.get('Accept')) && (raw as { method?: unknown } | null)?.method === 'tasks/result'
      && await streamTaskResult(deps.tasks, raw, server, principal, ctx, caller)) return;
    const answer = await handleMessage(raw, server, principal, ctx, caller, requestKey);
    if (answer === undefined) {
      reply(ctx, 202, undefined);
      return;
    }
    reply(ctx, 'error' in answer && answer.error.code === ErrorCode.INVALID_REQUEST ? 400 : 200, answer);
  }

  return router;
}
