/** The `delay` step: the run sleeps on a Temporal timer (its execution: workflows/steps/timers.ts). */
import type { z } from 'zod';
import { DurationSchema, stepKindSchema, type DefinitionStepKind } from '../step-schema';

export const DelayStepSchema = stepKindSchema('delay', {
  duration: DurationSchema,
});
export type DelayStep = z.infer<typeof DelayStepSchema>;

export const delayStepKind = { type: 'delay', schema: DelayStepSchema, runsIn: 'workflow' } as const satisfies DefinitionStepKind<DelayStep>;
