/**
 * The `code` step: user JavaScript in a QuickJS sandbox (code-sandbox.ts) with a time and a
 * memory limit. The sandbox runs on a worker thread, so a busy loop in user code never stalls
 * this process's event loop (the gateway, the Temporal worker, other activities); each run gets a
 * WebAssembly instance of its own. Everything that crosses the boundary is copied (the context in
 * as JSON, strings out), so user code never holds a reference into the host.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import type { CodeStep } from './schema';
import type { InterpolationContext } from '../../../src/common/interpolate';
import { OUT_OF_MEMORY, SANDBOX_WORKER, type SandboxAnswer, type SandboxJob } from './code-sandbox';
import { EXIT_FAILURE, EXIT_OUT_OF_MEMORY, EXIT_TIMEOUT, type StepExecution } from '../step-execution';
import { SandboxGate } from './sandbox-gate';

/** stdout.txt is for people to read; a chatty loop must not fill the blob store. */
export const MAX_STDOUT_BYTES = 1024 * 1024;

/**
 * The sandbox enforces the time limit itself; the host waits this much longer (thread start-up,
 * WebAssembly instantiation on a loaded machine) before it gives up on the thread and ends it.
 */
const HOST_GRACE_MS = 10_000;

/** Threads kept warm between runs; more run at once when more steps do, and end when idle. */
const MAX_IDLE_WORKERS = 2;

const WORKER_FILE = path.join(__dirname, 'code-sandbox.js');
const idleWorkers: Worker[] = [];

function takeWorker(): Worker {
  const idle = idleWorkers.pop();
  if (idle) return idle;
  const worker = new Worker(WORKER_FILE, { workerData: SANDBOX_WORKER });
  // an idle thread must neither keep the process alive nor crash it with an unheard 'error'
  worker.unref();
  worker.on('error', () => undefined);
  worker.on('exit', () => {
    const at = idleWorkers.indexOf(worker);
    if (at >= 0) idleWorkers.splice(at, 1);
  });
  return worker;
}

function releaseWorker(worker: Worker): void {
  if (idleWorkers.length < MAX_IDLE_WORKERS) idleWorkers.push(worker);
  else void worker.terminate();
}

type Outcome = SandboxAnswer | { kind: 'deadline'; stdout: string };

function runOnWorker(job: SandboxJob): Promise<Outcome> {
  const worker = takeWorker();
  return new Promise<Outcome>((resolve) => {
    const finish = (outcome: Outcome, reusable: boolean): void => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      if (reusable) releaseWorker(worker);
      else void worker.terminate();
      resolve(outcome);
    };
    const onMessage = (answer: SandboxAnswer): void => finish(answer, true);
    const onError = (error: Error): void => finish({ kind: 'error', error: error.message, stdout: '' }, false);
    const onExit = (code: number): void => finish({ kind: 'error', error: `the sandbox thread exited with code ${code}`, stdout: '' }, false);
    const timer = setTimeout(() => finish({ kind: 'deadline', stdout: '' }, false), job.timeoutMs + HOST_GRACE_MS);
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    worker.postMessage(job);
  });
}

/** One gate per budget: a process has one worker, tests may run several with budgets of their own. */
const gates = new Map<number, SandboxGate>();

/** The gate of the `code` share of FLOWGATE_WORKER_MEMORY_MB (`sandboxMb`); unset: no bound. */
export function sandboxGate(sandboxMb: number): SandboxGate {
  let gate = gates.get(sandboxMb);
  if (!gate) {
    gate = new SandboxGate(sandboxMb);
    gates.set(sandboxMb, gate);
  }
  return gate;
}

export async function runCodeStep(step: CodeStep, context: InterpolationContext, limits: { sandboxMb?: number | undefined; signal?: AbortSignal } = {}): Promise<StepExecution> {
  // the step's memory is reserved before its thread starts: see sandbox-gate.ts
  const release = limits.sandboxMb === undefined ? () => undefined : await sandboxGate(limits.sandboxMb).acquire(SandboxGate.cost(step.memoryLimitMb), limits.signal);
  try {
    const outcome = await runOnWorker({
      source: step.source,
      // A JSON round trip: the context is JSON-like by contract, and this drops undefined leaves.
      data: JSON.stringify(context),
      timeoutMs: step.timeoutMs,
      memoryLimitMb: step.memoryLimitMb,
      maxStdoutBytes: MAX_STDOUT_BYTES,
    });
    return toExecution(step, outcome);
  } finally {
    release();
  }
}

/** The harness's answer, parsed rather than trusted: user code can shape what it returns. */
const HarnessResultSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), type: z.enum(['plaintext', 'json']), text: z.string() }),
  z.object({ ok: z.literal(false), error: z.string() }),
]);

function toExecution(step: CodeStep, outcome: Outcome): StepExecution {
  // the reason a step failed always reaches the log, even past the output cap
  const logged = (line: string): string => outcome.stdout + line + '\n';
  const timedOut = (error: string): StepExecution => failure('TIMEOUT', EXIT_TIMEOUT, error, logged(`[error] ${error}`));
  const outOfMemory = (): StepExecution => {
    const error = `the code used more than its memory limit of ${step.memoryLimitMb} MB`;
    return failure('FAILED', EXIT_OUT_OF_MEMORY, error, logged(`[error] ${error}`));
  };
  switch (outcome.kind) {
    case 'timeout':
    case 'deadline':
      return timedOut(`the code ran longer than its limit of ${step.timeoutMs} ms`);
    case 'never-settles':
      // nothing in the sandbox (no timers, no I/O) can settle it later: waiting out the limit
      // would end the same way
      return timedOut(`the code awaits a promise that can never settle, so it would run past its limit of ${step.timeoutMs} ms`);
    case 'out-of-memory':
      return outOfMemory();
    case 'error': {
      const error = `the sandbox failed: ${outcome.error}`;
      return failure('FAILED', EXIT_FAILURE, error, logged(`[error] ${error}`));
    }
    case 'result':
      break;
  }
  let answer: unknown;
  try {
    answer = JSON.parse(outcome.value);
  } catch {
    answer = undefined;
  }
  const parsed = HarnessResultSchema.safeParse(answer);
  if (!parsed.success) {
    const error = 'the sandbox returned a malformed answer';
    return failure('FAILED', EXIT_FAILURE, error, logged(`[error] ${error}`));
  }
  if (!parsed.data.ok) {
    // an allocation refused inside user code that the code did not catch
    if (parsed.data.error === `InternalError: ${OUT_OF_MEMORY}`) return outOfMemory();
    return failure('FAILED', EXIT_FAILURE, parsed.data.error, logged(parsed.data.error));
  }
  return { status: 'COMPLETE', result: parsed.data.text, resultType: parsed.data.type, exitCode: 0, stdout: outcome.stdout };
}

function failure(status: 'FAILED' | 'TIMEOUT', exitCode: number, error: string, stdout: string): StepExecution {
  return { status, result: '', resultType: 'plaintext', exitCode, stdout, error };
}
