/**
 * The kinds the workflow runs itself: a wait, an approval, a chained run, an agent. Each file here
 * is one kind's definition side (its schema and its own checks); its execution is in
 * workflows/steps/, found by type through WORKFLOW_STEP_EXECUTIONS (workflows/steps/index.ts),
 * which the compiler holds to this list. The kinds the runStep activity runs are in
 * activities/steps/; control flow (branch, forEach, parallel) is the definition language itself
 * (definition.ts, workflows/interpreter/).
 */
import type { z } from 'zod';
import { agentStepKind } from './agent';
import { approvalStepKind } from './approval';
import { delayStepKind } from './delay';
import { triggerStepKind } from './trigger';
import { waitUntilStepKind } from './wait-until';

export const WORKFLOW_STEP_KINDS = [delayStepKind, waitUntilStepKind, approvalStepKind, triggerStepKind, agentStepKind] as const;

/** A step of a kind the workflow runs itself. */
export type WorkflowKindStep = z.infer<(typeof WORKFLOW_STEP_KINDS)[number]['schema']>;

export type { AgentStep } from './agent';
export type { ApprovalStep } from './approval';
export type { DelayStep } from './delay';
export type { TriggerStep } from './trigger';
export type { WaitUntilStep } from './wait-until';
