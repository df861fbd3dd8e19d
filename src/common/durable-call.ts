/**
 * Durable tool calls (docs/tool-gateway.md, "Durable calls"): a custom server (generated from an
 * OpenAPI document, or a remote MCP server) marked `durable` runs every call of its tools as one
 * Temporal workflow whose id is the MCP task id, holding one activity that makes the upstream call
 * under Temporal's retry policy built from the server's `durable` settings. Pure, so the workflow
 * (workflows/durable-tool-call.ts), its activity (activities/durable-tool-call.ts) and the gateway
 * (src/tools/custom/durable.ts) share it.
 *
 * Why a workflow and not a Temporal Standalone Activity: flowgate's MCP tasks are workflows (their
 * id, memo, ttl and visibility are read through the workflow API, src/tools/mcp/tasks.ts), and a
 * standalone activity has no memo and another API (experimental in the pinned SDK); one activity in
 * a workflow keeps one task machinery, at the price of a workflow task or two per call.
 */
import type { CallSlot } from './slots';

export const DURABLE_TOOL_CALL_WORKFLOW = 'durableToolCall';

/** The most attempts one durable call may be given. */
export const MAX_DURABLE_ATTEMPTS = 100;
/** The longest overall deadline: a week (the longest task ttl by default). */
export const MAX_DURABLE_TIMEOUT_SECONDS = 7 * 24 * 3600;
export const DEFAULT_DURABLE_INITIAL_INTERVAL_SECONDS = 1;
export const DEFAULT_DURABLE_BACKOFF = 2;
/** The per-attempt deadline when the server names none (the dispatcher's default tool timeout). */
export const DEFAULT_DURABLE_ATTEMPT_TIMEOUT_SECONDS = 30;
/** The longest pause between two attempts. */
export const MAX_DURABLE_INTERVAL_SECONDS = 300;

/**
 * A server's `durable` settings, as `POST`/`PUT /api/v1/servers` take them and `GET` shows them;
 * parsed by DurablePolicySchema (src/contracts/durable-policy.ts). The schema lives there, not here:
 * the workflow bundle imports this module, and zod in it would be instantiated again for every
 * cached run (about 95 modules and 600 KiB each, test/workflows/bundle.test.ts keeps zod out).
 */
export interface DurablePolicy {
  /** attempts in all, the first included (1: no retry, but still a task that survives the gateway) */
  maxAttempts: number;
  /** the pause before the second attempt (default 1 s) */
  initialIntervalSeconds?: number | undefined;
  /** each next pause is this many times the last (default 2), at most MAX_DURABLE_INTERVAL_SECONDS */
  backoff?: number | undefined;
  /** how long one attempt may take (default 30 s) */
  attemptTimeoutSeconds?: number | undefined;
  /** how long the whole call may take, every attempt and pause included (default: no more than the task's ttl) */
  timeoutSeconds?: number | undefined;
}

/** Why an attempt failed, as the retry metric and the audit trail name it. */
export type DurableRetryReason = 'network' | 'timeout' | 'http_5xx' | 'http_429' | 'upstream_error';

/** The workflow's input: everything but the arguments' secrets is plain. */
export interface DurableToolCallInput {
  orgId: string;
  /** the task id: also the workflow id, and the root of every attempt's idempotency key */
  taskId: string;
  /** the custom server's id (its path) */
  server: string;
  serverName: string;
  tool: string;
  args: Record<string, unknown>;
  policy: DurablePolicy;
  /** the same on every attempt: the caller's own key, else one derived from the task id */
  idempotencyKey: string;
  forwardHeaders: Record<string, string>;
  /** the API key (or grant) whose token made the call, for the audit trail; absent for steps and agents */
  keyId?: string;
  /** the task's ttl (ms): the workflow gives up after it */
  ttlMs: number;
  /**
   * The server is a remote MCP server, which may answer an attempt with a task of its own that the
   * attempt then follows to its result (its activity may last until the overall deadline; each
   * request to the remote still has the attempt's deadline). Absent in calls started before it was.
   */
  upstreamTasks?: boolean;
  /** the slot of the organization's concurrency limit the call takes first (a call through the tool gateway, when the limit is set) */
  slot?: CallSlot;
}

/**
 * A remote MCP server's own task, as the attempt that was handed it keeps it in its heartbeat: an
 * attempt after it (the worker died, a poll failed) follows the same task instead of calling again.
 * `era`: `modern` (2026-07-28, the Tasks extension: the result comes inline with `tasks/get`) or
 * `legacy` (2025-11-25: `tasks/get`, then `tasks/result`).
 */
export interface UpstreamTask {
  taskId: string;
  era: 'modern' | 'legacy';
  pollIntervalMs?: number;
}

/** What a durable attempt heartbeats: its number, and the remote's task once it was handed one (parsed by src/contracts/durable-policy.ts). */
export interface DurableHeartbeat {
  attempt: number;
  upstreamTask?: UpstreamTask;
}

/**
 * The workflow's memo: enough to authorize and list the task without reading its input. While the
 * call waits for a slot of its organization's concurrency limit (workflows/durable-call-slot.ts),
 * `waitingForSlot` names the limit, so that `tasks/get` says the call has not been made yet.
 */
export interface DurableToolCallMemo {
  durableToolCall: { orgId: string; server: string; tool: string; ttlMs: number };
  waitingForSlot?: { limit: number };
}

/** The memo key of a durable call waiting for its slot (DurableToolCallMemo). */
export const WAITING_FOR_SLOT_MEMO = 'waitingForSlot';

/** What the workflow answers: the tool's result (a tool error included: it ran). */
export interface DurableToolCallResult {
  isError: boolean;
  value: Record<string, unknown>;
  content?: { type: string; [field: string]: unknown }[];
  message?: string;
  /** how many attempts it took */
  attempts: number;
}

/** The failure types of the activity and the workflow. */
export const DurableFailureType = {
  /** an attempt that may be retried (network, timeout, 5xx, 429) */
  RETRYABLE: 'DurableRetryable',
  /** the upstream refused for good (another 4xx) or the tool reported an error: the result is in the details */
  TOOL_ERROR: 'DurableToolError',
  /** the call could not be made at all (unknown tool, bad arguments, refused connection): its ToolCallError code is in the details */
  NOT_CALLABLE: 'DurableNotCallable',
} as const;

/** The Temporal retry policy of a durable call. */
export function durableRetryPolicy(policy: DurablePolicy): { maximumAttempts: number; initialInterval: number; backoffCoefficient: number; maximumInterval: number; nonRetryableErrorTypes: string[] } {
  return {
    maximumAttempts: policy.maxAttempts,
    initialInterval: Math.round((policy.initialIntervalSeconds ?? DEFAULT_DURABLE_INITIAL_INTERVAL_SECONDS) * 1000),
    backoffCoefficient: policy.backoff ?? DEFAULT_DURABLE_BACKOFF,
    maximumInterval: MAX_DURABLE_INTERVAL_SECONDS * 1000,
    nonRetryableErrorTypes: [DurableFailureType.TOOL_ERROR, DurableFailureType.NOT_CALLABLE],
  };
}

/** The idempotency key every attempt of task `taskId` sends when the caller gave none. */
export function durableIdempotencyKey(taskId: string): string {
  return `flowgate-${taskId}`;
}
