/**
 * A remote server: a URL that speaks MCP Streamable HTTP, of either protocol era, proxied through
 * flowgate's own small client (remote-mcp.ts: one request per call to a 2026-07-28 remote, one
 * shared session per 2025 remote and credential). Every outbound request goes through flowgate's
 * guarded HTTP client (private-network guard, keep-alive pool, time and size limits) and carries
 * exactly: the protocol headers, the caller's `X-Pf-Forward-*` headers (already reduced, contract
 * 4.7), and the Authorization (or API key) of the server's stored connection, which nothing
 * forwarded can override. The tool list is cached for a minute, or for less when the remote's list
 * says so (remote-tool-cache.ts); a remote that cannot be reached
 * is UNAVAILABLE, never a hang. A call's idempotency key goes in the tools/call `_meta` as
 * `io.flowgate/idempotencyKey`; progress the remote streams reaches the call's `progress`.
 * A 2026 remote's `input_required` goes to a 2026 caller as it is (it answers by calling again: its
 * `inputResponses` and `requestState` go back unchanged, with its input capabilities in `_meta`);
 * any other caller gets a tool error naming the limitation.
 * A tool whose `x-mcp-header` declarations are invalid is left out of the list, as a 2026 client
 * must (SEP-2243); a call to a 2026 remote carries the `Mcp-Param-*` headers its listed schema
 * declares, and one the remote refuses for its headers (HeaderMismatch: its schema changed) is sent
 * again once after listing afresh.
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode, IDEMPOTENCY_META_KEY } from '../mcp/jsonrpc';
import { scanDeclarations } from '../mcp/param-headers';
import {
  ToolCallError, ToolFailure, type ContentBlock, type JsonSchemaObject, type ListContext, type ToolEntry, type ToolOutput, type ToolServer, type ToolServices, type CallContext,
} from '../server';
import type { CustomAuth } from './auth';
import { outboundFailure } from './errors';
import type { OpenedConnection } from './registry-reads';
import { RemoteHttpError, RemoteRpcError, type RemoteMcpClient, type RemoteRequestOptions, type RemoteTarget } from './remote-mcp';
import { callFollowingTasks, TASKS_CAPABILITIES } from './remote-tasks';
import { listTtlOf, type RemoteToolCache } from './remote-tool-cache';

const LIST_TIMEOUT_MS = 15_000;
const MAX_LIST_PAGES = 20;

export interface RemoteServerSpec {
  id: string;
  orgId: string;
  description: string;
  url: string;
  connectionId: string | null;
  auth: CustomAuth;
  /** shared by every instance of this server: the cached tool list */
  cache: RemoteToolCache;
  /** the process's client of remote servers: eras and sessions, shared by every remote server */
  client: RemoteMcpClient;
  /** the organization's connection, opened (kept briefly: registry-reads.ts); undefined when it is gone */
  connection(orgId: string, id: string): Promise<OpenedConnection | undefined>;
}

/** A remote's tool as flowgate lists it (its schema an object schema); undefined for an entry without a name. */
function toolEntryOf(tool: Record<string, unknown>): ToolEntry | undefined {
  if (typeof tool.name !== 'string') return undefined;
  const schema: Record<string, unknown> = isRecord(tool.inputSchema) ? tool.inputSchema : {};
  const inputSchema: JsonSchemaObject = {
    ...schema, type: 'object',
    properties: isRecord(schema.properties) ? schema.properties : {},
    required: Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [],
  };
  const description = [tool.description, tool.title].find((d): d is string => typeof d === 'string') ?? tool.name;
  return { name: tool.name, description, inputSchema };
}

export function remoteServer(spec: RemoteServerSpec, version: string): ToolServer {
  const cacheKey = `${spec.id}@${version}`;

  const noCredential = { headers: {}, query: {} };

  async function targetOf(services: ToolServices): Promise<RemoteTarget> {
    if (spec.connectionId === null) return { url: spec.url, credential: noCredential, allowPrivateNetwork: services.allowPrivateNetwork };
    const credential = await credentialOf(spec.connectionId);
    // lowercased, so a forwarded header of the same name is replaced, never sent alongside
    const headers = Object.fromEntries(Object.entries(credential.headers).map(([name, value]) => [name.toLowerCase(), value]));
    return { url: spec.url, credential: { headers, query: credential.query }, allowPrivateNetwork: services.allowPrivateNetwork };
  }

  /** The connection's headers and query parameters for this call (an OAuth token as CustomAuth has it now). */
  async function credentialOf(connectionId: string): Promise<{ headers: Record<string, string>; query: Record<string, string> }> {
    const opened = await spec.connection(spec.orgId, connectionId);
    if (!opened) throw new ToolCallError('CONNECTION_REFUSED', `the connection ${connectionId} of /${spec.id} no longer exists`);
    if ('invalid' in opened) throw new ToolCallError('CONNECTION_REFUSED', opened.invalid);
    return spec.auth.credentialsFor(opened.ref);
  }

  /** The remote's tools (every page), less those with invalid x-mcp-header declarations, and how long the remote lets them be kept. */
  async function fetchTools(context: ListContext): Promise<{ tools: readonly ToolEntry[]; ttlMs: number; taskTools: Set<string> }> {
    const deadline = Date.now() + LIST_TIMEOUT_MS;
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(LIST_TIMEOUT_MS)]);
    try {
      const target = await targetOf(context.services);
      const tools: ToolEntry[] = [];
      const taskTools = new Set<string>();
      const pages: Record<string, unknown>[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const listed = await spec.client.request(target, 'tools/list', cursor === undefined ? {} : { cursor }, { forward: {}, signal, deadline });
        pages.push(listed);
        for (const tool of Array.isArray(listed.tools) ? listed.tools.filter(isRecord) : []) {
          const entry = toolEntryOf(tool);
          if (!entry) continue;
          const declarations = scanDeclarations(entry.inputSchema);
          if (!declarations.valid) {
            context.services.log.warn('remote tool left out: its x-mcp-header declarations are invalid', { server: spec.id, tool: entry.name, reason: declarations.reason });
            continue;
          }
          tools.push(entry);
          if (runsAsTask(tool)) taskTools.add(entry.name);
        }
        cursor = typeof listed.nextCursor === 'string' ? listed.nextCursor : undefined;
        if (cursor === undefined) break;
      }
      return { tools, ttlMs: listTtlOf(pages), taskTools };
    } catch (error) {
      throw remoteFailure(error, `the remote server /${spec.id}`);
    }
  }

  /** A progress notification of this call, as the call's progress report. */
  function progressOf(context: CallContext) {
    return (message: Record<string, unknown>): void => {
      const params = isRecord(message.params) ? message.params : undefined;
      if (message.method !== 'notifications/progress' || !params || typeof params.progress !== 'number') return;
      context.progress({
        progress: params.progress,
        ...(typeof params.total === 'number' ? { total: params.total } : {}),
        ...(typeof params.message === 'string' ? { message: params.message } : {}),
      });
    };
  }

  /** The list afresh from the remote, kept. */
  async function refreshTools(context: ListContext): Promise<readonly ToolEntry[]> {
    const { tools, ttlMs, taskTools } = await fetchTools(context);
    spec.cache.set(cacheKey, tools, ttlMs, taskTools);
    return tools;
  }

  /** The kept list, even stale; listed now when none is kept. */
  async function keptList(context: ListContext): Promise<{ tools: readonly ToolEntry[]; taskTools: ReadonlySet<string> }> {
    const kept = spec.cache.get(cacheKey);
    if (kept) return kept;
    const tools = await refreshTools(context);
    return spec.cache.get(cacheKey) ?? { tools, taskTools: new Set<string>() };
  }

  /** A tool's inputSchema as the remote listed it (the kept list), for its Mcp-Param headers. */
  async function schemaOf(name: string, context: ListContext): Promise<unknown> {
    return (await keptList(context)).tools.find((tool) => tool.name === name)?.inputSchema;
  }

  return {
    name: spec.id,
    description: spec.description,
    embedded: false,
    followsUpstreamTasks: true,
    // what remains of the kept list's freshness: nothing before one is kept, nothing once it is stale
    listFreshForMs: () => spec.cache.get(cacheKey)?.remainingMs ?? 0,
    keptTools: () => spec.cache.get(cacheKey)?.tools,
    async listTools(context) {
      const cached = spec.cache.get(cacheKey);
      if (cached?.fresh) return cached.tools;
      try {
        return await refreshTools(context);
      } catch (error) {
        // a stale list beats none while the remote is briefly away; a call will tell the truth
        if (cached) {
          context.services.log.warn('remote tool server unavailable; serving its last tool list', { server: spec.id, error });
          return cached.tools;
        }
        throw error;
      }
    },
    async callTool(name, args, context) {
      try {
        const target = await targetOf(context.services);
        const params = callParams(name, args, context);
        const options = {
          forward: context.forwardHeaders, signal: context.signal, deadline: context.deadline, onMessage: progressOf(context), toolSchema: () => schemaOf(name, context),
          ...(context.roundTrip ? { clientCapabilities: context.roundTrip.capabilities } : {}),
        };
        const call = async (extra: Partial<RemoteRequestOptions> = {}): Promise<Record<string, unknown>> => {
          try {
            return await spec.client.request(target, 'tools/call', params, { ...options, ...extra });
          } catch (error) {
            if (!(error instanceof RemoteRpcError && error.code === ErrorCode.HEADER_MISMATCH)) throw error;
            // the remote's schema changed since it was listed (SEP-2243: list again, then send again, once)
            await refreshTools(context);
            return spec.client.request(target, 'tools/call', params, { ...options, ...extra });
          }
        };
        const hold = context.upstreamTask;
        const result = hold === undefined ? await call() : await callFollowingTasks({
          hold, signal: context.signal, call: (extra) => call({ ...extra, deadline: Math.min(context.deadline, Date.now() + hold.requestTimeoutMs) }),
          legacyTaskSupport: async () => (await keptList(context)).taskTools.has(name),
          request: (method, taskParams, signal, deadline) => spec.client.request(target, method, taskParams, { forward: context.forwardHeaders, signal, deadline, clientCapabilities: TASKS_CAPABILITIES }),
        });
        return outputOf(result, `/${spec.id}`, name, context);
      } catch (error) {
        throw remoteFailure(error, `the remote server /${spec.id}`);
      }
    },
  };
}

/**
 * The params of a proxied tools/call. MCP has no idempotency header: the call's key travels in its
 * `_meta`, the same on every attempt; and a progress token when the caller listens (the remote then
 * streams its progress, which goes on as it arrives). A 2026 caller's answers to an earlier
 * `input_required` go back to the remote as the caller sent them.
 */
function callParams(name: string, args: Record<string, unknown>, context: CallContext): Record<string, unknown> {
  const meta = {
    ...(context.idempotencyKey === undefined ? {} : { [IDEMPOTENCY_META_KEY]: context.idempotencyKey }),
    ...(context.progressWanted ? { progressToken: `flowgate-${randomUUID()}` } : {}),
  };
  const { inputResponses, requestState } = context.roundTrip ?? {};
  return {
    name, arguments: args, ...(inputResponses === undefined ? {} : { inputResponses }), ...(requestState === undefined ? {} : { requestState }),
    ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}),
  };
}

/**
 * A remote's tools/call result as the call's output. An `input_required` result (Multi Round-Trip
 * Requests) goes to a caller that can answer it (a 2026 caller: `roundTrip`) as the remote gave it;
 * any other caller (2025, a workflow step, an agent) cannot, and gets a tool error saying so.
 */
function outputOf(result: Record<string, unknown>, server: string, name: string, context: CallContext): ToolOutput {
  if (result.resultType === 'input_required') {
    if (context.roundTrip) {
      const { inputRequests, requestState } = result;
      return { value: {}, inputRequired: { resultType: 'input_required', inputRequests, ...(requestState === undefined ? {} : { requestState }) } };
    }
    const asked = isRecord(result.inputRequests) ? Object.values(result.inputRequests).filter(isRecord).map((r) => String(r.method)) : [];
    throw new ToolFailure(`the remote server ${server} asked for input during ${name} (input_required: ${[...new Set(asked)].join(', ') || 'unspecified'}), `
      + 'which only a caller of protocol revision 2026-07-28 can answer (by calling again with inputResponses); a 2025-era or in-process caller cannot',
    { inputRequired: true });
  }
  const content = Array.isArray(result.content) ? result.content.filter(isRecord).filter((c): c is ContentBlock => typeof c.type === 'string') : [];
  const structured = isRecord(result.structuredContent) ? result.structuredContent : valueOf(content);
  return { value: structured, content, isError: result.isError === true };
}

/** The structured value of a result without structuredContent: its JSON text, or the text itself. */
function valueOf(content: readonly ContentBlock[]): Record<string, unknown> {
  const first = content.find((c) => c.type === 'text')?.text;
  if (typeof first !== 'string') return {};
  try {
    const parsed: unknown = JSON.parse(first);
    return isRecord(parsed) ? parsed : { result: parsed };
  } catch {
    return { text: first };
  }
}

/** Whether a remote's listed tool may run as the remote's own task (2025-11-25 `execution.taskSupport`). */
function runsAsTask(tool: Record<string, unknown>): boolean {
  const support = isRecord(tool.execution) ? tool.execution.taskSupport : undefined;
  return support === 'optional' || support === 'required';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function remoteFailure(error: unknown, what: string): Error {
  if (error instanceof ToolCallError || error instanceof ToolFailure) return error;
  if (error instanceof RemoteRpcError) {
    // -32602 invalid params, -32601 method not found (an unknown tool)
    if (error.code === -32602 || error.code === -32601) return new ToolCallError('INVALID_ARGUMENTS', `${what}: ${error.message}`);
    // an error sent with a 5xx or 429 is the remote's passing trouble: its status lets a durable call retry it
    const transient = error.httpStatus !== undefined && (error.httpStatus >= 500 || error.httpStatus === 429);
    return new ToolFailure(`${what} answered an error: ${error.message}`, { code: error.code, ...(transient ? { status: error.httpStatus } : {}) });
  }
  if (error instanceof RemoteHttpError) {
    if (error.status === 401 || error.status === 403) return new ToolCallError('CONNECTION_REFUSED', `${what}: ${error.message}`);
    if (error.status >= 500 || error.status === 404 || error.status === 429) return new ToolCallError('UNAVAILABLE', `${what}: ${error.message}`);
    return new ToolFailure(`${what} answered ${error.message}`, { status: error.status });
  }
  return outboundFailure(error, what);
}
