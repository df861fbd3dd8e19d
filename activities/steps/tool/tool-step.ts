/**
 * The `tool` step: calls a tool of any gateway server through the in-process dispatcher (never
 * over HTTP), as the run's organization, with the idempotency key `<runId>:<stepIndex>` so every
 * retry of the step is the same logical call to the tool. The tool's JSON result is the step's
 * result; a tool that failed, or a call that could not be made, fails the step with the reason.
 * Unexpected errors are thrown, so Temporal retries the activity.
 */
import { Context } from '@temporalio/activity';
import type { ToolStep } from './schema';
import { interpolateDeep, type InterpolationContext } from '../../../src/common/interpolate';
import { isRecord } from '../../../src/common/narrow';
import type { ToolCaller } from '../../../src/tools/caller';
import { ToolCallError } from '../../../src/tools/errors';
import { EXIT_FAILURE, EXIT_TIMEOUT, type StepExecution } from '../step-execution';

export interface ToolStepOptions {
  orgId: string;
  runId: string;
  /** the step's index, or a nested step's address */
  stepIndex: number | string;
  tools: ToolCaller | undefined;
  /** default: the activity's cancellation signal when running in one */
  signal?: AbortSignal;
}

/** `<runId>:<stepIndex>`, or `<runId>:<stepPath>` for a nested step (`run:3.2.1`). */
export function toolIdempotencyKey(runId: string, stepIndex: number | string): string {
  return `${runId}:${stepIndex}`;
}

function activitySignal(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined; // not inside an activity (unit tests)
  }
}

export async function runToolStep(step: ToolStep, context: InterpolationContext, options: ToolStepOptions): Promise<StepExecution> {
  const server = step.server.replace(/^\/+/, '');
  const shown = `${server}/${step.tool}`;
  if (!options.tools) return failed(EXIT_FAILURE, 'FAILED', 'this worker has no tool dispatcher', shown);
  const args = interpolateDeep(step.arguments, context);
  if (!isRecord(args)) return failed(EXIT_FAILURE, 'FAILED', 'the arguments are not an object', shown);

  const started = Date.now();
  const controller = new AbortController();
  const outer = options.signal ?? activitySignal();
  const onAbort = (): void => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => controller.abort(new Error('step timeout')), step.timeoutMs);
  try {
    const result = await Promise.race([
      options.tools.call(options.orgId, server, step.tool, args, {
        idempotencyKey: toolIdempotencyKey(options.runId, options.stepIndex), signal: controller.signal,
        // a durable tool's task is waited for as long as the step may take (its retries are the task's)
        durableWaitMs: step.timeoutMs,
      }),
      new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(
        // A cancelled activity (run cancelled, worker shutting down) is not the tool's timeout:
        // its reason is thrown on, so that Temporal records a cancellation and the step no result.
        outer?.aborted ? abortReason(outer) : new ToolCallError('TIMEOUT', `${step.tool} did not finish within the step's ${step.timeoutMs} ms`),
      ), { once: true })),
    ]);
    const elapsed = `${Date.now() - started} ms`;
    if (result.isError) return failed(EXIT_FAILURE, 'FAILED', `${shown} failed: ${result.message}`, shown, elapsed);
    return { status: 'COMPLETE', result: JSON.stringify(result.value), resultType: 'json', exitCode: 0, stdout: `called ${shown} (${elapsed})\n` };
  } catch (error) {
    if (outer?.aborted) throw abortReason(outer);
    if (!(error instanceof ToolCallError)) throw error;
    const elapsed = `${Date.now() - started} ms`;
    if (error.code === 'TIMEOUT') return failed(EXIT_TIMEOUT, 'TIMEOUT', error.message, shown, elapsed);
    return failed(EXIT_FAILURE, 'FAILED', error.message, shown, elapsed);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error(`the step was cancelled: ${String(signal.reason)}`);
}

function failed(exitCode: number, status: 'FAILED' | 'TIMEOUT', error: string, shown: string, elapsed?: string): StepExecution {
  return { status, result: '', resultType: 'plaintext', exitCode, stdout: `called ${shown}${elapsed ? ` (${elapsed})` : ''}: ${error}\n`, error };
}
