/**
 * The renderValue activity: interpolates a value for workflow-side steps (waitUntil, approval
 * messages, trigger inputs) when the workflow alone cannot, because the run's inputs travel by
 * reference or earlier results were cut to RESULT_INLINE_LIMIT in workflow state.
 */
import type { BlobStore } from '../src/blobs/blob-store';
import { buildContext, interpolateDeep } from '../src/common/interpolate';
import type { RunStepRequest } from '../src/common/run-types';
import { resolveInputs } from './resolve-inputs';
import { fullOutcomes } from './run-step';

export interface RenderValueRequest {
  run: RunStepRequest['run'];
  previous: RunStepRequest['previous'];
  scope?: RunStepRequest['scope'];
  value: unknown;
}

export function createRenderValue(deps: { blobs: BlobStore }) {
  return async function renderValue(request: RenderValueRequest): Promise<unknown> {
    const context = buildContext({ ...request.run, inputs: await resolveInputs(deps.blobs, request.run) }, await fullOutcomes(deps.blobs, request.run, request.previous), request.scope);
    return interpolateDeep(request.value, context);
  };
}
