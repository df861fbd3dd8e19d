/**
 * The shape of a tool server and its tools, shared by built-in and custom servers. A server is a
 * path under the gateway's base path with a list of tools; a tool is a JSON Schema for its
 * arguments and a handler that returns a JSON object (the call's `structuredContent`).
 */

/** A JSON Schema object as the contract's 2.7 tool entry carries it. */
export interface JsonSchemaObject {
  type: 'object';
  properties: Record<string, unknown>;
  required: string[];
  additionalProperties?: boolean;
  [keyword: string]: unknown;
}

/** The contract's 2.7 tool entry. */
export interface ToolEntry {
  name: string;
  description: string;
  inputSchema: JsonSchemaObject;
}

export interface ToolConnection {
  id: string;
  application: string;
  name: string | null;
  credentials: Record<string, unknown>;
}

export interface ToolContext {
  orgId: string;
  /** the same for every attempt of one logical call (a workflow's run and step) */
  idempotencyKey?: string;
  /** aborted on timeout or when the caller gives up */
  signal: AbortSignal;
  /** the connection named by `PCID`, already checked to be the org's and of the server's application */
  connection?: ToolConnection;
}

export interface ToolDefinition extends ToolEntry {
  /** default: the dispatcher's (30 s) */
  timeoutMs?: number;
  handler(args: Record<string, unknown>, context: ToolContext): Promise<Record<string, unknown>>;
}

export interface ToolServer {
  /** the server id, also its path segment: `/tools/<name>` */
  name: string;
  description: string;
  /** built into flowgate (true) or a custom server of one organization (false) */
  embedded: boolean;
  /** set on application servers: every tool needs a `PCID` of a connection of this application */
  application?: string;
  tools: readonly ToolDefinition[];
}

/** Custom servers visible to one organization (its own); built-ins are visible to all. */
export type OrgServerProvider = (orgId: string) => Promise<readonly ToolServer[]> | readonly ToolServer[];

/**
 * A tool that ran and failed for a reason the caller should see (the upstream refused, the
 * message could not be delivered): answered as a result with `isError: true`, not a protocol error.
 */
export class ToolFailure extends Error {
  override readonly name = 'ToolFailure';
}

export type ToolResult =
  | { isError: false; value: Record<string, unknown> }
  | { isError: true; message: string };
