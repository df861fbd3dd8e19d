/**
 * The in-process tool dispatcher: the one place tools are listed and called, by the HTTP gateway,
 * the discovery tools and workflow `tool` steps alike (ARCHITECTURE.md: steps never go over HTTP).
 * It resolves a server path for an organization through the catalog, opens the `PCID` connection
 * of application servers, runs the call under a deadline, and tells a tool that failed (a result
 * with `isError`) from a call that could not be made (a ToolCallError).
 */
import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import { LazyAbortController } from '../common/lazy-abort';
import type { Logger } from '../observability/logger';
import type { FlowgateMetrics } from '../observability/metrics';
import { tracer, tracingOn } from '../observability/tracing';
import type { ToolCatalog } from './catalog';
import type { ConnectionStore } from './connections';
import type { CallOptions, ToolCaller } from './caller';
import type { DurablePolicy } from '../common/durable-call';
import { durablePolicyFor } from '../common/durable-tools';
import {
  ToolCallError, ToolFailure, type CallContext, type ToolConnection, type ToolEntry, type ToolResult, type ToolOutput, type ToolServer,
  type ToolServices,
} from './server';

export type { CallOptions, ToolCaller } from './caller';

export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

const noop = (): void => undefined;

/** Runs a call of a durable server's tool as its task and waits for it (src/tools/custom/durable.ts). */
export interface DurableRunner {
  call(orgId: string, server: ToolServer, policy: DurablePolicy, toolName: string, args: Record<string, unknown>, options: CallOptions): Promise<ToolResult>;
}

export interface DispatcherOptions {
  catalog: ToolCatalog;
  /** where calls of durable servers' tools go (absent: they are called directly, as any other) */
  durable?: DurableRunner;
  services: ToolServices;
  defaultTimeoutMs?: number;
  metrics?: Pick<FlowgateMetrics, 'toolCall'>;
}

/** The outcome label of a call: `ok`, `error` (the tool ran and failed), or the ToolCallError code in lower case. */
function outcomeOf(result: ToolResult | undefined, error: unknown): string {
  if (result) return result.isError ? 'error' : 'ok';
  return error instanceof ToolCallError ? error.code.toLowerCase() : 'exception';
}

export class ToolDispatcher implements ToolCaller {
  constructor(private readonly options: DispatcherOptions) {}

  get connections(): ConnectionStore {
    return this.options.services.connections;
  }

  get services(): ToolServices {
    return this.options.services;
  }

  private get log(): Logger {
    return this.options.services.log;
  }

  /** Every server the organization may use: the built-ins, then its own. */
  servers(orgId: string): Promise<ToolServer[]> {
    return this.options.catalog.servers(orgId);
  }

  /** A built-in as a plain value, another server as a promise (see ToolCatalog.server). */
  server(orgId: string, serverPath: string): ToolServer | Promise<ToolServer> {
    return this.options.catalog.server(orgId, serverPath);
  }

  /** Whether any organization may have a server at `serverPath` (ToolCatalog.mayServe). */
  mayServe(serverPath: string): Promise<boolean> {
    return this.options.catalog.mayServe(serverPath);
  }

  async list(orgId: string, serverPath: string, signal?: AbortSignal): Promise<readonly ToolEntry[]> {
    const server = await this.server(orgId, serverPath);
    return this.listOf(server, orgId, signal);
  }

  /** The tools of one server the caller already holds (listServers, discovery). */
  listOf(server: ToolServer, orgId: string, signal: AbortSignal = AbortSignal.timeout(this.options.defaultTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS)): Promise<readonly ToolEntry[]> {
    return server.listTools({ orgId, signal, services: this.options.services });
  }

  /**
   * One tool call, counted (flowgate_tool_calls_total) and traced (a `tool server/tool` span).
   * `target`: the server's path, or the server itself when the caller resolved it already.
   */
  call(orgId: string, target: string | ToolServer, toolName: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<ToolResult> {
    const server = typeof target === 'string' ? target.replace(/^\/+|\/+$/g, '') : target.name;
    if (!tracingOn()) return this.measured(server, orgId, target, toolName, args, options, undefined);
    return tracer().startActiveSpan(`tool ${server}/${toolName}`, { kind: SpanKind.INTERNAL, attributes: { 'flowgate.tool.server': server, 'flowgate.tool.name': toolName } },
      (span) => this.measured(server, orgId, target, toolName, args, options, span));
  }

  private async measured(
    server: string, orgId: string, target: string | ToolServer, toolName: string, args: Record<string, unknown>, options: CallOptions, span: Span | undefined,
  ): Promise<ToolResult> {
    const started = performance.now();
    let result: ToolResult | undefined;
    let failure: unknown;
    try {
      result = await this.callOnce(orgId, target, toolName, args, options);
      return result;
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      const outcome = outcomeOf(result, failure);
      // Names a caller made up are not labels: one scan of random names would flood the registry.
      const unknownServer = outcome === 'unknown_server';
      this.options.metrics?.toolCall(unknownServer ? '(unknown)' : server, unknownServer || outcome === 'unknown_tool' ? '(unknown)' : toolName,
        outcome, (performance.now() - started) / 1000);
      if (span) {
        span.setAttribute('flowgate.tool.outcome', outcome);
        if (outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
        span.end();
      }
    }
  }

  private async callOnce(orgId: string, target: string | ToolServer, toolName: string, args: Record<string, unknown>, options: CallOptions): Promise<ToolResult> {
    const server = typeof target === 'string' ? await this.server(orgId, target) : target;
    // a durable server's tool runs as its task, whose activity calls back here for each attempt (durableAttempt)
    const durable = options.durableAttempt || !this.options.durable ? undefined : durablePolicyFor(server.durable, server.durableTools, toolName);
    if (durable && this.options.durable) return this.options.durable.call(orgId, server, durable, toolName, args, options);
    const connection = server.application === undefined ? undefined : await this.openConnection(orgId, server, args.PCID);

    const limit = server.timeoutMs?.(toolName) ?? this.options.defaultTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    // a durable attempt's deadline is its server's own (attemptTimeoutSeconds, or a followed task's)
    const timeoutMs = options.timeoutMs === undefined ? limit : options.durableAttempt ? options.timeoutMs : Math.min(limit, options.timeoutMs);
    // The call's signal is made (and tied to the caller's) only when the tool reads it.
    const abort = new LazyAbortController();
    let untie: (() => void) | undefined;
    const signal = (): AbortSignal => {
      if (untie === undefined) {
        const outer = options.signal;
        untie = noop;
        if (outer?.aborted) {
          abort.abort(outer.reason);
        } else if (outer) {
          const onOuterAbort = (): void => abort.abort(outer.reason);
          outer.addEventListener('abort', onOuterAbort, { once: true });
          untie = () => outer.removeEventListener('abort', onOuterAbort);
        }
      }
      return abort.signal;
    };
    const context: CallContext = {
      orgId,
      get signal() {
        return signal();
      },
      services: this.options.services,
      forwardHeaders: options.forwardHeaders ?? {},
      idempotencyKey: options.idempotencyKey,
      deadline: Date.now() + timeoutMs,
      connection,
      progress: options.progress ?? noop,
      progressWanted: options.progress !== undefined,
      ...(options.roundTrip ? { roundTrip: options.roundTrip } : {}),
      ...(options.upstreamTask ? { upstreamTask: options.upstreamTask } : {}),
    };
    let timer: NodeJS.Timeout | undefined;
    // made only when needed: an Error captures a stack, which costs on every call
    let timeoutError: ToolCallError | undefined;
    try {
      const output = await new Promise<ToolOutput>((resolve, reject) => {
        timer = setTimeout(() => {
          timeoutError = new ToolCallError('TIMEOUT', `${toolName} did not finish within ${timeoutMs} ms`);
          reject(timeoutError);
          abort.abort(timeoutError);
        }, timeoutMs);
        server.callTool(toolName, args, context).then(resolve, reject);
      });
      if (output.isError) {
        const message = typeof output.value.error === 'string' ? output.value.error : firstText(output.content) ?? `${toolName} failed`;
        return { isError: true, message, value: output.value, content: output.content };
      }
      return { isError: false, value: output.value, content: output.content, ...(output.inputRequired ? { inputRequired: output.inputRequired } : {}) };
    } catch (error) {
      // whatever the handler threw on its way out of an abort, the call timed out
      if (timeoutError) throw timeoutError;
      // the caller gave up (a cancelled step, a closed HTTP request): its reason, not the handler's noise
      if (options.signal?.aborted) throw options.signal.reason instanceof Error ? options.signal.reason : error;
      if (error instanceof ToolCallError) throw error;
      if (error instanceof ToolFailure) return { isError: true, message: error.message, value: { ...error.details, error: error.message } };
      this.log.error('tool failed unexpectedly', { server: server.name, tool: toolName, orgId, error });
      throw error;
    } finally {
      clearTimeout(timer);
      untie?.();
    }
  }

  private async openConnection(orgId: string, server: ToolServer, pcid: unknown): Promise<ToolConnection> {
    if (typeof pcid !== 'string' || pcid === '') {
      throw new ToolCallError('INVALID_ARGUMENTS', `arguments.PCID: /${server.name} is an application server; every tool needs the PCID of a ${server.application} connection`);
    }
    const connection = await (server.openConnection ? server.openConnection(orgId, pcid) : this.connections.open(orgId, pcid));
    if (!connection) throw new ToolCallError('CONNECTION_REFUSED', `no connection ${pcid} in this organization`);
    if (connection.application !== server.application) {
      throw new ToolCallError('CONNECTION_REFUSED', `connection ${pcid} is a ${connection.application} connection; /${server.name} needs a ${server.application} connection`);
    }
    return connection;
  }
}

function firstText(content: readonly { type: string; [k: string]: unknown }[] | undefined): string | undefined {
  const text = content?.find((c) => c.type === 'text')?.text;
  return typeof text === 'string' ? text : undefined;
}
