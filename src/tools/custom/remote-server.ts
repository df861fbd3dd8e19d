/**
 * A remote server: a URL that speaks MCP Streamable HTTP, of either protocol era, proxied through
 * flowgate's own small client (remote-mcp.ts: one request per call to a 2026-07-28 remote, one
 * shared session per 2025 remote and credential). Every outbound request goes through flowgate's
 * guarded HTTP client (private-network guard, keep-alive pool, time and size limits) and carries
 * exactly: the protocol headers, the caller's `X-Pf-Forward-*` headers (already reduced, contract
 * 4.7), and the Authorization (or API key) of the server's stored connection, which nothing
 * forwarded can override. The tool list is cached for a minute; a remote that cannot be reached
 * is UNAVAILABLE, never a hang. A call's idempotency key goes in the tools/call `_meta` as
 * `io.flowgate/idempotencyKey`; progress the remote streams reaches the call's `progress`.
 */
import { randomUUID } from 'node:crypto';
import { IDEMPOTENCY_META_KEY } from '../mcp/jsonrpc';
import { ToolCallError, ToolFailure, type ContentBlock, type JsonSchemaObject, type ListContext, type ToolEntry, type ToolServer, type ToolServices, type CallContext } from '../server';
import type { CustomAuth } from './auth';
import { outboundFailure } from './errors';
import type { OpenedConnection } from './registry-reads';
import { RemoteHttpError, RemoteRpcError, type RemoteMcpClient, type RemoteTarget } from './remote-mcp';

export const TOOL_LIST_TTL_MS = 60_000;
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

/** Tool lists of remote servers, by server id and version, kept for TOOL_LIST_TTL_MS. */
export class RemoteToolCache {
  private readonly lists = new Map<string, { tools: readonly ToolEntry[]; fetchedAt: number }>();

  get(key: string): { tools: readonly ToolEntry[]; fresh: boolean } | undefined {
    const found = this.lists.get(key);
    return found && { tools: found.tools, fresh: Date.now() - found.fetchedAt < TOOL_LIST_TTL_MS };
  }

  set(key: string, tools: readonly ToolEntry[]): void {
    this.lists.set(key, { tools, fetchedAt: Date.now() });
  }

  forget(serverId: string): void {
    for (const key of this.lists.keys()) if (key.startsWith(`${serverId}@`)) this.lists.delete(key);
  }
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

  async function fetchTools(context: ListContext): Promise<readonly ToolEntry[]> {
    const deadline = Date.now() + LIST_TIMEOUT_MS;
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(LIST_TIMEOUT_MS)]);
    try {
      const target = await targetOf(context.services);
      const tools: ToolEntry[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const listed = await spec.client.request(target, 'tools/list', cursor === undefined ? {} : { cursor }, { forward: {}, signal, deadline });
        for (const tool of Array.isArray(listed.tools) ? listed.tools.filter(isRecord) : []) {
          if (typeof tool.name !== 'string') continue;
          const schema: Record<string, unknown> = isRecord(tool.inputSchema) ? tool.inputSchema : {};
          const inputSchema: JsonSchemaObject = {
            ...schema, type: 'object',
            properties: isRecord(schema.properties) ? schema.properties : {},
            required: Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [],
          };
          const description = [tool.description, tool.title].find((d): d is string => typeof d === 'string') ?? tool.name;
          tools.push({ name: tool.name, description, inputSchema });
        }
        cursor = typeof listed.nextCursor === 'string' ? listed.nextCursor : undefined;
        if (cursor === undefined) break;
      }
      return tools;
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

  return {
    name: spec.id,
    description: spec.description,
    embedded: false,
    async listTools(context) {
      const cached = spec.cache.get(cacheKey);
      if (cached?.fresh) return cached.tools;
      try {
        const tools = await fetchTools(context);
        spec.cache.set(cacheKey, tools);
        return tools;
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
        // MCP has no idempotency header: the call's key travels in its `_meta`, the same on every attempt
        // and a progress token when the caller listens: the remote then streams its progress, which goes on as it arrives
        const meta = {
          ...(context.idempotencyKey === undefined ? {} : { [IDEMPOTENCY_META_KEY]: context.idempotencyKey }),
          ...(context.progressWanted ? { progressToken: `flowgate-${randomUUID()}` } : {}),
        };
        const result = await spec.client.request(target, 'tools/call', { name, arguments: args, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) }, {
          forward: context.forwardHeaders, signal: context.signal, deadline: context.deadline, onMessage: progressOf(context),
        });
        if (result.resultType === 'input_required') {
          throw new ToolFailure(`the remote server /${spec.id} asked for input during ${name}, which flowgate cannot give a proxied call`);
        }
        const content = Array.isArray(result.content) ? result.content.filter(isRecord).filter((c): c is ContentBlock => typeof c.type === 'string') : [];
        const structured = isRecord(result.structuredContent) ? result.structuredContent : valueOf(content);
        return { value: structured, content, isError: result.isError === true };
      } catch (error) {
        throw remoteFailure(error, `the remote server /${spec.id}`);
      }
    },
  };
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function remoteFailure(error: unknown, what: string): Error {
  if (error instanceof ToolCallError || error instanceof ToolFailure) return error;
  if (error instanceof RemoteRpcError) {
    // -32602 invalid params, -32601 method not found (an unknown tool)
    if (error.code === -32602 || error.code === -32601) return new ToolCallError('INVALID_ARGUMENTS', `${what}: ${error.message}`);
    return new ToolFailure(`${what} answered an error: ${error.message}`, { code: error.code });
  }
  if (error instanceof RemoteHttpError) {
    if (error.status === 401 || error.status === 403) return new ToolCallError('CONNECTION_REFUSED', `${what}: ${error.message}`);
    if (error.status >= 500 || error.status === 404 || error.status === 429) return new ToolCallError('UNAVAILABLE', `${what}: ${error.message}`);
    return new ToolFailure(`${what} answered ${error.message}`, { status: error.status });
  }
  return outboundFailure(error, what);
}
