/**
 * What a caller of tools sees of the dispatcher (dispatcher.ts): one call by organization, server
 * path and tool name. Activities and agents take this, never the dispatcher or the tools barrel.
 */
import type { InputRoundTrip, ToolProgress, ToolResult } from './server';

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
}

export interface ToolCaller {
  call(orgId: string, serverPath: string, toolName: string, args: Record<string, unknown>, options?: CallOptions): Promise<ToolResult>;
}
