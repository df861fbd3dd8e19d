/** The `http` step: one outbound request through src/net/http-client (./http-step.ts). */
import { HttpStepSchema, type HttpStep } from './schema';
import type { StepKind } from '../step-kind';
import { toolIdempotencyKey } from '../tool/tool-step';
import { runHttpStep } from './http-step';

export const httpStepKind: StepKind<HttpStep> = {
  type: 'http',
  schema: HttpStepSchema,
  run: ({ step, context, run, address, signal, deps }) => runHttpStep(step, context, {
    allowPrivateNetwork: deps.allowPrivateNetwork, signal, idempotencyKey: toolIdempotencyKey(run.runId, address),
  }),
};
