/** The `waitUntil` step: the run sleeps on a Temporal timer until an instant (its execution: workflows/steps/timers.ts). */
import { z } from 'zod';
import { stepKindSchema, type DefinitionStepKind } from '../step-schema';

export const WaitUntilStepSchema = stepKindSchema('waitUntil', {
  /** an ISO 8601 instant, or a placeholder such as `{{inputs.sendAt}}` that renders one */
  until: z.string().min(1).max(500),
});
export type WaitUntilStep = z.infer<typeof WaitUntilStepSchema>;

export const waitUntilStepKind = { type: 'waitUntil', schema: WaitUntilStepSchema, runsIn: 'workflow' } as const satisfies DefinitionStepKind<WaitUntilStep>;
