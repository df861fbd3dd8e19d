/**
 * The `tool` step's schema (sandbox-safe: zod and src/common/ only). It calls a tool of any
 * gateway server in process (never over HTTP), as the run's organization. With `until` it is a
 * durable poll, which the workflow runs itself between its calls (workflows/steps/poll.ts).
 */
import { z } from 'zod';
import { MAX_DURATION_MS, stepKindSchema, UntilSchema } from '../../../src/common/step-schema';

export const ToolStepSchema = stepKindSchema('tool', {
  /** a server path such as `web-search` */
  server: z.string().min(1).max(200).regex(/^\/?[A-Za-z0-9_.-]+$/, 'must be a server path such as web-search'),
  tool: z.string().min(1).max(200),
  /** interpolated leaf by leaf; a string that is exactly one placeholder keeps the value's type */
  arguments: z.record(z.string(), z.unknown()).default({}),
  timeoutMs: z.number().int().min(100).max(300_000).default(60_000),
  /**
   * A durable poll: while the condition on the tool's JSON result is false, the workflow sleeps
   * on a Temporal timer (the step is PAUSED, no worker is held) and calls the tool again.
   */
  until: UntilSchema.optional(),
  /** seconds between calls while `until` is false (default 5); only with `until` */
  pollSeconds: z.number().int().min(1).max(86_400).optional(),
  /** give up (the step ends in TIMEOUT) when `until` is still false after this long (default 3600); only with `until` */
  maxWaitSeconds: z.number().int().min(1).max(MAX_DURATION_MS / 1000).optional(),
}).superRefine((step, ctx) => {
  for (const field of ['pollSeconds', 'maxWaitSeconds'] as const) {
    if (step[field] !== undefined && step.until === undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'applies only with until' });
  }
});
export type ToolStep = z.infer<typeof ToolStepSchema>;
