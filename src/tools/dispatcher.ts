/**
 * The in-process tool dispatcher: the one place tools are listed and called, by the HTTP gateway
 * and by workflow `tool` steps alike (ARCHITECTURE.md: steps never go over HTTP). It resolves a
 * server path for an organization, validates arguments against the tool's `inputSchema`, opens the
 * `PCID` connection of application servers, runs the handler under a timeout, and tells a tool
 * that failed (a result with `isError`) from a call that could not be made (a ToolCallError).
 */
import Ajv, { type ValidateFunction } from 'ajv';
import type { Logger } from '../logger';
import type { ConnectionStore } from './connections';
import type { OrgServerProvider, ToolDefinition, ToolEntry, ToolResult, ToolServer } from './types';
import { ToolFailure } from './types';

export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

export type ToolCallErrorCode = 'UNKNOWN_SERVER' | 'UNKNOWN_TOOL' | 'INVALID_ARGUMENTS' | 'CONNECTION_REFUSED' | 'TIMEOUT';

/** A call that could not be made; the gateway maps each code to a JSON-RPC error. */
export class ToolCallError extends Error {
  override readonly name = 'ToolCallError';
  constructor(readonly code: ToolCallErrorCode, message: string) {
    super(message);
  }
}

export interface CallOptions {
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface ToolCaller {
  call(orgId: string, serverPath: string, toolName: string, args: Record<string, unknown>, options?: CallOptions): Promise<ToolResult>;
}

export interface DispatcherOptions {
  /** built-in servers, visible to every organization */
  builtIns: readonly ToolServer[];
  /** custom servers of one organization */
  orgServers?: OrgServerProvider;
  connections: ConnectionStore;
  log: Logger;
  defaultTimeoutMs?: number;
}

export class ToolDispatcher implements ToolCaller {
  private readonly ajv = new Ajv({ allErrors: true, strict: false });
  private readonly validators = new WeakMap<ToolDefinition, ValidateFunction>();

  constructor(private readonly options: DispatcherOptions) {}

  get connections(): ConnectionStore {
    return this.options.connections;
  }

  /** Every server the organization may use: the built-ins, then its own custom servers. */
  async servers(orgId: string): Promise<ToolServer[]> {
    const custom = (await this.options.orgServers?.(orgId)) ?? [];
    const builtInNames = new Set(this.options.builtIns.map((s) => s.name));
    return [...this.options.builtIns, ...custom.filter((s) => !builtInNames.has(s.name))];
  }

  async server(orgId: string, serverPath: string): Promise<ToolServer> {
    const name = serverPath.replace(/^\/+/, '');
    const found = (await this.servers(orgId)).find((s) => s.name === name);
    if (!found) throw new ToolCallError('UNKNOWN_SERVER', `no tool server at /${name}`);
    return found;
  }

  async list(orgId: string, serverPath: string): Promise<ToolEntry[]> {
    const server = await this.server(orgId, serverPath);
    return server.tools.map(toEntry);
  }

  async call(orgId: string, serverPath: string, toolName: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<ToolResult> {
    const server = await this.server(orgId, serverPath);
    const tool = server.tools.find((t) => t.name === toolName);
    if (!tool) throw new ToolCallError('UNKNOWN_TOOL', `server /${server.name} has no tool ${toolName}`);
    this.validate(tool, args);

    let connection;
    if (server.application !== undefined) {
      const pcid = String(args.PCID);
      connection = await this.options.connections.open(orgId, pcid);
      if (!connection) throw new ToolCallError('CONNECTION_REFUSED', `no connection ${pcid} in this organization`);
      if (connection.application !== server.application) {
        throw new ToolCallError('CONNECTION_REFUSED', `connection ${pcid} is a ${connection.application} connection; /${server.name} needs a ${server.application} connection`);
      }
    }

    const timeoutMs = tool.timeoutMs ?? this.options.defaultTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    const controller = new AbortController();
    const onOuterAbort = (): void => controller.abort(options.signal?.reason);
    if (options.signal?.aborted) controller.abort(options.signal.reason);
    options.signal?.addEventListener('abort', onOuterAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    // made only when needed: an Error captures a stack, which costs on every call
    let timeoutError: ToolCallError | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timeoutError = new ToolCallError('TIMEOUT', `${toolName} did not finish within ${timeoutMs} ms`);
        reject(timeoutError);
        controller.abort(timeoutError);
      }, timeoutMs);
    });
    try {
      const value = await Promise.race([
        tool.handler(args, { orgId, idempotencyKey: options.idempotencyKey, signal: controller.signal, connection }),
        timedOut,
      ]);
      return { isError: false, value };
    } catch (error) {
      // whatever the handler threw on its way out of an abort, the call timed out
      if (timeoutError) throw timeoutError;
      // the caller gave up (a cancelled step, a closed HTTP request): its reason, not the handler's noise
      if (options.signal?.aborted) throw options.signal.reason instanceof Error ? options.signal.reason : error;
      if (error instanceof ToolCallError) throw error;
      if (error instanceof ToolFailure) return { isError: true, message: error.message };
      this.options.log.error('tool failed unexpectedly', { server: server.name, tool: toolName, orgId, error });
      throw error;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onOuterAbort);
    }
  }

  private validate(tool: ToolDefinition, args: Record<string, unknown>): void {
    let validate = this.validators.get(tool);
    if (!validate) {
      validate = this.ajv.compile(tool.inputSchema);
      this.validators.set(tool, validate);
    }
    if (validate(args)) return;
    const problems = (validate.errors ?? []).map((e) => {
      const where = e.instancePath ? `arguments${e.instancePath.replace(/\//g, '.')}` : 'arguments';
      const extra = e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: unknown }).additionalProperty)})` : '';
      return `${where} ${e.message ?? 'is invalid'}${extra}`;
    });
    throw new ToolCallError('INVALID_ARGUMENTS', `invalid arguments for ${tool.name}: ${problems.join('; ')}`);
  }
}

function toEntry(tool: ToolDefinition): ToolEntry {
  return { name: tool.name, description: tool.description, inputSchema: tool.inputSchema };
}
