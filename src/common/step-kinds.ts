/**
 * Which step kinds the runStep activity executes; the others (waits, approvals, chained triggers)
 * run in the workflow. Kept apart from definition.ts so workflow code does not bundle zod.
 */
import type { ActivityStep, Step } from './definition';

const ACTIVITY_STEP_TYPES: ReadonlySet<Step['type']> = new Set<ActivityStep['type']>(['template', 'code', 'http', 'tool']);

export function isActivityStep(step: Step): step is ActivityStep {
  return ACTIVITY_STEP_TYPES.has(step.type);
}
