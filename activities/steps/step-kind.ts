/**
 * A step kind the runStep activity executes: its `type`, the schema of its steps (which the
 * gateway validates definitions with) and `run`. The built-in kinds are listed in ./index.ts;
 * more are registered at start (startFlowgate's `stepKinds`). The workflow runs every step whose
 * type it does not know as an activity step (src/common/step-kinds.ts), so a kind needs nothing
 * in workflows/.
 */
import type { BlobStore } from '../../src/blobs/blob-store';
import type { ActivityStep, DefinitionStepKind } from '../../src/common/definition';
import type { InterpolationContext } from '../../src/common/interpolate';
import type { RunStepRequest } from '../../src/common/run-types';
import type { ToolCaller } from '../../src/tools/caller';
import type { StepExecution } from './step-execution';

/** What the worker hands every step kind. */
export interface StepDependencies {
  blobs: BlobStore;
  allowPrivateNetwork: boolean;
  /** the in-process tool dispatcher; `tool` steps fail without one */
  tools?: ToolCaller;
  /** what the `code` steps' sandboxes may reserve at once (FLOWGATE_WORKER_MEMORY_MB's share); unset: no bound */
  codeSandboxMb?: number;
}

/** What one execution of a step gets. */
export interface StepRunContext<S extends ActivityStep> {
  /** the step as the definition holds it (validated, defaults applied, placeholders not rendered) */
  step: S;
  /** what placeholders and expressions see: inputs, earlier steps' results, run, the forEach item */
  context: InterpolationContext;
  run: RunStepRequest['run'];
  /** a top-level step's index, or a nested step's address (`3.2.1`) */
  address: number | string;
  /** aborted when the run is cancelled or the activity times out */
  signal: AbortSignal;
  deps: StepDependencies;
}

export interface StepKind<S extends ActivityStep = ActivityStep> extends DefinitionStepKind<S> {
  /**
   * Runs the step once. A step that ran and failed is a value (FAILED or TIMEOUT with a non-zero
   * exitCode); a throw means the infrastructure failed, and Temporal retries the activity. The
   * activity's limit is the step's `timeoutMs` when its schema has one (else none of its own)
   * plus 30 s; a step may also be retried under its `retry`.
   */
  run(ctx: StepRunContext<S>): Promise<StepExecution>;
}
