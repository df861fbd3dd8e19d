/**
 * Custom tool servers of an organization: generated from an OpenAPI document or proxied to a
 * remote MCP server, each with a short opaque id that is its path, visible to its organization
 * only (the catalog asks `source` for an organization's servers). Also the custom connections'
 * test call and OAuth consent, which share the connection auth with the servers.
 */
import type { Logger } from '../../observability/logger';
import { assertUrlAllowed, OutboundRefusedError } from '../../net/address-policy';
import type { ConnectionSummary } from '../connections';
import type { Registry } from '../../registry';
import { isToolServerId, type ConnectionStatus, type ToolServerRecord } from '../../registry/tool-servers';
import { type ServerSource, type ToolEntry, type ToolServer, type ToolServices } from '../server';
import { CustomAuth, type CustomConnectionRef } from './auth';
import { CUSTOM_APPLICATION, CustomCredentialsSchema } from './credentials';
import { testConnection, type ConnectionTestResult } from './connection-test';
import { generateApi, OpenApiDocumentError, type GeneratedApi } from './openapi';
import { openApiServer } from './openapi-server';
import { RemoteMcpClient } from './remote-mcp';
import { CustomRegistryReads } from './registry-reads';
import { remoteServer } from './remote-server';
import { RemoteToolCache } from './remote-tool-cache';
import { durableServer, durableTools } from './durable-server';
import type { DurablePolicy } from '../../common/durable-call';
import { durableToolsProblem, type DurableTools } from '../../common/durable-tools';

export { CUSTOM_APPLICATION, CustomCredentialsSchema, type CustomCredentials } from './credentials';
export { ConsentStateError, TokenRefusedError } from './auth';
export { OpenApiDocumentError } from './openapi';
export type { ConnectionTestResult } from './connection-test';
export { CUSTOM_SERVER_RECHECK_MS } from './registry-reads';

const REGISTER_TIMEOUT_MS = 20_000;

/** Why a server could not be registered; the message is for the person registering it. */
export class ServerRegistrationError extends Error {
  override readonly name = 'ServerRegistrationError';
}

export type ServerInput =
  | { kind: 'openapi'; name?: string; description?: string; connection: string; document: unknown; durable?: DurablePolicy; durableTools?: DurableTools }
  | { kind: 'remote'; name?: string; description?: string; connection?: string; url: string; durable?: DurablePolicy; durableTools?: DurableTools };

export interface ServerView {
  id: string;
  path: string;
  kind: 'openapi' | 'remote';
  name: string;
  description: string;
  connection: string | null;
  url?: string;
  /** the retry policy of a durable server (every call a task); null: calls are plain proxied calls */
  durable: DurablePolicy | null;
  /** per tool: its own policy, or false (a plain proxied call); null: every tool follows `durable` */
  durableTools: DurableTools | null;
  createdAt: string;
  updatedAt: string;
  tools?: readonly ToolEntry[];
}

export interface CustomServersDeps {
  registry: Registry;
  log: Logger;
  /** the dispatcher's services (assembled after the catalog that holds `source`) */
  services(): ToolServices;
}

export class CustomServers {
  readonly auth: CustomAuth;
  readonly source: ServerSource;
  private readonly remoteTools = new RemoteToolCache();
  /** eras and sessions of remote servers, for this process */
  private readonly remoteClient = new RemoteMcpClient();
  /** built servers by organization, id and version */
  private readonly built = new Map<string, Promise<ToolServer>>();
  /** server rows and opened connections, kept briefly: a call reads neither from the registry */
  private readonly reads: CustomRegistryReads;

  constructor(private readonly deps: CustomServersDeps) {
    this.auth = new CustomAuth({
      store: deps.registry.toolServers, connections: () => deps.services().connections, log: deps.log,
      get allowPrivateNetwork() {
        return deps.services().allowPrivateNetwork;
      },
    });
    this.reads = new CustomRegistryReads(deps.registry.toolServers, () => deps.services().connections);
    // another path's lookup makes no promise: the catalog asks this source for every non-built-in path
    this.source = {
      servers: (orgId) => this.servers(orgId), server: (orgId, name) => (isToolServerId(name) ? this.server(orgId, name) : undefined),
      // a server's path is its random id: that one exists says nothing of whose it is
      mayServe: (name) => isToolServerId(name) && deps.registry.toolServers.exists(name),
    };
  }

  private get store() {
    return this.deps.registry.toolServers;
  }

  async servers(orgId: string): Promise<ToolServer[]> {
    const records = await this.store.list(orgId);
    const servers = await Promise.all(records.map(async (record) => {
      try {
        return await this.serverOf(record);
      } catch (error) {
        // a document that no longer parses (a parser upgrade) hides one server, not all of them
        this.deps.log.error('custom tool server could not be built', { server: record.id, orgId, error });
        return undefined;
      }
    }));
    return servers.filter((s): s is ToolServer => s !== undefined);
  }

  /** The organization's server at path `name` (its id), built as servers() builds it; its row kept briefly (registry-reads.ts). */
  async server(orgId: string, name: string): Promise<ToolServer | undefined> {
    const record = await this.reads.server(orgId, name);
    if (!record) return undefined;
    try {
      return await this.serverOf(record);
    } catch (error) {
      this.deps.log.error('custom tool server could not be built', { server: record.id, orgId, error });
      return undefined;
    }
  }

  /**
   * The server a record describes, built once per version: the catalog asks for an organization's
   * servers on every call, and compiling a document's schemas each time would cost far more than
   * the lookup.
   */
  private serverOf(record: ToolServerRecord): Promise<ToolServer> {
    const key = `${record.orgId}/${record.id}@${record.updatedAt}`;
    const built = this.built.get(key);
    if (built) return built;
    for (const old of this.built.keys()) if (old.startsWith(`${record.orgId}/${record.id}@`)) this.built.delete(old);
    const server = this.build(record);
    this.built.set(key, server);
    server.catch(() => this.built.delete(key));
    return server;
  }

  private async build(record: ToolServerRecord): Promise<ToolServer> {
    const server = await this.buildPlain(record);
    return record.durable === null && record.durableTools === null ? server : durableServer(server, record.durable, record.durableTools);
  }

  private async buildPlain(record: ToolServerRecord): Promise<ToolServer> {
    if (record.kind === 'remote') {
      return remoteServer({
        id: record.id, orgId: record.orgId, description: record.description, url: record.source, connectionId: record.connectionId, auth: this.auth,
        cache: this.remoteTools, client: this.remoteClient, connection: (org, id) => this.reads.connection(org, id),
      }, record.updatedAt);
    }
    const api = await generateApi(record.source);
    return openApiServer({ id: record.id, description: record.description, connectionId: record.connectionId ?? '', api, auth: this.auth, openConnection: (org, id) => this.reads.toolConnection(org, id) });
  }

  async list(orgId: string): Promise<ServerView[]> {
    return (await this.store.list(orgId)).map((r) => view(r));
  }

  /** The server with its tools; undefined when the organization has none with this id. */
  async get(orgId: string, id: string): Promise<ServerView | undefined> {
    const record = await this.store.get(orgId, id);
    if (!record) return undefined;
    const server = await this.serverOf(record);
    const services = this.deps.services();
    const tools = await server.listTools({ orgId, signal: AbortSignal.timeout(REGISTER_TIMEOUT_MS), services }).catch(() => undefined);
    return view(record, tools ?? []);
  }

  async register(orgId: string, input: ServerInput): Promise<ServerView> {
    const prepared = await this.prepare(orgId, input);
    const record = await this.store.create(orgId, { kind: input.kind, ...prepared.fields });
    // the list just fetched is the remote's current one: the first call need not ask again
    if (record.kind === 'remote' && prepared.listed) this.remoteTools.adopt(`${record.id}@${record.updatedAt}`, prepared.listed);
    return view(record, prepared.tools);
  }

  async replace(orgId: string, id: string, input: ServerInput): Promise<ServerView | undefined> {
    const existing = await this.store.get(orgId, id);
    if (!existing) return undefined;
    if (existing.kind !== input.kind) throw new ServerRegistrationError(`/${id} is a ${existing.kind} server; it cannot become a ${input.kind} server`);
    const prepared = await this.prepare(orgId, input, id);
    const record = await this.store.replace(orgId, id, prepared.fields);
    this.reads.forgetServer(orgId, id);
    this.remoteTools.forget(id);
    if (record?.kind === 'remote' && prepared.listed) this.remoteTools.adopt(`${record.id}@${record.updatedAt}`, prepared.listed);
    return record && view(record, prepared.tools);
  }

  async remove(orgId: string, id: string): Promise<boolean> {
    const removed = await this.store.remove(orgId, id);
    this.reads.forgetServer(orgId, id); // after the delete: a read begun before it is not kept either
    this.remoteTools.forget(id);
    for (const key of this.built.keys()) if (key.startsWith(`${orgId}/${id}@`)) this.built.delete(key);
    return removed;
  }

  /** After a connection was deleted through this replica: a server still calling with it (another replica's) finds it gone at once. */
  forgetConnection(orgId: string, id: string): void {
    this.reads.forgetConnection(orgId, id);
  }

  /** Builds the server as it would be stored and lists its tools: it must have at least one. A remote's come `listed`, kept as fresh as the remote allows. */
  private async prepare(orgId: string, input: ServerInput, id = 'new'): Promise<{ fields: Pick<ToolServerRecord, 'name' | 'description' | 'connectionId' | 'source' | 'durable' | 'durableTools'>; tools: readonly ToolEntry[]; listed?: RemoteToolCache }> {
    const prepared = await this.preparePlain(orgId, input, id);
    const durable = input.durable ?? null;
    const overrides = input.durableTools && Object.keys(input.durableTools).length > 0 ? input.durableTools : null;
    const problem = overrides && durableToolsProblem(durable, overrides, prepared.tools.map((tool) => tool.name));
    if (problem) throw new ServerRegistrationError(problem);
    return { ...prepared, fields: { ...prepared.fields, durable, durableTools: overrides }, tools: durableTools(prepared.tools, durable, overrides) };
  }

  private async preparePlain(orgId: string, input: ServerInput, id: string): Promise<{ fields: Pick<ToolServerRecord, 'name' | 'description' | 'connectionId' | 'source'>; tools: readonly ToolEntry[]; listed?: RemoteToolCache }> {
    const services = this.deps.services();
    const connectionId = input.connection ?? null;
    if (connectionId !== null) {
      const connection = await services.connections.get(orgId, connectionId);
      if (!connection) throw new ServerRegistrationError(`no connection ${connectionId} in this organization`);
      if (connection.application !== CUSTOM_APPLICATION) throw new ServerRegistrationError(`connection ${connectionId} is a ${connection.application} connection; a custom server needs a custom connection`);
    }
    const now = new Date().toISOString();
    if (input.kind === 'openapi') {
      let api: GeneratedApi;
      try {
        api = await generateApi(input.document);
      } catch (error) {
        if (error instanceof OpenApiDocumentError) throw new ServerRegistrationError(error.message);
        throw error;
      }
      if (api.operations.length === 0) throw new ServerRegistrationError('the document has no operations: a server needs at least one tool');
      const description = input.description ?? (api.description ? `${api.title}: ${api.description}` : api.title);
      let server: ToolServer;
      try {
        // compiles each tool's input schema: a schema ajv cannot use is the document's mistake
        server = openApiServer({ id, description, connectionId: connectionId ?? '', api, auth: this.auth });
      } catch (error) {
        throw new ServerRegistrationError(`the document's schemas cannot check a tool's arguments: ${error instanceof Error ? error.message : String(error)}`);
      }
      const tools = await server.listTools({ orgId, signal: AbortSignal.timeout(REGISTER_TIMEOUT_MS), services });
      return { fields: { name: input.name ?? api.title, description, connectionId, source: api.source }, tools };
    }
    let url: URL;
    try {
      url = new URL(input.url);
      assertUrlAllowed(url, { allowPrivateNetwork: services.allowPrivateNetwork });
    } catch (error) {
      throw new ServerRegistrationError(error instanceof OutboundRefusedError ? error.message : `url: not a valid http(s) URL`);
    }
    const description = input.description ?? `remote tool server at ${url.host}`;
    const listed = new RemoteToolCache();
    const server = remoteServer({
      id: `${id}-${now}`, orgId, description, url: url.toString(), connectionId, auth: this.auth, cache: listed, client: this.remoteClient,
      connection: (org, connection) => this.reads.connection(org, connection),
    }, now);
    let tools: readonly ToolEntry[];
    try {
      tools = await server.listTools({ orgId, signal: AbortSignal.timeout(REGISTER_TIMEOUT_MS), services });
    } catch (error) {
      throw new ServerRegistrationError(`could not list the remote server's tools: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (tools.length === 0) throw new ServerRegistrationError('the remote server lists no tools: a server needs at least one tool');
    return { fields: { name: input.name ?? url.host, description, connectionId, source: url.toString() }, tools, listed };
  }

  // --- custom connections ---

  /** The status a connection shows: custom connections have one of their own, others are connected. */
  async statusOf(orgId: string, connection: ConnectionSummary): Promise<{ status: ConnectionStatus; error?: string }> {
    if (connection.application !== CUSTOM_APPLICATION) return { status: 'connected' };
    const state = await this.store.connectionState(orgId, connection.PCID);
    if (!state) return { status: 'connected' };
    return state.error ? { status: state.status, error: state.error } : { status: state.status };
  }

  /** Records a new custom connection's starting state: an authorization-code one waits for consent. */
  async created(orgId: string, id: string, credentials: unknown): Promise<void> {
    const parsed = CustomCredentialsSchema.safeParse(credentials);
    if (parsed.success && parsed.data.auth.kind === 'oauth2_authorization_code') await this.store.setConnectionState(orgId, id, { status: 'pending' });
  }

  async openCustom(orgId: string, id: string): Promise<CustomConnectionRef | undefined> {
    const connection = await this.deps.services().connections.open(orgId, id);
    if (!connection || connection.application !== CUSTOM_APPLICATION) return undefined;
    const credentials = CustomCredentialsSchema.safeParse(connection.credentials);
    return credentials.success ? { orgId, id, credentials: credentials.data } : undefined;
  }

  /** Calls the connection's test endpoint with its credentials and says what happened. */
  test(connection: CustomConnectionRef): Promise<ConnectionTestResult> {
    return testConnection(this.auth, connection, this.deps.services().allowPrivateNetwork);
  }
}

function view(record: ToolServerRecord, tools?: readonly ToolEntry[]): ServerView {
  return {
    id: record.id, path: `/${record.id}`, kind: record.kind, name: record.name, description: record.description, connection: record.connectionId,
    ...(record.kind === 'remote' ? { url: record.source } : {}), durable: record.durable, durableTools: record.durableTools, createdAt: record.createdAt, updatedAt: record.updatedAt,
    ...(tools === undefined ? {} : { tools }),
  };
}
