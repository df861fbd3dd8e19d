/** The `code` step: a function body run in QuickJS on a worker thread (./code-step.ts, ./code-sandbox.ts). */
import { CodeStepSchema, type CodeStep } from './schema';
import type { StepKind } from '../step-kind';
import { runCodeStep } from './code-step';

export const codeStepKind: StepKind<CodeStep> = {
  type: 'code',
  schema: CodeStepSchema,
  run: ({ step, context, deps, signal }) => runCodeStep(step, context, { sandboxMb: deps.codeSandboxMb, signal }),
};
