/**
 * The tool gateway's two failure families, apart from the modules that raise them so that
 * activities and workflow-facing code can tell them apart without loading the gateway (the
 * src/tools barrel loads every server kind): a tool that ran and failed (a result with
 * `isError: true`) and a call that could not be made (a JSON-RPC error in the gateway).
 */

/**
 * A tool that ran and failed for a reason the caller should see (the upstream refused, the
 * message could not be delivered): answered as a result with `isError: true`, not a protocol
 * error. `details` (an upstream's code, status, body) joins `error` in the structured content.
 */
export class ToolFailure extends Error {
  override readonly name = 'ToolFailure';
  constructor(message: string, readonly details: Record<string, unknown> = {}) {
    super(message);
  }
}

/**
 * `UNANSWERABLE`: the call's run would wait on an answer its caller cannot give (an approval, to a
 * caller that cannot be asked for one: see src/tools/servers/workflows/); refused before anything ran.
 */
export type ToolCallErrorCode = 'UNKNOWN_SERVER' | 'UNKNOWN_TOOL' | 'INVALID_ARGUMENTS' | 'CONNECTION_REFUSED' | 'TIMEOUT' | 'UNAVAILABLE' | 'UNANSWERABLE';

/** A call that could not be made; the gateway maps each code to a JSON-RPC error. */
export class ToolCallError extends Error {
  override readonly name = 'ToolCallError';
  constructor(readonly code: ToolCallErrorCode, message: string) {
    super(message);
  }
}
