/** The `template` step: renders its text with the run's inputs and earlier results (a local activity, see workflows/interpreter/run-list.ts). */
import { TemplateStepSchema, type TemplateStep } from './schema';
import type { StepKind } from '../step-kind';
import { runTemplateStep } from './template-step';

export const templateStepKind: StepKind<TemplateStep> = {
  type: 'template',
  schema: TemplateStepSchema,
  run: ({ step, context }) => runTemplateStep(step, context),
};
