/**
 * The runStep activity: finds the step's kind by its type (activities/steps/: the built-in kinds
 * and those registered at start), builds the interpolation context, runs the kind, stores
 * output.txt and stdout.txt, and reports the outcome. Writes are idempotent (same keys, atomic
 * replace), so Temporal may retry the activity after a worker crash without leaving debris.
 */
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { BlobStore } from '../src/blobs/blob-store';
import { buildContext } from '../src/common/interpolate';
import { inlinePrefix, RESULT_INLINE_LIMIT, type PreviousStep, type RecordCompositeRequest, type RecordStepRequest, type ResultType, type RunStepRequest, type StepOutcome, type StoredFile } from '../src/common/run-types';
import { resolveInputs } from './resolve-inputs';
import { stepKindsByType, type StepDependencies, type StepKind } from './steps';
import { EXIT_FAILURE, type StepExecution } from './steps/step-execution';

export type { StepDependencies } from './steps';

export interface RunStepDependencies extends StepDependencies {
  /** step kinds besides the built-ins (startFlowgate's `stepKinds`) */
  stepKinds?: readonly StepKind[];
}

const HEARTBEAT_EVERY_MS = 200;

const MIME_BY_RESULT_TYPE: Record<ResultType, string> = {
  markdown: 'text/markdown; charset=utf-8',
  plaintext: 'text/plain; charset=utf-8',
  json: 'application/json',
};

/** `stepIndex` is a top-level step's index or a nested step's address (`3.2.1`). */
export function stepFileKey(orgId: string, runId: string, stepIndex: number | string, fileName: 'output.txt' | 'stdout.txt'): string {
  // Scheduled runs' IDs end in a time (`trg_x-2026-11-23T14:30:00Z`); a key segment takes no ':'.
  return `runs/${orgId}/${runId.replaceAll(':', '.')}/steps/${stepIndex}/${fileName}`;
}

/** Earlier steps arrive with results cut or left out (`previousSteps`); reload those from output.txt. */
export async function fullOutcomes(blobs: BlobStore, run: Pick<RunStepRequest['run'], 'orgId' | 'runId'>, previous: PreviousStep[]): Promise<PreviousStep[]> {
  return Promise.all(previous.map(async (outcome) => {
    if (!outcome.truncated) return outcome;
    const address = outcome.stepPath ?? outcome.stepIndex;
    const whole = await blobs.read(stepFileKey(run.orgId, run.runId, address, 'output.txt'));
    if (!whole) throw new Error(`output.txt of step ${address} is missing from the blob store`);
    return { ...outcome, result: whole.toString('utf8'), truncated: false };
  }));
}

async function execute(request: RunStepRequest, deps: StepDependencies, kinds: ReadonlyMap<string, StepKind>): Promise<StepExecution> {
  const { step } = request;
  const kind = kinds.get(step.type);
  // the gateway that validated the definition knew this kind; this worker was not given it
  if (!kind) return { status: 'FAILED', result: '', resultType: 'plaintext', exitCode: EXIT_FAILURE, stdout: '', error: `no step kind ${step.type} is registered on this worker` };
  const context = buildContext({ ...request.run, inputs: await resolveInputs(deps.blobs, request.run) }, await fullOutcomes(deps.blobs, request.run, request.previous), request.scope);
  return kind.run({ step, context, run: request.run, address: request.stepPath ?? request.stepIndex, signal: Context.current().cancellationSignal, deps });
}

/** Stores a step's output.txt and stdout.txt and returns its outcome; shared by runStep and recordStep. */
export async function storeOutcome(blobs: BlobStore, request: RecordStepRequest): Promise<StepOutcome> {
  const { run, stepIndex, stepPath } = request;
  const outputKey = stepFileKey(run.orgId, run.runId, stepPath ?? stepIndex, 'output.txt');
  const stdoutKey = stepFileKey(run.orgId, run.runId, stepPath ?? stepIndex, 'stdout.txt');
  const [output, stdout] = await Promise.all([blobs.put(outputKey, request.result), blobs.put(stdoutKey, request.stdout)]);
  const files: StepOutcome['files'] = {
    'output.txt': { key: outputKey, mimeType: MIME_BY_RESULT_TYPE[request.resultType], size: output.size } satisfies StoredFile,
    'stdout.txt': { key: stdoutKey, mimeType: 'text/plain; charset=utf-8', size: stdout.size } satisfies StoredFile,
  };
  const truncated = request.result.length > RESULT_INLINE_LIMIT;
  return {
    stepIndex,
    ...(stepPath === undefined ? {} : { stepPath }),
    status: request.status,
    resultType: request.resultType,
    result: inlinePrefix(request.result),
    truncated,
    exitCode: request.exitCode,
    duration: request.duration,
    ...(request.error === undefined ? {} : { error: request.error }),
    files,
    ...(request.usage?.length ? { usage: request.usage } : {}),
  };
}

export function createRunStep(deps: RunStepDependencies) {
  const kinds = stepKindsByType(deps.stepKinds);
  return async function runStep(request: RunStepRequest): Promise<StepOutcome> {
    const { run, stepIndex, step } = request;
    // Heartbeats let Temporal notice a dead worker within the heartbeat timeout, not the step's
    // whole limit, and they are how a cancellation reaches the activity: the answer to one carries
    // it. Calling often is cheap (the worker throttles what it sends, see HEARTBEAT_THROTTLE in
    // temporal/worker.ts), and lets a cancelled run's request stop within a second.
    // Local activities (template steps) have no heartbeat: the worker running them runs the run.
    const heartbeat = Context.current().info.isLocal ? undefined : setInterval(() => Context.current().heartbeat(), HEARTBEAT_EVERY_MS);
    const started = Date.now();
    let execution: StepExecution;
    try {
      execution = await execute(request, deps, kinds);
    } finally {
      clearInterval(heartbeat);
    }
    if (execution.status !== 'COMPLETE') {
      log.info('step did not complete', { runId: run.runId, stepIndex, stepPath: request.stepPath, type: step.type, status: execution.status, exitCode: execution.exitCode });
      retryIfAllowed(request, execution);
    }
    return storeOutcome(deps.blobs, { run, stepIndex, ...(request.stepPath === undefined ? {} : { stepPath: request.stepPath }), ...execution, duration: Date.now() - started });
  };
}

/**
 * A step's failure type, as its `retry.nonRetryable` names it: TIMEOUT, OUT_OF_MEMORY,
 * HTTP_<status> for an http step answered with an error status, else FAILED.
 */
export function failureType(execution: Pick<StepExecution, 'status' | 'exitCode' | 'error'>): string {
  if (execution.status === 'TIMEOUT') return 'TIMEOUT';
  if (execution.exitCode === 137) return 'OUT_OF_MEMORY';
  const http = /^HTTP (\d{3}) from /.exec(execution.error ?? '');
  return http ? `HTTP_${http[1]}` : 'FAILED';
}

function nonRetryable(type: string, listed: string[]): boolean {
  return listed.some((t) => t === type || (/^HTTP_[1-5]XX$/.test(t) && type.startsWith(t.slice(0, 6))));
}

/**
 * A step with `retry` whose attempt failed: thrown as a retryable ApplicationFailure, so Temporal
 * runs it again after the policy's backoff, unless this was the last attempt or the failure's
 * type is not to be retried; then the failure is the step's outcome, as without `retry`.
 */
function retryIfAllowed(request: RunStepRequest, execution: StepExecution): void {
  const { retry } = request;
  if (!retry) return;
  const { attempt } = Context.current().info;
  const type = failureType(execution);
  if (attempt >= retry.maxAttempts || nonRetryable(type, retry.nonRetryable)) return;
  throw ApplicationFailure.retryable(`attempt ${attempt} of ${retry.maxAttempts} failed: ${execution.error ?? `exit code ${execution.exitCode}`}`, type);
}

/** The text of a stored part: JSON parsed when it is JSON, else the text itself. */
function partValue(text: string, resultType: ResultType): unknown {
  if (resultType !== 'json') return text;
  try {
    const value: unknown = JSON.parse(text);
    return value;
  } catch {
    return text;
  }
}

/**
 * The recordComposite activity: a branch, forEach or parallel step's result, assembled from the
 * output.txt of its inner steps (read here, so no result travels through the workflow whole).
 */
export function createRecordComposite(deps: Pick<StepDependencies, 'blobs'>) {
  return async function recordComposite(request: RecordCompositeRequest): Promise<StepOutcome> {
    const read = async (key: string): Promise<string> => {
      const bytes = await deps.blobs.read(key);
      if (!bytes) throw new Error(`${key} is missing from the blob store`);
      return bytes.toString('utf8');
    };
    const { combine, ...rest } = request;
    if (combine.kind === 'single') {
      const { part } = combine;
      return storeOutcome(deps.blobs, { ...rest, result: part ? await read(part.key) : '', resultType: part?.resultType ?? 'plaintext' });
    }
    if (combine.kind === 'chunks') {
      const arrays = await Promise.all(combine.parts.map(async ({ part, items }) => {
        const value = part ? partValue(await read(part.key), part.resultType) : null;
        return Array.isArray(value) ? value : new Array<null>(items).fill(null);
      }));
      return storeOutcome(deps.blobs, { ...rest, result: JSON.stringify(arrays.flat()), resultType: 'json' });
    }
    const values = await Promise.all(combine.parts.map(async (part) => (part ? partValue(await read(part.key), part.resultType) : null)));
    return storeOutcome(deps.blobs, { ...rest, result: JSON.stringify(values), resultType: 'json' });
  };
}

/** The recordStep activity: stores what a workflow-side step (wait, approval, chain) produced. */
export function createRecordStep(deps: Pick<StepDependencies, 'blobs'>) {
  return async function recordStep(request: RecordStepRequest): Promise<StepOutcome> {
    return storeOutcome(deps.blobs, request);
  };
}
