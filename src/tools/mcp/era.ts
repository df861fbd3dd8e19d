/**
 * Which protocol era a message speaks, decided as the specification (2026-07-28, "Versioning" and
 * the Streamable HTTP binding's standard headers) and the official SDK's dual-era server decide
 * it: the body first. A request whose `params._meta` names a protocol version (the per-request
 * envelope) speaks that version's era; one without speaks the 2025 era, exactly as before, and
 * its headers are not looked at (a 2025 client never sends them). `initialize` is always 2025.
 * A 2026 request is refused, before it reaches its method, when
 *   - its envelope is malformed (no client capabilities, say): -32602, HTTP 400;
 *   - it names a 2026-era version flowgate does not speak: -32022 listing the ones it does, HTTP 400;
 *   - MCP-Protocol-Version is missing or names another version, Mcp-Method is missing or is not
 *     the body's method, or Mcp-Name is missing or is not the body's tool name or task id:
 *     -32020, HTTP 400 (header values are compared after trimming spaces, case-sensitively);
 *   (the `Mcp-Param-*` headers of a tools/call are checked against the called tool's schema once
 *   it is known, by the tools/call handler: param-headers.ts)
 * and a request that names a 2026 version in MCP-Protocol-Version but has no envelope is -32602
 * (HTTP 400). A batch holding a 2026 request is an invalid request: the 2026 era has no batches.
 */
import {
  CLIENT_CAPABILITIES_META_KEY, FIRST_MODERN_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSIONS, PROTOCOL_VERSION_META_KEY,
  RequestEnvelopeSchema, type RequestEnvelope,
} from '../../contracts/mcp';
import { isOneOf } from '../../common/narrow';
import { ErrorCode, JsonRpcError } from './jsonrpc';
import { decodeHeaderValue, receivedParamHeaders } from './param-headers';

/** The standard request headers of the Streamable HTTP binding, as received (undefined: absent). */
export interface McpRequestHeaders {
  protocolVersion?: string;
  method?: string;
  name?: string;
  /** the `Mcp-Param-*` headers, by the name after the prefix lowercased */
  params?: Readonly<Record<string, string>>;
}

/** The standard request headers of a request, from Node's (lowercased) header map. */
export function mcpRequestHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): McpRequestHeaders {
  const first = (name: string): string | undefined => {
    const value = headers[name];
    const text = Array.isArray(value) ? value[0] : value;
    return text === '' ? undefined : text;
  };
  return { protocolVersion: first('mcp-protocol-version'), method: first('mcp-method'), name: first('mcp-name'), params: receivedParamHeaders(headers) };
}

/** A 2026-era request: its version and envelope. */
export interface ModernRequest {
  version: string;
  envelope: RequestEnvelope;
  /** the client's capabilities for this request (its envelope's) */
  capabilities: { extensions?: Record<string, unknown> } & Record<string, unknown>;
}

export type Era =
  | { era: 'legacy' }
  | { era: 'modern'; request: ModernRequest }
  /** refused before any method: the error and the HTTP status it goes with */
  | { era: 'refused'; error: JsonRpcError; status: number };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export const isModernVersion = (version: string): boolean => version >= FIRST_MODERN_PROTOCOL_VERSION;

function metaOf(params: unknown): Record<string, unknown> | undefined {
  return isObject(params) && isObject(params._meta) ? params._meta : undefined;
}

/** Whether the params carry the envelope's claim (the protocol-version key), valid or not. */
export function hasEnvelopeClaim(params: unknown): boolean {
  const meta = metaOf(params);
  return meta !== undefined && PROTOCOL_VERSION_META_KEY in meta;
}

/** The methods whose Mcp-Name header mirrors a body field, and the field. */
const NAME_SOURCE: Readonly<Record<string, string>> = {
  'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri', 'tasks/get': 'taskId', 'tasks/update': 'taskId', 'tasks/cancel': 'taskId',
};

const trimOws = (value: string | undefined): string | undefined => value?.replace(/^[ \t]+|[ \t]+$/g, '');

/** The HeaderMismatch error (-32020) of headers that disagree with the body. */
export const headerMismatchError = (message: string, header: string, body: string): JsonRpcError =>
  new JsonRpcError(ErrorCode.HEADER_MISMATCH, `Bad Request: the request headers and body disagree: ${message}`, { mismatch: { header, body } });

const mismatch = (message: string, header: string, body: string): Era => ({
  era: 'refused', status: 400, error: headerMismatchError(message, header, body),
});

/** The era of one request or notification (`method` and `params` of a parsed message), given its headers. */
export function classify(method: string, params: unknown, isRequest: boolean, rawHeaders: McpRequestHeaders | undefined): Era {
  const headers: McpRequestHeaders = {
    protocolVersion: trimOws(rawHeaders?.protocolVersion), method: trimOws(rawHeaders?.method), name: trimOws(rawHeaders?.name),
  };
  const headerVersion = headers.protocolVersion;
  const headerModern = headerVersion !== undefined && isModernVersion(headerVersion);
  const claimed = hasEnvelopeClaim(params);
  if (method === 'initialize' && !claimed) {
    if (headerModern) return mismatch('an initialize request (the 2025 handshake) was sent with a 2026 MCP-Protocol-Version header', headerVersion, 'initialize');
    return { era: 'legacy' };
  }
  if (!claimed) {
    if (!headerModern || !isRequest) return { era: 'legacy' };
    const meta = metaOf(params);
    const missing = meta === undefined ? ['_meta'] : [PROTOCOL_VERSION_META_KEY, ...(CLIENT_CAPABILITIES_META_KEY in meta ? [] : [CLIENT_CAPABILITIES_META_KEY])];
    return {
      era: 'refused', status: 400,
      error: new JsonRpcError(ErrorCode.INVALID_PARAMS,
        `Invalid params: the MCP-Protocol-Version header names protocol revision ${headerVersion}, but the request is missing the required per-request envelope key(s): ${missing.join(', ')}`, { envelope: { missing } }),
    };
  }
  const meta = metaOf(params)!;
  const envelope = RequestEnvelopeSchema.safeParse(meta);
  if (!envelope.success) {
    const issue = envelope.error.issues[0];
    const key = issue?.path.map(String).join('.') || '_meta';
    const problem = issue && !(issue.path[0] !== undefined && String(issue.path[0]) in meta) ? 'missing' : issue?.message ?? 'invalid';
    return {
      era: 'refused', status: 400,
      error: new JsonRpcError(ErrorCode.INVALID_PARAMS, `Invalid _meta envelope for protocol revision ${FIRST_MODERN_PROTOCOL_VERSION}: ${key}: ${problem}`, { envelope: { key, problem } }),
    };
  }
  const version = envelope.data[PROTOCOL_VERSION_META_KEY];
  if (headerVersion !== undefined && headerVersion !== version) {
    return mismatch(`the body envelope names protocol version ${version} but the MCP-Protocol-Version header names ${headerVersion}`, headerVersion, version);
  }
  if (headers.method !== undefined && headers.method !== method) {
    return mismatch(`the body names method ${method} but the Mcp-Method header names ${headers.method}`, headers.method, method);
  }
  // an envelope naming a 2025 version: that era, as if it had none
  if (!isModernVersion(version)) return { era: 'legacy' };
  if (!isOneOf(MODERN_PROTOCOL_VERSIONS, version)) {
    return {
      era: 'refused', status: 400,
      error: new JsonRpcError(ErrorCode.UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version: ${version}`, { supported: [...MODERN_PROTOCOL_VERSIONS], requested: version }),
    };
  }
  if (isRequest) {
    const refused = checkStandardHeaders(method, params, headers, version);
    if (refused) return refused;
  }
  const capabilities: ModernRequest['capabilities'] = envelope.data[CLIENT_CAPABILITIES_META_KEY];
  return { era: 'modern', request: { version, envelope: envelope.data, capabilities } };
}

/** The presence half of the standard-header rule, and Mcp-Name against the body. */
function checkStandardHeaders(method: string, params: unknown, headers: McpRequestHeaders, version: string): Era | undefined {
  if (headers.protocolVersion === undefined) return mismatch(`the body envelope names protocol version ${version} but the required MCP-Protocol-Version header is absent`, '(missing)', version);
  if (headers.method === undefined) return mismatch(`the body names method ${method} but the required Mcp-Method header is absent`, '(missing)', method);
  const field = NAME_SOURCE[method];
  if (field === undefined) return undefined;
  const bodyValue = isObject(params) && typeof params[field] === 'string' ? params[field] : undefined;
  if (headers.name === undefined) {
    return bodyValue === undefined ? undefined : mismatch(`the body carries params.${field}="${bodyValue}" but the required Mcp-Name header is absent`, '(missing)', bodyValue);
  }
  const decoded = decodeHeaderValue(headers.name);
  if (decoded === undefined) return mismatch('the Mcp-Name header carries an invalid Base64 sentinel value', headers.name, bodyValue ?? '');
  if (bodyValue !== undefined && decoded !== bodyValue) return mismatch(`the body carries params.${field}="${bodyValue}" but the Mcp-Name header names "${decoded}"`, headers.name, bodyValue);
  return undefined;
}
