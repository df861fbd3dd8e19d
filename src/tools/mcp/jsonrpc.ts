/**
 * JSON-RPC 2.0 envelopes of the tool gateway (contract 4.5 and 7): its error codes, the two fast
 * parses every call pays, and the answers. The shapes themselves are in src/contracts/mcp.ts.
 * Protocol errors (a numeric code on the wire) are `JsonRpcError`s; a tool that ran and failed is
 * not one of them: it is a normal result with `isError: true` (see ToolResult in server.ts).
 */
import {
  RequestIdSchema, SUPPORTED_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION, type JsonRpcFailure, type JsonRpcMessage, type JsonRpcSuccess, type RequestId,
  type ToolsCallParams,
} from '../../contracts/mcp';

export {
  IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_META_KEY, InitializeParamsSchema, JsonRpcMessageSchema, ToolsCallParamsSchema, type JsonRpcFailure,
  type JsonRpcMessage, type JsonRpcResponse, type JsonRpcSuccess, type RequestId, type ToolsCallParams,
} from '../../contracts/mcp';

export const ErrorCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** the contract's code for argument validation, timeouts and unsupported media type */
  TOOL_ERROR: -32000,
  /** 2026 era: a standard header (MCP-Protocol-Version, Mcp-Method, Mcp-Name) missing or disagreeing with the body */
  HEADER_MISMATCH: -32020,
  /** 2026 era: the request needs a capability its `_meta` does not declare */
  MISSING_CLIENT_CAPABILITY: -32021,
  /** 2026 era: the request's protocol version is not one this server speaks */
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
  /** the caller's role lacks the permission the request needs (docs/people-and-roles.md); `data: {permission, role}` */
  PERMISSION_DENIED: -32003,
} as const;

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

export class JsonRpcError extends Error {
  override readonly name = 'JsonRpcError';
  constructor(readonly code: ErrorCodeValue, message: string, readonly data?: unknown) {
    super(message);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isRequestId = (value: unknown): value is RequestId => typeof value === 'string' || Number.isSafeInteger(value);
const isParams = (value: unknown): value is JsonRpcMessage['params'] => value === undefined || Array.isArray(value) || isObject(value);
const isOptionalObject = (value: unknown): value is Record<string, unknown> | undefined => value === undefined || isObject(value);

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
  if (!isParams(params)) return undefined;
  if (id !== undefined && !isRequestId(id)) return undefined;
  const message: JsonRpcMessage = { jsonrpc, method };
  if ('params' in raw) message.params = params;
  if ('id' in raw) message.id = id;
  return message;
}

/** ToolsCallParamsSchema.safeParse(params), its data or undefined. */
export function parseToolsCallParams(params: unknown): ToolsCallParams | undefined {
  if (!isObject(params)) return undefined;
  const { name, arguments: args, _meta: meta } = params;
  if (typeof name !== 'string' || name.length === 0) return undefined;
  if (!isOptionalObject(args) || !isOptionalObject(meta)) return undefined;
  const call: ToolsCallParams = { name };
  if ('arguments' in params) call.arguments = args;
  if ('_meta' in params) call._meta = meta;
  return call;
}

export function negotiateProtocolVersion(requested: string): string {
  return SUPPORTED_PROTOCOL_VERSIONS.find((version) => version === requested) ?? LATEST_PROTOCOL_VERSION;
}

export function success(id: RequestId, result: Record<string, unknown>): JsonRpcSuccess {
  return { jsonrpc: '2.0', id, result };
}

export function failure(id: RequestId | null, error: JsonRpcError): JsonRpcFailure {
  return { jsonrpc: '2.0', id, error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } };
}

/** The id of a message that failed validation, when it has a usable one (JSON-RPC: else null). */
export function salvageId(raw: unknown): RequestId | null {
  if (!isObject(raw)) return null;
  const parsed = RequestIdSchema.safeParse(raw.id);
  return parsed.success ? parsed.data : null;
}
