/**
 * The schema of a server's `durable` settings (src/common/durable-call.ts, DurablePolicy), apart
 * from that module so that the workflow bundle, which imports it, stays free of zod.
 */
import { z } from 'zod';
import { MAX_DURABLE_ATTEMPTS, MAX_DURABLE_INTERVAL_SECONDS, MAX_DURABLE_TIMEOUT_SECONDS, type DurablePolicy } from '../common/durable-call';

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
