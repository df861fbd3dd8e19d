/**
 * The step kinds the runStep activity executes: the built-in ones, and those registered at start
 * (startFlowgate's `stepKinds`). A kind is a folder here (or anywhere: a test registers one from
 * test/fixtures/kinds/) exporting a StepKind, plus one line in a list.
 */
import { isWorkflowStepType } from '../../src/common/step-kinds';
import { codeStepKind } from './code';
import { httpStepKind } from './http';
import type { StepKind } from './step-kind';
import { templateStepKind } from './template';
import { toolStepKind } from './tool';

export const BUILT_IN_STEP_KINDS: readonly StepKind[] = [templateStepKind, codeStepKind, httpStepKind, toolStepKind];

/** The kinds by type, built-ins first; a type taken twice is refused (the gateway's definition schema refuses it too). */
export function stepKindsByType(registered: readonly StepKind[] = []): ReadonlyMap<string, StepKind> {
  const kinds = new Map<string, StepKind>();
  for (const kind of [...BUILT_IN_STEP_KINDS, ...registered]) {
    if (kinds.has(kind.type) || isWorkflowStepType(kind.type)) throw new Error(`step type ${kind.type} is taken: a built-in kind or one registered twice`);
    kinds.set(kind.type, kind);
  }
  return kinds;
}

export type { StepDependencies, StepKind, StepRunContext } from './step-kind';
