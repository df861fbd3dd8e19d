/**
 * Which steps the runStep activity executes and which run in the workflow. Kept apart from
 * definition.ts so workflow code does not bundle zod.
 *
 * The workflow knows its own kinds (waits, approvals, chained triggers, agents, control flow) and
 * nothing else: every other type is an activity step, the built-in ones (template, code, http,
 * tool) and those registered at start (startFlowgate's `stepKinds`, activities/steps/), which the
 * workflow cannot list since it never sees the registry. A definition was validated against the
 * gateway's kinds, so an unknown type here is a registered kind; the worker's runStep finds it.
 */
import type { ActivityStep, CodeStep, HttpStep, Step, TemplateStep, ToolStep } from './definition';

type WorkflowStep = Exclude<Step, TemplateStep | CodeStep | HttpStep | ToolStep>;

const WORKFLOW_STEP_TYPES: ReadonlySet<string> = new Set<WorkflowStep['type']>(['delay', 'waitUntil', 'approval', 'trigger', 'agent', 'branch', 'forEach', 'parallel']);

/** Runs in the runStep activity: a built-in activity kind or a registered one. */
export function isActivityStep(step: Step): step is Step & ActivityStep {
  return !isWorkflowStepType(step.type);
}

/** Runs in the workflow: a wait, an approval, a chained trigger, an agent, or control flow. */
export function isWorkflowStep(step: Step): step is WorkflowStep {
  return isWorkflowStepType(step.type);
}

/** A type the workflow runs itself (so no registered kind may take it). */
export function isWorkflowStepType(type: string): boolean {
  return WORKFLOW_STEP_TYPES.has(type);
}
