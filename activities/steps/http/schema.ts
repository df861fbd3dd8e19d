/** The `http` step's schema (sandbox-safe: zod and src/common/ only). */
import { z } from 'zod';
import { stepKindSchema } from '../../../src/common/step-schema';

export const HttpStepSchema = stepKindSchema('http', {
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']).default('GET'),
  url: z.string().min(1).max(8192),
  headers: z.record(z.string(), z.string()).default({}),
  /** A string is sent as is (after interpolation); an object is interpolated leaf by leaf and sent as JSON. */
  body: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
  timeoutMs: z.number().int().min(100).max(300_000).default(30_000),
  /** When false, a non-2xx answer is a successful step whose result carries the status. */
  failOnHttpError: z.boolean().default(true),
  /**
   * The `Idempotency-Key` header sent with the request: by default `<runId>:<stepIndex>`, the same
   * on every retry of the step (a step in flight when a worker dies is sent again); a string
   * (interpolated) to send instead, or false to send none. A header of that name in `headers` wins.
   */
  idempotencyKey: z.union([z.literal(false), z.string().min(1).max(255)]).optional(),
});
export type HttpStep = z.infer<typeof HttpStepSchema>;
