/**
 * The execution of each kind the workflow runs itself (its definition side, schema and checks, is
 * in src/common/steps/): one entry per kind of WORKFLOW_STEP_KINDS there, which the compiler
 * demands. Every other type but control flow (workflows/interpreter/) is an activity step, run by
 * the runStep activity (activities/steps/), so the workflow needs no list of those.
 */
import type { ActivityStep, Step, WorkflowStep } from '../../src/common/definition';
import type { RecordStepRequest } from '../../src/common/run-types';
import { FLOW_STEP_TYPES } from '../../src/common/step-kinds';
import type { WorkflowKindStep } from '../../src/common/steps';
import type { Runtime } from '../interpreter/runtime';
import { agentStep } from './agent';
import { triggerStep } from './chain';
import type { Renderer, StepDraft } from './step-draft';
import { delayStep, waitUntilStep, type Pauser } from './timers';

/** What a workflow-side step's execution gets besides its step. */
export interface WorkflowStepContext {
  rt: Runtime;
  place: Pick<RecordStepRequest, 'stepIndex' | 'stepPath'>;
  /** interpolation, in the workflow or through the renderValue activity */
  render: Renderer;
  pauser: Pauser;
  /** the step's label (`3.1.2 · Pause (delay)`), for the commands it issues */
  label: string;
}

type StepOfType = { [K in WorkflowKindStep['type']]: Extract<WorkflowKindStep, { type: K }> };

const WORKFLOW_STEP_EXECUTIONS: { [K in keyof StepOfType]: (step: StepOfType[K], ctx: WorkflowStepContext) => Promise<StepDraft> } = {
  delay: (step, { place, pauser }) => delayStep(step, place.stepIndex, pauser),
  waitUntil: (step, { place, render, pauser }) => waitUntilStep(step, place.stepIndex, render, pauser),
  approval: (step, { rt, place, render, pauser }) => rt.approvals.wait(step, place.stepIndex, render, pauser),
  trigger: (step, { rt, render, label }) => triggerStep(step, rt.input, render, rt.runAutomation, label),
  agent: (step, { rt, place, render, label }) => agentStep(step, rt.input, place.stepPath ?? place.stepIndex, render, label),
};

/** Runs a step of one of the workflow's own kinds. */
export function executeWorkflowKind<K extends keyof StepOfType>(type: K, step: StepOfType[K], ctx: WorkflowStepContext): Promise<StepDraft> {
  return WORKFLOW_STEP_EXECUTIONS[type](step, ctx);
}

function isWorkflowStepType(type: string): boolean {
  return Object.prototype.hasOwnProperty.call(WORKFLOW_STEP_EXECUTIONS, type) || FLOW_STEP_TYPES.some((flow) => flow === type);
}

/** Runs in the runStep activity: a built-in activity kind or a registered one. */
export function isActivityStep(step: Step): step is ActivityStep {
  return !isWorkflowStepType(step.type);
}

/** Runs in the workflow: a wait, an approval, a chained trigger, an agent, or control flow. */
export function isWorkflowStep(step: Step): step is WorkflowStep {
  return isWorkflowStepType(step.type);
}
