/**
 * JSON-RPC 2.0 envelopes of the tool gateway (contract 4.5 and 7) and the MCP methods it answers.
 * Protocol errors (a numeric code on the wire) are `JsonRpcError`s; a tool that ran and failed is
 * not one of them: it is a normal result with `isError: true` (see ToolResult in types.ts).
 */
import { z } from 'zod';

export const ErrorCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** the contract's code for argument validation, timeouts and unsupported media type */
  TOOL_ERROR: -32000,
} as const;

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

export class JsonRpcError extends Error {
  override readonly name = 'JsonRpcError';
  constructor(readonly code: ErrorCodeValue, message: string, readonly data?: unknown) {
    super(message);
  }
}

export const RequestIdSchema = z.union([z.string(), z.number().int()]);
export type RequestId = z.infer<typeof RequestIdSchema>;

/** A request (with `id`) or a notification (without). */
export const JsonRpcMessageSchema = z.object({
  jsonrpc: z.literal('2.0'),
  method: z.string().min(1),
  params: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional(),
  id: RequestIdSchema.optional(),
});
export type JsonRpcMessage = z.infer<typeof JsonRpcMessageSchema>;

export const ToolsCallParamsSchema = z.object({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});
export type ToolsCallParams = z.infer<typeof ToolsCallParamsSchema>;

/**
 * Where a tools/call's `_meta` carries its idempotency key: flowgate sends it to remote MCP servers
 * under this name (an MCP `_meta` key with a prefix), and accepts it, or a bare `idempotencyKey`.
 */
export const IDEMPOTENCY_META_KEY = 'io.flowgate/idempotencyKey';
/** What an idempotency key may be, as on triggers: 1 to 255 visible ASCII characters (it travels as a header). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/*
 * The two parses every tools/call pays, without zod: the same rules as JsonRpcMessageSchema and
 * ToolsCallParamsSchema (which stay the definitions; the OpenAPI document shows the first), at a
 * fraction of the cost (zod was ~20 µs of a call's CPU). test/tools/jsonrpc.test.ts holds each equal
 * to its schema on a corpus of valid and invalid messages.
 */

/** JsonRpcMessageSchema.safeParse(raw), its data or undefined. */
export function parseJsonRpcMessage(raw: unknown): JsonRpcMessage | undefined {
  if (!isObject(raw)) return undefined;
  const { jsonrpc, method, params, id } = raw;
  if (jsonrpc !== '2.0' || typeof method !== 'string' || method.length === 0) return undefined;
  if (params !== undefined && !Array.isArray(params) && !isObject(params)) return undefined;
  if (id !== undefined && typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  const message: JsonRpcMessage = { jsonrpc, method };
  if ('params' in raw) message.params = params as JsonRpcMessage['params'];
  if ('id' in raw) message.id = id as RequestId;
  return message;
}

/** ToolsCallParamsSchema.safeParse(params), its data or undefined. */
export function parseToolsCallParams(params: unknown): ToolsCallParams | undefined {
  if (!isObject(params)) return undefined;
  const { name, arguments: args, _meta: meta } = params;
  if (typeof name !== 'string' || name.length === 0) return undefined;
  if ((args !== undefined && !isObject(args)) || (meta !== undefined && !isObject(meta))) return undefined;
  const call: ToolsCallParams = { name };
  if ('arguments' in params) call.arguments = args as ToolsCallParams['arguments'];
  if ('_meta' in params) call._meta = meta as ToolsCallParams['_meta'];
  return call;
}

export const InitializeParamsSchema = z.object({
  protocolVersion: z.string().min(1),
  capabilities: z.record(z.string(), z.unknown()).default({}),
  clientInfo: z.object({ name: z.string(), version: z.string() }).loose().optional(),
}).loose();

/** Newest first; `initialize` echoes the client's version when it is one of these. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0];

export function negotiateProtocolVersion(requested: string): string {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

export interface JsonRpcSuccess {
  jsonrpc: '2.0';
  id: RequestId;
  result: Record<string, unknown>;
}

export interface JsonRpcFailure {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: { code: number; message: string; data?: unknown };
}

export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;

export function success(id: RequestId, result: Record<string, unknown>): JsonRpcSuccess {
  return { jsonrpc: '2.0', id, result };
}

export function failure(id: RequestId | null, error: JsonRpcError): JsonRpcFailure {
  return { jsonrpc: '2.0', id, error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } };
}

/** The id of a message that failed validation, when it has a usable one (JSON-RPC: else null). */
export function salvageId(raw: unknown): RequestId | null {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const parsed = RequestIdSchema.safeParse((raw as { id?: unknown }).id);
  return parsed.success ? parsed.data : null;
}
