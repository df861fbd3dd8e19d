/**
 * The step kinds the runStep activity executes: the built-in ones, and those registered at start
 * (startFlowgate's `stepKinds`). A kind is a folder here (or anywhere: a test registers one from
 * test/fixtures/kinds/) exporting a StepKind, plus one line in a list: BUILT_IN_STEP_KINDS below,
 * or `stepKinds`. The definition schema over the built-in kinds is built here from that list; the
 * gateway adds the registered ones (src/http/routes/workflow-admin.ts).
 */
import { definitionSchemas } from '../../src/common/definition';
import { FLOW_STEP_TYPES } from '../../src/common/step-kinds';
import { WORKFLOW_STEP_KINDS } from '../../src/common/steps';
import { codeStepKind } from './code';
import { httpStepKind } from './http';
import type { StepKind } from './step-kind';
import { templateStepKind } from './template';
import { toolStepKind } from './tool';

export const BUILT_IN_STEP_KINDS: readonly StepKind[] = [templateStepKind, codeStepKind, httpStepKind, toolStepKind];

/** The types the workflow runs itself, which no kind of the runStep activity may take. */
const WORKFLOW_TYPES: ReadonlySet<string> = new Set([...WORKFLOW_STEP_KINDS.map((kind) => kind.type), ...FLOW_STEP_TYPES]);

/** The kinds by type, built-ins first; a type taken twice is refused (the gateway's definition schema refuses it too). */
export function stepKindsByType(registered: readonly StepKind[] = []): ReadonlyMap<string, StepKind> {
  const kinds = new Map<string, StepKind>();
  for (const kind of [...BUILT_IN_STEP_KINDS, ...registered]) {
    if (kinds.has(kind.type) || WORKFLOW_TYPES.has(kind.type)) throw new Error(`step type ${kind.type} is taken: a built-in kind or one registered twice`);
    kinds.set(kind.type, kind);
  }
  return kinds;
}

/** The schemas of steps and definitions over the built-in kinds: what a gateway without registered kinds validates with. */
export const { StepSchema, WorkflowDefinitionSchema } = definitionSchemas(BUILT_IN_STEP_KINDS);

export type { StepDependencies, StepKind, StepRunContext } from './step-kind';
