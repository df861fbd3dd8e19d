/**
 * A remote server: a URL that speaks MCP Streamable HTTP, proxied with the official SDK client.
 * Every outbound request goes through flowgate's guarded HTTP client (private-network guard,
 * time and size limits) and carries exactly: the SDK's own protocol headers, the caller's
 * `X-Pf-Forward-*` headers (already reduced, contract 4.7), and the Authorization (or API key)
 * of the server's stored connection, which nothing forwarded can override. The tool list is
 * cached for a minute; a remote that cannot be reached is UNAVAILABLE, never a hang. A call's
 * idempotency key goes in the tools/call `_meta` as `io.flowgate/idempotencyKey`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { httpRequest } from '../../net/http-client';
import { IDEMPOTENCY_META_KEY } from '../mcp/jsonrpc';
import type { ConnectionStore } from '../connections';
import { ToolCallError, ToolFailure, type ContentBlock, type JsonSchemaObject, type ListContext, type ToolEntry, type ToolServer, type ToolServices } from '../server';
import type { CustomAuth } from './auth';
import { CustomCredentialsSchema } from './credentials';
import { outboundFailure } from './errors';
import { remoteOutputValidator } from './remote-output-validator';

export const TOOL_LIST_TTL_MS = 60_000;
const LIST_TIMEOUT_MS = 15_000;
const MAX_REMOTE_RESPONSE_BYTES = 10 * 1024 * 1024;
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

interface Session {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

export function remoteServer(spec: RemoteServerSpec, version: string): ToolServer {
  const cacheKey = `${spec.id}@${version}`;

  async function open(services: ToolServices, forward: Readonly<Record<string, string>>, signal: AbortSignal, deadline: number): Promise<Session> {
    const credential = await credentialOf(services.connections);
    const url = new URL(spec.url);
    for (const [name, value] of Object.entries(credential.query)) url.searchParams.set(name, value);
    const guardedFetch: FetchLike = async (target, init) => {
      const method = (init?.method ?? 'GET').toUpperCase();
      // Only request/response is proxied: a standalone GET stream (server-initiated messages)
      // would hold a connection for nothing, so the remote is told this client does not open one.
      if (method === 'GET') return new Response(null, { status: 405 });
      const headers: Record<string, string> = { ...forward };
      new Headers(init?.headers).forEach((value, name) => {
        headers[name] = value;
      });
      // lowercased, so a forwarded header of the same name is replaced, never sent alongside
      for (const [name, value] of Object.entries(credential.headers)) headers[name.toLowerCase()] = value;
      const body = typeof init?.body === 'string' ? init.body : undefined;
      const response = await httpRequest({
        method, url: String(target), headers, body, timeoutMs: Math.max(1, deadline - Date.now()), maxResponseBytes: MAX_REMOTE_RESPONSE_BYTES,
        allowPrivateNetwork: services.allowPrivateNetwork, signal: init?.signal ?? signal, maxRedirects: 0,
      });
      const answerHeaders = new Headers();
      for (const [name, value] of Object.entries(response.headers)) {
        if (value === undefined) continue;
        for (const v of Array.isArray(value) ? value : [value]) answerHeaders.append(name, v);
      }
      const empty = response.body.length === 0 || response.status === 204 || response.status === 304;
      return new Response(empty ? null : new Uint8Array(response.body), { status: response.status, headers: answerHeaders });
    };
    const transport = new StreamableHTTPClientTransport(url, { fetch: guardedFetch });
    const client = new Client({ name: 'flowgate', version: '1.0.0' }, { jsonSchemaValidator: remoteOutputValidator() });
    await client.connect(transport, { signal, timeout: Math.max(1, deadline - Date.now()) });
    return { client, transport };
  }

  async function credentialOf(connections: ConnectionStore): Promise<{ headers: Record<string, string>; query: Record<string, string> }> {
    if (spec.connectionId === null) return { headers: {}, query: {} };
    const connection = await connections.open(spec.orgId, spec.connectionId);
    if (!connection) throw new ToolCallError('CONNECTION_REFUSED', `the connection ${spec.connectionId} of /${spec.id} no longer exists`);
    const credentials = CustomCredentialsSchema.safeParse(connection.credentials);
    if (!credentials.success) throw new ToolCallError('CONNECTION_REFUSED', `connection ${spec.connectionId} is not a valid custom connection`);
    return spec.auth.credentialsFor({ orgId: spec.orgId, id: connection.id, credentials: credentials.data });
  }

  async function close(session: Session): Promise<void> {
    // a session the remote handed out is ended politely; a remote that does not care answers 405
    if (session.transport.sessionId !== undefined) await session.transport.terminateSession().catch(() => undefined);
    await session.client.close().catch(() => undefined);
  }

  async function fetchTools(context: ListContext): Promise<readonly ToolEntry[]> {
    const deadline = Date.now() + LIST_TIMEOUT_MS;
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(LIST_TIMEOUT_MS)]);
    let session: Session | undefined;
    try {
      session = await open(context.services, {}, signal, deadline);
      const tools: ToolEntry[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const listed = await session.client.listTools(cursor === undefined ? {} : { cursor }, { signal, timeout: Math.max(1, deadline - Date.now()) });
        for (const tool of listed.tools) {
          const schema = tool.inputSchema as Record<string, unknown>;
          const inputSchema: JsonSchemaObject = {
            ...schema, type: 'object',
            properties: isRecord(schema.properties) ? schema.properties : {},
            required: Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [],
          };
          tools.push({ name: tool.name, description: tool.description ?? tool.title ?? tool.name, inputSchema });
        }
        cursor = listed.nextCursor;
        if (cursor === undefined) break;
      }
      return tools;
    } catch (error) {
      throw remoteFailure(error, `the remote server /${spec.id}`);
    } finally {
      if (session) await close(session);
    }
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
      let session: Session | undefined;
      try {
        session = await open(context.services, context.forwardHeaders, context.signal, context.deadline);
        // MCP has no idempotency header: the call's key travels in its `_meta`, the same on every attempt
        const meta = context.idempotencyKey === undefined ? undefined : { [IDEMPOTENCY_META_KEY]: context.idempotencyKey };
        const result = await session.client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }, undefined, {
          signal: context.signal, timeout: Math.max(1, context.deadline - Date.now()),
        });
        const content = Array.isArray(result.content) ? result.content.filter(isRecord).filter((c): c is ContentBlock => typeof c.type === 'string') : [];
        const structured = isRecord(result.structuredContent) ? result.structuredContent : valueOf(content);
        return { value: structured, content, isError: result.isError === true };
      } catch (error) {
        throw remoteFailure(error, `the remote server /${spec.id}`);
      } finally {
        if (session) await close(session);
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
  if (error instanceof McpError) {
    if (error.code === ErrorCode.InvalidParams || error.code === ErrorCode.MethodNotFound) return new ToolCallError('INVALID_ARGUMENTS', `${what}: ${error.message}`);
    if (error.code === ErrorCode.RequestTimeout) return new ToolCallError('TIMEOUT', `${what}: ${error.message}`);
    if (error.code === ErrorCode.ConnectionClosed) return new ToolCallError('UNAVAILABLE', `${what} closed the connection`);
    return new ToolFailure(`${what} answered an error: ${error.message}`, { code: error.code });
  }
  return outboundFailure(error, what);
}
