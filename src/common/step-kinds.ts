/**
 * Step types for code that may not carry zod (the workflow bundle, and what it imports): the
 * control flow constructs, and a narrowing by type. The kinds' schemas are in src/common/steps/
 * (the workflow's own) and activities/steps/ (the runStep activity's); which of them the workflow
 * runs itself is workflows/steps/index.ts's to say.
 */
import type { FlowStep, Step, WorkflowStep } from './definition';

/** The control flow constructs of the definition language (definition.ts, workflows/interpreter/). */
export const FLOW_STEP_TYPES: readonly FlowStep['type'][] = ['branch', 'forEach', 'parallel'];

/**
 * `step` is a workflow step of `type`. Sound because a type names one kind only (definitionSchemas
 * refuses a type taken twice); the narrowing TypeScript cannot do itself, since an activity
 * step's `type` is any string.
 */
export function isStepOf<T extends WorkflowStep['type']>(step: Step, type: T): step is Extract<WorkflowStep, { type: T }> {
  return step.type === type;
}

/** The step lists a control flow step holds, in order (branch cases then default, forEach steps, parallel branches); none for other steps. */
export function nestedLists(step: Step): Step[][] {
  if (isStepOf(step, 'branch')) return [...step.cases.map((c) => c.steps), step.default ?? []];
  if (isStepOf(step, 'forEach')) return [step.steps];
  if (isStepOf(step, 'parallel')) return step.branches.map((b) => b.steps);
  return [];
}
