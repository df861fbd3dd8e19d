/** The `template` step's schema (sandbox-safe: zod and src/common/ only). */
import { z } from 'zod';
import { stepKindSchema } from '../../../src/common/step-schema';

export const TemplateStepSchema = stepKindSchema('template', {
  format: z.enum(['markdown', 'plaintext']).default('markdown'),
  template: z.string().max(1_000_000),
});
export type TemplateStep = z.infer<typeof TemplateStepSchema>;
