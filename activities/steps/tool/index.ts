/** The `tool` step: a tool of any gateway server, called in process (./tool-step.ts); with `until` the workflow polls it. */
import { ToolStepSchema, type ToolStep } from './schema';
import type { StepKind } from '../step-kind';
import { runToolStep } from './tool-step';

export const toolStepKind: StepKind<ToolStep> = {
  type: 'tool',
  schema: ToolStepSchema,
  run: ({ step, context, run, address, deps }) => runToolStep(step, context, { orgId: run.orgId, runId: run.runId, stepIndex: address, tools: deps.tools }),
};
