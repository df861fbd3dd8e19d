/**
 * The workflow definition format (ARCHITECTURE.md, "Workflow definitions"): a definition's own
 * fields, the control flow that nests step lists (branch, forEach, parallel), and its steps, each
 * of a step kind that carries its own schema (step-schema.ts): the runStep activity's kinds in
 * their folders in activities/steps/ (built in, listed in BUILT_IN_STEP_KINDS there, or registered
 * at start), the workflow's own in src/common/steps/. `definitionSchemas` builds the schema over
 * them. Validated with zod at the management API; workflows and activities receive the parsed
 * value. Workflow code imports this module's types only.
 */
import { z } from 'zod';
import { flowProblems } from './flow-validation';
import { ExpressionSchema, stepBase, type DefinitionStepKind, type RegisteredStep, type StepCommon } from './step-schema';
import { WORKFLOW_STEP_KINDS, type WorkflowKindStep } from './steps';

/**
 * The schemas of steps and definitions over the step kinds: `builtIn`, the runStep activity's
 * built-in kinds (activities/steps/ BUILT_IN_STEP_KINDS, whose module exports these schemas over
 * them), the workflow's own kinds (src/common/steps/), control flow, then `registered`, the kinds
 * registered at start. A definition that uses only built-in kinds validates the same, with the
 * same messages, whatever is registered; a type no kind has is refused.
 */
export function definitionSchemas(builtIn: readonly DefinitionStepKind[], registered: readonly DefinitionStepKind[] = []) {
  /** Control flow (workflows/interpreter): step lists nested in a step. */
  const StepListSchema = z.array(z.lazy((): z.ZodType<Step, unknown> => StepSchema)).min(1, 'must have at least one step').max(200);

  /** The first case whose `if` holds runs its steps; none holding, `default` runs (when given). */
  const BranchStepSchema = z.object({
    ...stepBase,
    type: z.literal('branch'),
    cases: z.array(z.object({ if: ExpressionSchema, steps: StepListSchema }).strict()).min(1, 'a branch needs at least one case').max(50),
    default: StepListSchema.optional(),
  }).strict();

  /** Runs `steps` once per item of the array `items` evaluates to, `concurrency` items at a time. */
  const ForEachStepSchema = z.object({
    ...stepBase,
    type: z.literal('forEach'),
    items: ExpressionSchema,
    concurrency: z.number().int().min(1).max(50).default(1),
    steps: StepListSchema,
  }).strict();

  /** Runs several step lists at once; `all` waits for every list, `first` for the first that completes. */
  const ParallelStepSchema = z.object({
    ...stepBase,
    type: z.literal('parallel'),
    mode: z.enum(['all', 'first']).default('all'),
    branches: z.array(z.object({ name: z.string().min(1).max(200).optional(), steps: StepListSchema }).strict()).min(2, 'parallel needs at least two branches').max(20),
  }).strict();

  // in this order, which the message for an unknown type lists
  const kinds = [...builtIn, ...WORKFLOW_STEP_KINDS, ...registered];
  const taken = new Set<string>([BranchStepSchema, ForEachStepSchema, ParallelStepSchema].map((schema) => schema.shape.type.value));
  for (const kind of kinds) {
    if (taken.has(kind.type)) throw new Error(`step type ${kind.type} is taken: a built-in kind or one registered twice`);
    taken.add(kind.type);
  }
  const [first, ...rest] = [
    ...builtIn.map((kind) => kind.schema), ...WORKFLOW_STEP_KINDS.map((kind) => kind.schema),
    BranchStepSchema, ForEachStepSchema, ParallelStepSchema, ...registered.map((kind) => kind.schema),
  ];
  if (!first) throw new Error('no step kinds');
  const StepSchema = z.discriminatedUnion('type', [first, ...rest]);
  const byType = new Map(kinds.map((kind) => [kind.type, kind]));

  const WorkflowDefinitionSchema: z.ZodType<WorkflowDefinition, unknown> = z.object({
    name: z.string().min(1).max(200),
    description: z.string().max(5000).optional(),
    timeoutSeconds: z.number().int().min(1).max(31_536_000).default(3600),
    inputSchema: z.record(z.string(), z.unknown()).optional(),
    steps: z.array(StepSchema).min(1).max(200),
    output: z.object({
      stepIndex: z.number().int().min(1),
      fileName: z.string().min(1).max(255).optional(),
    }).strict().optional(),
  }).strict().superRefine((def, ctx) => {
    if (def.output && def.output.stepIndex > def.steps.length) {
      ctx.addIssue({ code: 'custom', path: ['output', 'stepIndex'], message: `no step ${def.output.stepIndex}: the workflow has ${def.steps.length}` });
    }
    for (const problem of flowProblems(def.steps, byType)) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  });
  return { BranchStepSchema, ForEachStepSchema, ParallelStepSchema, StepSchema, WorkflowDefinitionSchema };
}

export interface BranchStep extends StepCommon {
  type: 'branch';
  cases: { if: string; steps: Step[] }[];
  default?: Step[];
}
export interface ForEachStep extends StepCommon {
  type: 'forEach';
  items: string;
  concurrency: number;
  steps: Step[];
}
export interface ParallelStep extends StepCommon {
  type: 'parallel';
  mode: 'all' | 'first';
  branches: { name?: string; steps: Step[] }[];
}
export type FlowStep = BranchStep | ForEachStep | ParallelStep;
/** A step the workflow runs itself: one of its own kinds (src/common/steps/) or control flow. */
export type WorkflowStep = WorkflowKindStep | FlowStep;
/**
 * A step the runStep activity executes, of a kind built in (activities/steps/) or registered at
 * start; its own fields are read by its kind's code only.
 */
export type ActivityStep = RegisteredStep;
export type Step = WorkflowStep | ActivityStep;

export type StepType = Step['type'];
export interface WorkflowDefinition {
  name: string;
  description?: string;
  timeoutSeconds: number;
  inputSchema?: Record<string, unknown>;
  steps: Step[];
  output?: { stepIndex: number; fileName?: string };
}

export type { DefinitionStepKind, RegisteredStep, StepCommon, Until } from './step-schema';
export type { AgentStep, ApprovalStep, DelayStep, TriggerStep, WaitUntilStep } from './steps';
