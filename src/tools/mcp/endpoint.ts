/**
 * The tool gateway's MCP endpoint, apart from HTTP: it answers one JSON-RPC message through the
 * method table of its protocol era (era.ts decides: the 2025 table in methods.ts, the 2026 one in
 * modern.ts), a batch (batch.ts, 2025 era only), or a `tasks/result` as a stream (task-stream.ts),
 * and takes the client's answers to its elicitations (elicitation.ts). Every failure leaves as a
 * JSON-RPC error object; a tool that ran and failed is a result with `isError: true`. The HTTP
 * route (src/http/routes/tools.ts) authenticates, reads the body and writes the answer.
 */
import { ClientResponseSchema, type JsonRpcFailure, type JsonRpcMessage, type JsonRpcResponse, type RequestId } from '../../contracts/mcp';
import { fieldOf } from '../../common/narrow';
import type { Logger } from '../../observability/logger';
import { ToolCallError } from '../server';
import { answerBatch, type BatchAnswers, type TakeTokens } from './batch';
import { answerElicitation } from './elicitation';
import { ErrorCode, JsonRpcError, failure, parseJsonRpcMessage, salvageId, success } from './jsonrpc';
import { classify, hasEnvelopeClaim } from './era';
import { mcpMethods, NO_SOURCE, type McpCall, type McpMethodsDeps, type MethodHandler } from './methods';
import { modernMethods, modernResult, type ModernHandler } from './modern';
import { mcpPermission } from '../../people/tool-permissions';
import { roleHas } from '../../people/roles';
import { TaskCursorError, TaskNotFoundError, TaskNotReadyError, TaskTerminalError } from './task-errors';
import { openTaskResultStream, type TaskResultStream } from './task-stream';

export type { McpCall } from './methods';

export interface McpEndpointDeps extends McpMethodsDeps {
  log: Logger;
}

const isMethodless = (raw: unknown): boolean => typeof raw === 'object' && raw !== null && !('method' in raw);

/** An error a handler threw, as the JSON-RPC error the caller sees; undefined for an unexpected one. */
function protocolError(error: unknown): JsonRpcError | undefined {
  if (error instanceof JsonRpcError) return error;
  if (error instanceof TaskNotFoundError || error instanceof TaskTerminalError || error instanceof TaskCursorError) return new JsonRpcError(ErrorCode.INVALID_PARAMS, error.message);
  if (error instanceof TaskNotReadyError) return new JsonRpcError(ErrorCode.TOOL_ERROR, error.message);
  if (error instanceof ToolCallError) return new JsonRpcError(error.code === 'UNKNOWN_TOOL' ? ErrorCode.INVALID_PARAMS : ErrorCode.TOOL_ERROR, error.message);
  return undefined;
}

/** One message's answer (undefined: none) and the HTTP status it goes with when it is the request's only message. */
export interface AnsweredMessage {
  answer: JsonRpcResponse | undefined;
  status: number;
}

/**
 * The HTTP status of a 2026-era error: -32601 is 404; -32021, -32020 (an `Mcp-Param-*` header the
 * tools/call handler found disagreeing with the body) and the refusals before any method 400; any
 * other error 200 (in-band).
 */
function modernStatus(code: number): number {
  if (code === ErrorCode.METHOD_NOT_FOUND) return 404;
  return code === ErrorCode.MISSING_CLIENT_CAPABILITY || code === ErrorCode.HEADER_MISMATCH ? 400 : 200;
}

export class McpEndpoint {
  private readonly methods: ReadonlyMap<string, MethodHandler>;
  private readonly modern: ReadonlyMap<string, ModernHandler>;

  constructor(private readonly deps: McpEndpointDeps) {
    this.methods = mcpMethods(deps);
    this.modern = modernMethods(deps);
  }

  /** Whether a batch holds a 2026-era message (the 2026 era has no batches: the batch is then an invalid request). */
  static batchHasModernMessage(raw: readonly unknown[]): boolean {
    return raw.some((message) => typeof message === 'object' && message !== null && hasEnvelopeClaim(fieldOf(message, 'params')));
  }

  /**
   * The answer to one message; undefined for a notification (whatever its method) or a response
   * of the client's. `requestKey`: the idempotency key the request's header gives this message.
   */
  async answer(raw: unknown, call: McpCall, requestKey?: string): Promise<JsonRpcResponse | undefined> {
    return (await this.answerMessage(raw, call, requestKey)).answer;
  }

  /** The answer to one message and its HTTP status (as answer() does; a 2026 error may be 400 or 404). */
  async answerMessage(raw: unknown, call: McpCall, requestKey?: string): Promise<AnsweredMessage> {
    // a response has no method: the schema's failure (an error object built) is not paid by requests
    const response = isMethodless(raw) ? ClientResponseSchema.safeParse(raw) : undefined;
    if (response?.success && (response.data.result !== undefined) !== (response.data.error !== undefined)) {
      const audit = this.deps.audit ? { recorder: this.deps.audit, source: call.source ?? NO_SOURCE } : undefined;
      // an elicitation's answer decides an approval
      if (this.refusedByRole('tasks/update', undefined, call)) return { answer: undefined, status: 403 };
      if (this.deps.tasks) await answerElicitation(response.data, call.principal, this.deps.tasks, this.deps.log, call.requestId, audit);
      return { answer: undefined, status: 202 };
    }
    const message = parseJsonRpcMessage(raw);
    if (!message) {
      return { answer: failure(salvageId(raw), new JsonRpcError(ErrorCode.INVALID_REQUEST, 'not a JSON-RPC 2.0 request: needs jsonrpc "2.0", a method and an integer or string id')), status: 400 };
    }
    const era = classify(message.method, message.params, message.id !== undefined, call.headers);
    if (era.era === 'refused') return { answer: message.id === undefined ? undefined : failure(message.id, era.error), status: message.id === undefined ? 202 : era.status };
    // Notifications (no id) get no answer, whatever their method.
    if (message.id === undefined) return { answer: undefined, status: 202 };
    const { id, method } = message;
    const refused = this.refusedByRole(method, message.params, call);
    if (refused) return { answer: failure(id, refused), status: 200 };
    if (era.era === 'modern') {
      try {
        const handler = this.modern.get(method);
        if (!handler) throw new JsonRpcError(ErrorCode.METHOD_NOT_FOUND, `method not found: ${method} (protocol revision ${era.request.version})`);
        return { answer: success(id, modernResult(await handler(message.params ?? {}, call, requestKey, era.request), call.server)), status: 200 };
      } catch (error) {
        const answer = this.failed(id, method, call, error);
        return { answer, status: modernStatus(answer.error.code) };
      }
    }
    const answer = await this.answerLegacy(id, method, message.params, call, requestKey);
    return { answer, status: 'error' in answer && answer.error.code === ErrorCode.INVALID_REQUEST ? 400 : 200 };
  }

  /** The refusal when the caller has a role (a member signed in by URL) that lacks what `method` needs; undefined otherwise. */
  private refusedByRole(method: string, params: unknown, call: McpCall): JsonRpcError | undefined {
    const { role } = call.principal;
    if (role === undefined) return undefined;
    const permission = mcpPermission(method, call.server.name, params);
    if (roleHas(role, permission)) return undefined;
    return new JsonRpcError(ErrorCode.PERMISSION_DENIED, `permission_denied: the ${role} role lacks the permission ${permission}`, { permission, role });
  }

  private async answerLegacy(id: RequestId, method: string, params: JsonRpcMessage['params'], call: McpCall, requestKey: string | undefined): Promise<JsonRpcResponse> {
    try {
      const handler = this.methods.get(method);
      if (!handler) throw new JsonRpcError(ErrorCode.METHOD_NOT_FOUND, `method not found: ${method}`);
      return success(id, await handler(params ?? {}, call, requestKey));
    } catch (error) {
      return this.failed(id, method, call, error);
    }
  }

  private failed(id: RequestId, method: string, call: McpCall, error: unknown): JsonRpcFailure {
    const known = protocolError(error);
    if (known) return failure(id, known);
    this.deps.log.error('tool gateway call failed', { requestId: call.requestId, server: call.server.name, method, error });
    return failure(id, new JsonRpcError(ErrorCode.INTERNAL_ERROR, `internal error (request ${call.requestId ?? 'unknown'})`));
  }

  /** A batch's answers (see batch.ts); `take` pays for the entries past the first. */
  answerBatch(raw: readonly unknown[], call: McpCall, requestKey: string | undefined, take: TakeTokens | undefined): Promise<BatchAnswers> {
    return answerBatch(raw, requestKey, take, (message, key) => this.answer(message, call, key));
  }

  /**
   * `raw` as a streamed `tasks/result`, when it is one whose task can be read; undefined otherwise
   * (the caller then answers it as JSON, error included).
   */
  async taskResultStream(raw: unknown, call: McpCall): Promise<TaskResultStream | undefined> {
    const { tasks } = this.deps;
    const message = parseJsonRpcMessage(raw);
    if (!tasks || message?.method !== 'tasks/result' || message.id === undefined || hasEnvelopeClaim(message.params)) return undefined;
    return openTaskResultStream(tasks, this.deps.log, {
      id: message.id, params: message.params, orgId: call.principal.orgId, signal: call.caller.signal, requestId: call.requestId,
      answer: () => this.answer(raw, call),
    });
  }
}
