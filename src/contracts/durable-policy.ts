/**
 * The schemas of durable calls' shapes (src/common/durable-call.ts and durable-tools.ts): a server's
 * `durable` settings, its per-tool `durableTools`, and what a durable attempt heartbeats; apart from
 * those modules so that the workflow bundle, which imports them, stays free of zod.
 */
import { z } from 'zod';
import { MAX_DURABLE_ATTEMPTS, MAX_DURABLE_INTERVAL_SECONDS, MAX_DURABLE_TIMEOUT_SECONDS, type DurableHeartbeat, type DurablePolicy, type UpstreamTask } from '../common/durable-call';
import { MAX_DURABLE_TOOL_OVERRIDES, type DurableTools } from '../common/durable-tools';

export const DurablePolicySchema = z.object({
  maxAttempts: z.number().int().min(1).max(MAX_DURABLE_ATTEMPTS),
  initialIntervalSeconds: z.number().min(0.1).max(MAX_DURABLE_INTERVAL_SECONDS).optional(),
  backoff: z.number().min(1).max(10).optional(),
  attemptTimeoutSeconds: z.number().min(1).max(3600).optional(),
  timeoutSeconds: z.number().min(1).max(MAX_DURABLE_TIMEOUT_SECONDS).optional(),
}).strict();

type Same<A extends B, B extends C, C = A> = [A, B, C];
/** Checked by the build: what the schema parses is exactly DurablePolicy. */
export type DurablePolicySchemaHolds = Same<z.infer<typeof DurablePolicySchema>, DurablePolicy>;

/** `durableTools`: per tool name of the server, its own policy, or `false` for a plain proxied call. */
export const DurableToolsSchema = z.record(z.string().min(1).max(200), z.union([DurablePolicySchema, z.literal(false)]))
  .refine((tools) => Object.keys(tools).length <= MAX_DURABLE_TOOL_OVERRIDES, { message: `at most ${MAX_DURABLE_TOOL_OVERRIDES} tools` });

/** A remote MCP server's own task, as the attempt that was handed it keeps it in its heartbeat. */
export const UpstreamTaskSchema = z.object({
  taskId: z.string().min(1).max(1000),
  era: z.enum(['modern', 'legacy']),
  pollIntervalMs: z.number().int().min(0).optional(),
});
export const DurableHeartbeatSchema = z.object({ attempt: z.number().int(), upstreamTask: UpstreamTaskSchema.optional() });

/** Checked by the build: what the schemas parse is exactly the shapes of src/common. */
export type DurableShapesHold = [Same<z.infer<typeof UpstreamTaskSchema>, UpstreamTask>, Same<z.infer<typeof DurableHeartbeatSchema>, DurableHeartbeat>,
  Same<z.infer<typeof DurableToolsSchema>, Record<string, DurablePolicy | false>>, DurableTools];
