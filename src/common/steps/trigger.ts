/** The `trigger` step: a chained run of another trigger, as a child workflow (its execution: workflows/steps/chain.ts). */
import { z } from 'zod';
import { stepKindSchema, type DefinitionStepKind } from '../step-schema';

export const TriggerStepSchema = stepKindSchema('trigger', {
  triggerId: z.string().min(1).max(100),
  /** interpolated leaf by leaf; a string that is exactly one placeholder keeps the value's type */
  inputs: z.record(z.string(), z.unknown()).default({}),
  /** true: wait for the chained run's result; false: fire and forget (the result is its run ID) */
  wait: z.boolean().default(true),
});
export type TriggerStep = z.infer<typeof TriggerStepSchema>;

export const triggerStepKind = { type: 'trigger', schema: TriggerStepSchema, runsIn: 'workflow' } as const satisfies DefinitionStepKind<TriggerStep>;
