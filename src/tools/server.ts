/**
 * The one interface every tool server implements, built in or custom (generated from an OpenAPI
 * document, proxied to a remote MCP server, …): list its tools and call one, given the context
 * of the call. The dispatcher (dispatcher.ts) resolves the server through the catalog, opens the
 * `PCID` connection of application servers and enforces the deadline; a server only lists and
 * calls.
 */
import type { Client } from '@temporalio/client';
import type { BlobStore } from '../blobs/blob-store';
import type { Logger } from '../observability/logger';
import type { SignedUrlSigner } from '../crypto/signed-urls';
import type { ConnectionStore, ToolConnection } from './connections';
import type { DurablePolicy, UpstreamTask } from '../common/durable-call';
import type { DurableTools } from '../common/durable-tools';

export { ToolCallError, ToolFailure, type ToolCallErrorCode } from './errors';
export type { ToolConnection } from './connections';

/** The largest JSON-RPC request body the HTTP gateway takes on the path of a server that says nothing of its own (4 MiB). */
export const DEFAULT_MAX_REQUEST_BYTES = 4 * 1024 * 1024;
/** Room in a request body for the envelope around one call's arguments (jsonrpc, id, method, params, _meta). */
export const REQUEST_ENVELOPE_BYTES = 64 * 1024;

/** A JSON Schema object as the contract's 2.7 tool entry carries it. */
export interface JsonSchemaObject {
  type: 'object';
  properties: Record<string, unknown>;
  required: string[];
  additionalProperties?: boolean | Record<string, unknown>;
  [keyword: string]: unknown;
}

/** The contract's 2.7 tool entry; `execution` says whether MCP Tasks may run it (absent: forbidden). */
export interface ToolEntry {
  name: string;
  description: string;
  inputSchema: JsonSchemaObject;
  execution?: { taskSupport: 'forbidden' | 'optional' | 'required' };
}

/** What a server may need from flowgate while it lists or calls. */
export interface ToolServices {
  blobs: BlobStore;
  /** signs and verifies flowgate file links (attachments, step files, tool blobs) */
  signer: Pick<SignedUrlSigner, 'sign' | 'verify'>;
  connections: ConnectionStore;
  log: Logger;
  /** refuse loopback, private and link-local destinations unless true (FLOWGATE_ALLOW_PRIVATE_NETWORK) */
  allowPrivateNetwork: boolean;
  /** the Temporal client, where this process has one (gateways and workers both do) */
  temporal?: Client;
}

/** What a server is told when it lists its tools. */
export interface ListContext {
  orgId: string;
  signal: AbortSignal;
  services: ToolServices;
}

/** A progress report while a call runs (MCP `notifications/progress`, when the caller asked for them). */
export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * A caller of the 2026-07-28 era, which can receive a tool's `input_required` result (Multi
 * Round-Trip Requests) and answer it by calling again: the client capabilities its request
 * declared, and on that second call its answers and the state it was handed.
 */
export interface InputRoundTrip {
  capabilities: Readonly<Record<string, unknown>>;
  inputResponses?: Record<string, unknown>;
  requestState?: string;
}

/**
 * A durable attempt's hold on a remote MCP server's own task (src/tools/custom/remote-tasks.ts):
 * the attempt lets the remote answer with a task, is told of it before following it, and follows it
 * to its result; an attempt after it follows the same task instead of calling again.
 */
export interface UpstreamTaskHold {
  /** the task an earlier attempt was handed: followed, not called again (a remote that no longer knows it is called again) */
  resume?: UpstreamTask;
  /** the remote answered with a task: told before the task is followed (the activity heartbeats it) */
  received(task: UpstreamTask): Promise<void>;
  /** how long each request to the remote (the call, each poll) may take: the attempt's deadline */
  requestTimeoutMs: number;
  /** the ttl a 2025 remote is asked to keep its task for */
  ttlMs: number;
  /** whether the call's end means the remote's task is no longer wanted (tasks/cancel, the overall deadline): it is then cancelled */
  abandoned(): boolean;
  /**
   * the durable call is over (cancelled while no attempt ran): `resume`, the task an attempt was
   * handed, is only cancelled at the remote (tasks/cancel); nothing is called or followed
   */
  cancelOnly?: boolean;
}

/** What a server is told when one of its tools is called. */
export interface CallContext extends ListContext {
  /**
   * Headers of the invoking request named `X-Pf-Forward-<name>`, as `<name>` lowercased (contract
   * 4.7); never a credential or internal header (forward-headers.ts). Remote servers send them on.
   */
  forwardHeaders: Readonly<Record<string, string>>;
  /** the same for every attempt of one logical call (a workflow's run and step) */
  idempotencyKey?: string;
  /** epoch milliseconds after which the dispatcher gives up (the signal aborts then) */
  deadline: number;
  /** the connection named by `PCID`, already checked to be the org's and of the server's application */
  connection?: ToolConnection;
  /** reports progress to a caller that asked for it; a no-op otherwise */
  progress(report: ToolProgress): void;
  /** true when the caller listens to progress (a remote server is then asked for it) */
  progressWanted?: boolean;
  /** set when the caller can receive `input_required` (a 2026 caller over HTTP); absent for 2025 and in-process callers */
  roundTrip?: InputRoundTrip;
  /** a durable attempt at a server that follows remote tasks (`followsUpstreamTasks`) */
  upstreamTask?: UpstreamTaskHold;
}

/** MCP content blocks, passed through as the server gave them. */
export type ContentBlock = { type: string; [field: string]: unknown };

/** What a call answers: the `structuredContent`, and content blocks when the server has its own. */
export interface ToolOutput {
  value: Record<string, unknown>;
  content?: ContentBlock[];
  /** a tool that ran and failed, as a remote server reports it (built-ins throw ToolFailure instead) */
  isError?: boolean;
  /** the tool asks the caller for input first: the `InputRequiredResult` to hand on (only to a caller with a `roundTrip`) */
  inputRequired?: Record<string, unknown>;
}

export interface ToolServer {
  /** the server id, also its path segment: `/tools/<name>` */
  readonly name: string;
  readonly description: string;
  /** built into flowgate (true) or a custom server of one organization (false) */
  readonly embedded: boolean;
  /** set on application servers: every tool needs a `PCID` of a connection of this application */
  readonly application?: string;
  /**
   * How an application server's `PCID` is opened, when the server keeps its connection briefly (a
   * generated custom server: src/tools/custom/registry-reads.ts) rather than have the dispatcher
   * read and decrypt it on every call. Undefined when the organization has no such connection.
   */
  openConnection?(orgId: string, pcid: string): Promise<ToolConnection | undefined>;
  /**
   * The largest JSON-RPC request body the HTTP gateway takes on this server's path, when its tools
   * accept more than DEFAULT_MAX_REQUEST_BYTES (codeagent: five 15 MB images); in-process calls
   * (steps, agents) have no such limit.
   */
  readonly maxRequestBytes?: number;
  listTools(context: ListContext): Promise<readonly ToolEntry[]>;
  /**
   * For how many more milliseconds the list listTools last answered stays as it is, when the
   * server's source bounds it (a remote server whose list said `ttlMs`): the most a 2026 caller is
   * told to keep it (modern.ts, listCacheHint). Absent: the gateway's own hint.
   */
  listFreshForMs?(): number;
  /**
   * The list listTools last answered, when the server keeps one (a remote server: even past its
   * freshness), so that reading one tool's schema (its `x-mcp-header` declarations) costs the
   * source no request. Absent, or undefined before anything was listed: list the tools.
   */
  keptTools?(): readonly ToolEntry[] | undefined;
  /** throws ToolFailure (ran and failed) or ToolCallError (could not be called: unknown tool, bad arguments) */
  callTool(name: string, args: Record<string, unknown>, context: CallContext): Promise<ToolOutput>;
  /**
   * Set on a custom server marked durable (`durable` of POST /api/v1/servers): every call of its
   * tools runs as a Temporal-backed task with this retry policy (src/tools/custom/durable.ts).
   */
  readonly durable?: DurablePolicy;
  /** a remote MCP server: a durable attempt may be answered with the remote's own task, which it follows (CallContext.upstreamTask) */
  readonly followsUpstreamTasks?: boolean;
  /**
   * Per tool, its own policy or `false` (a plain proxied call), over `durable` (`durableTools` of
   * POST /api/v1/servers; src/common/durable-tools.ts resolves a tool's policy).
   */
  readonly durableTools?: DurableTools;
  /** per-tool time limit, when a tool needs more or less than the dispatcher's default */
  timeoutMs?(name: string): number | undefined;
}

/** Where an organization's own servers come from (custom servers, workflows as tools, …). */
export interface ServerSource {
  servers(orgId: string): Promise<readonly ToolServer[]>;
  /**
   * The organization's server named `name`, if the source has one; without this, the catalog
   * looks through servers(). Every tools/call resolves its server: a lookup by name spares
   * building the whole list. A plain value when the answer needs no lookup (a name the source
   * cannot have): the catalog then makes no promise for it.
   */
  server?(orgId: string, name: string): ToolServer | undefined | Promise<ToolServer | undefined>;
  /**
   * Whether some organization (any) may have a server at `name`: asked without a caller (the
   * OAuth protected-resource metadata of a server path), so it says nothing of whose. Without it
   * the source counts as one that may have any name.
   */
  mayServe?(name: string): boolean | Promise<boolean>;
}

/** The dispatcher's answer: a tool's output, or the failure of a tool that ran. */
export type ToolResult =
  | { isError: false; value: Record<string, unknown>; content?: ContentBlock[]; inputRequired?: Record<string, unknown> }
  | { isError: true; message: string; value: Record<string, unknown>; content?: ContentBlock[] };
