/**
 * What a caller of tools sees of the dispatcher (dispatcher.ts): one call by organization, server
 * path and tool name. Activities and agents take this, never the dispatcher or the tools barrel.
 */
import type { InputRoundTrip, ToolProgress, ToolResult, UpstreamTaskHold } from './server';

export interface CallOptions {
  idempotencyKey?: string;
  /**
   * The caller's cancellation. Read only when the tool reads its own signal or the call fails, so
   * a caller may pass a getter that makes it then (the tool gateway does: see LazyAbortController).
   */
  signal?: AbortSignal;
  /** `X-Pf-Forward-*` headers of the invoking request, already reduced by forwardableHeaders() */
  forwardHeaders?: Readonly<Record<string, string>>;
  /** the caller's own time limit; the call ends at the earlier of it and the tool's */
  timeoutMs?: number;
  progress?: (report: ToolProgress) => void;
  /** a 2026 caller that can receive `input_required` and answer it (the tool gateway's 2026 era); see CallContext.roundTrip */
  roundTrip?: InputRoundTrip;
  /**
   * A call of a durable server's tool (src/tools/custom/durable.ts) runs as a task; a plain call
   * waits this long for its result, then answers a TIMEOUT naming the task to poll (the call goes
   * on). Default: the task result wait (50 s).
   */
  durableWaitMs?: number;
  /** the API key (or grant) behind the caller's token: a durable call's audit records name it (the tool gateway sets it) */
  keyId?: string;
  /**
   * One attempt of a durable call, made by its activity: the server is called directly, not
   * through another task, and `timeoutMs` alone bounds it (the server's `attemptTimeoutSeconds`).
   */
  durableAttempt?: boolean;
  /** a durable attempt's hold on a remote MCP server's own task (CallContext.upstreamTask) */
  upstreamTask?: UpstreamTaskHold;
}

export interface ToolCaller {
  call(orgId: string, serverPath: string, toolName: string, args: Record<string, unknown>, options?: CallOptions): Promise<ToolResult>;
}
