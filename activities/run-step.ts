/**
 * The runStep activity: builds the interpolation context, runs the step's executor, stores
 * output.txt and stdout.txt, and reports the outcome. Writes are idempotent (same keys, atomic
 * replace), so Temporal may retry the activity after a worker crash without leaving debris.
 */
import { Context, log } from '@temporalio/activity';
import type { BlobStore } from '../src/blob-store';
import { buildContext } from '../src/common/interpolate';
import { inlinePrefix, RESULT_INLINE_LIMIT, type PreviousStep, type RecordStepRequest, type ResultType, type RunStepRequest, type StepOutcome, type StoredFile } from '../src/common/run-types';
import { runCodeStep } from './code-step';
import { runHttpStep } from './http-step';
import { resolveInputs } from './resolve-inputs';
import type { StepExecution } from './step-execution';
import { runTemplateStep } from './template-step';
import { runToolStep, toolIdempotencyKey } from './tool-step';
import type { ToolCaller } from '../src/tools/dispatcher';

export interface StepDependencies {
  blobs: BlobStore;
  allowPrivateNetwork: boolean;
  /** the in-process tool dispatcher; `tool` steps fail without one */
  tools?: ToolCaller;
}

const HEARTBEAT_EVERY_MS = 200;

const MIME_BY_RESULT_TYPE: Record<ResultType, string> = {
  markdown: 'text/markdown; charset=utf-8',
  plaintext: 'text/plain; charset=utf-8',
  json: 'application/json',
};

export function stepFileKey(orgId: string, runId: string, stepIndex: number, fileName: 'output.txt' | 'stdout.txt'): string {
  // Scheduled runs' IDs end in a time (`trg_x-2026-11-23T14:30:00Z`); a key segment takes no ':'.
  return `runs/${orgId}/${runId.replaceAll(':', '.')}/steps/${stepIndex}/${fileName}`;
}

/** Earlier steps arrive with results cut or left out (`previousSteps`); reload those from output.txt. */
export async function fullOutcomes(blobs: BlobStore, run: Pick<RunStepRequest['run'], 'orgId' | 'runId'>, previous: PreviousStep[]): Promise<PreviousStep[]> {
  return Promise.all(previous.map(async (outcome) => {
    if (!outcome.truncated) return outcome;
    const whole = await blobs.read(stepFileKey(run.orgId, run.runId, outcome.stepIndex, 'output.txt'));
    if (!whole) throw new Error(`output.txt of step ${outcome.stepIndex} is missing from the blob store`);
    return { ...outcome, result: whole.toString('utf8'), truncated: false };
  }));
}

async function execute(request: RunStepRequest, deps: StepDependencies): Promise<StepExecution> {
  const context = buildContext({ ...request.run, inputs: await resolveInputs(deps.blobs, request.run) }, await fullOutcomes(deps.blobs, request.run, request.previous));
  const { step } = request;
  switch (step.type) {
    case 'template':
      return runTemplateStep(step, context);
    case 'code':
      return runCodeStep(step, context);
    case 'http':
      return runHttpStep(step, context, {
        allowPrivateNetwork: deps.allowPrivateNetwork, signal: Context.current().cancellationSignal,
        idempotencyKey: toolIdempotencyKey(request.run.runId, request.stepIndex),
      });
    case 'tool':
      return runToolStep(step, context, { orgId: request.run.orgId, runId: request.run.runId, stepIndex: request.stepIndex, tools: deps.tools });
  }
}

/** Stores a step's output.txt and stdout.txt and returns its outcome; shared by runStep and recordStep. */
export async function storeOutcome(blobs: BlobStore, request: RecordStepRequest): Promise<StepOutcome> {
  const { run, stepIndex } = request;
  const outputKey = stepFileKey(run.orgId, run.runId, stepIndex, 'output.txt');
  const stdoutKey = stepFileKey(run.orgId, run.runId, stepIndex, 'stdout.txt');
  const [output, stdout] = await Promise.all([blobs.put(outputKey, request.result), blobs.put(stdoutKey, request.stdout)]);
  const files: StepOutcome['files'] = {
    'output.txt': { key: outputKey, mimeType: MIME_BY_RESULT_TYPE[request.resultType], size: output.size } satisfies StoredFile,
    'stdout.txt': { key: stdoutKey, mimeType: 'text/plain; charset=utf-8', size: stdout.size } satisfies StoredFile,
  };
  const truncated = request.result.length > RESULT_INLINE_LIMIT;
  return {
    stepIndex,
    status: request.status,
    resultType: request.resultType,
    result: inlinePrefix(request.result),
    truncated,
    exitCode: request.exitCode,
    duration: request.duration,
    ...(request.error === undefined ? {} : { error: request.error }),
    files,
  };
}

export function createRunStep(deps: StepDependencies) {
  return async function runStep(request: RunStepRequest): Promise<StepOutcome> {
    const { run, stepIndex, step } = request;
    // Heartbeats let Temporal notice a dead worker within the heartbeat timeout, not the step's
    // whole limit, and they are how a cancellation reaches the activity: the answer to one carries
    // it. Calling often is cheap (the worker throttles what it sends, see HEARTBEAT_THROTTLE in
    // temporal/worker.ts), and lets a cancelled run's request stop within a second.
    const heartbeat = setInterval(() => Context.current().heartbeat(), HEARTBEAT_EVERY_MS);
    const started = Date.now();
    let execution: StepExecution;
    try {
      execution = await execute(request, deps);
    } finally {
      clearInterval(heartbeat);
    }
    if (execution.status !== 'COMPLETE') {
      log.info('step did not complete', { runId: run.runId, stepIndex, type: step.type, status: execution.status, exitCode: execution.exitCode });
    }
    return storeOutcome(deps.blobs, { run, stepIndex, ...execution, duration: Date.now() - started });
  };
}

/** The recordStep activity: stores what a workflow-side step (wait, approval, chain) produced. */
export function createRecordStep(deps: Pick<StepDependencies, 'blobs'>) {
  return async function recordStep(request: RecordStepRequest): Promise<StepOutcome> {
    return storeOutcome(deps.blobs, request);
  };
}
