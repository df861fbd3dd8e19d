/** The `code` step's schema (sandbox-safe: zod and src/common/ only). */
import { z } from 'zod';
import { stepKindSchema } from '../../../src/common/step-schema';

export const CodeStepSchema = stepKindSchema('code', {
  /** Body of a function of `inputs`, `steps` and `run`; `console.*` output goes to stdout.txt. */
  source: z.string().min(1).max(1_000_000),
  timeoutMs: z.number().int().min(10).max(300_000).default(5_000),
  memoryLimitMb: z.number().int().min(8).max(512).default(64),
});
export type CodeStep = z.infer<typeof CodeStepSchema>;
