/**
 * The `code` step: user JavaScript in an isolated-vm isolate of its own, with a time and a memory
 * limit. The sandbox sees plain JS built-ins and a captured `console`, nothing of Node. Everything
 * that crosses the boundary is copied (the context in, strings out), so user code never holds a
 * reference into the host.
 */
import ivm from 'isolated-vm';
import { z } from 'zod';
import type { CodeStep } from '../src/common/definition';
import type { InterpolationContext } from '../src/common/interpolate';
import { EXIT_FAILURE, EXIT_OUT_OF_MEMORY, EXIT_TIMEOUT, type StepExecution } from './step-execution';

/** stdout.txt is for people to read; a chatty loop must not fill the blob store. */
export const MAX_STDOUT_BYTES = 1024 * 1024;

/**
 * The host deadline waits this much past the step's limit before tearing the isolate down, so
 * that isolated-vm's own (more precise) CPU timeout normally fires first.
 */
const DEADLINE_GRACE_MS = 50;

/**
 * Runs inside the isolate as a closure of $0 (console sink), $1 (the context copy) and $2 (the
 * user source). The user function is built with the AsyncFunction constructor rather than pasted
 * into this text, so user source cannot break out of the wrapper, cannot see $0..$2, and a syntax
 * error surfaces as an ordinary thrown SyntaxError. Everything the host gets back is a string.
 */
const HARNESS = `
'use strict';
const sink = $0;
const data = $1;
const source = $2;
let accepting = true;

function formatValue(value) {
  if (typeof value === 'string') return value;
  if (value === undefined) return 'undefined';
  if (typeof value === 'bigint') return String(value) + 'n';
  if (typeof value === 'symbol') return value.toString();
  if (typeof value === 'function') return '[Function' + (value.name ? ': ' + value.name : '') + ']';
  if (value instanceof Error) return describeError(value);
  if (value !== null && typeof value === 'object') {
    try {
      const json = JSON.stringify(value);
      return json === undefined ? String(value) : json;
    } catch (e) {
      return '[unserializable object]';
    }
  }
  return String(value);
}

function describeError(error) {
  try {
    if (error !== null && typeof error === 'object' && typeof error.message === 'string') {
      const name = typeof error.name === 'string' && error.name.length > 0 ? error.name : 'Error';
      return name + ': ' + error.message;
    }
    return 'Error: ' + formatValue(error);
  } catch (e) {
    return 'Error: (a thrown value that cannot be printed)';
  }
}

function writer(prefix) {
  return function (...args) {
    if (!accepting) return;
    let line;
    try {
      line = prefix + args.map(formatValue).join(' ');
    } catch (e) {
      line = prefix + '[unprintable]';
    }
    accepting = sink(line) === true;
  };
}

// WebAssembly memories are allocated outside the heap that memoryLimit counts, so a module could
// take gigabytes; plain JavaScript has no need of it.
delete globalThis.WebAssembly;

Object.defineProperty(globalThis, 'console', {
  value: {
    log: writer(''), info: writer(''), debug: writer(''),
    warn: writer('[warn] '), error: writer('[error] '),
  },
  writable: true, configurable: true, enumerable: false,
});

return (async () => {
  try {
    const AsyncFunction = (async function () {}).constructor;
    const fn = new AsyncFunction('inputs', 'steps', 'run', 'local', 'item', 'index', source);
    const value = await fn(data.inputs, data.steps, data.run, data.local, data.item, data.index);
    if (value === undefined || value === null) return { ok: true, type: 'plaintext', text: '' };
    if (typeof value === 'string') return { ok: true, type: 'plaintext', text: value };
    const json = JSON.stringify(value);
    // functions and symbols have no JSON form
    if (json === undefined) return { ok: true, type: 'plaintext', text: '' };
    return { ok: true, type: 'json', text: json };
  } catch (error) {
    return { ok: false, error: describeError(error) };
  }
})();
`;

/** The harness's answer, parsed rather than trusted: user code can shape what it returns. */
const HarnessResultSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), type: z.enum(['plaintext', 'json']), text: z.string() }),
  z.object({ ok: z.literal(false), error: z.string() }),
]);

/** Collects console lines up to a byte cap, then notes the cut once. */
class StdoutBuffer {
  private readonly lines: string[] = [];
  private bytes = 0;
  private truncated = false;

  constructor(private readonly maxBytes: number) {}

  /** Returns whether more output is still wanted. */
  write(line: string): boolean {
    if (this.truncated) return false;
    const size = Buffer.byteLength(line, 'utf8') + 1;
    if (this.bytes + size > this.maxBytes) {
      this.truncated = true;
      const room = this.maxBytes - this.bytes - 1;
      if (room > 0) this.lines.push(Buffer.from(line, 'utf8').subarray(0, room).toString('utf8'));
      this.lines.push(`[stdout truncated at ${this.maxBytes} bytes]`);
      return false;
    }
    this.bytes += size;
    this.lines.push(line);
    return true;
  }

  /** Always appends, even past the cap: the reason a step failed must reach the log. */
  append(line: string): void {
    this.lines.push(line);
  }

  text(): string {
    return this.lines.length === 0 ? '' : this.lines.join('\n') + '\n';
  }
}

type Outcome =
  | { kind: 'result'; value: unknown }
  | { kind: 'error'; error: unknown }
  | { kind: 'deadline' };

export async function runCodeStep(step: CodeStep, context: InterpolationContext): Promise<StepExecution> {
  const stdout = new StdoutBuffer(MAX_STDOUT_BYTES);
  const isolate = new ivm.Isolate({ memoryLimit: step.memoryLimitMb });
  let deadline: NodeJS.Timeout | undefined;
  try {
    const vmContext = await isolate.createContext();
    const sink = new ivm.Callback((line: unknown) => typeof line === 'string' && stdout.write(line));
    // A JSON round trip first: the context is JSON-like by contract, and this drops anything
    // (undefined leaves, class instances) the structured copy would treat differently.
    const data = new ivm.ExternalCopy(JSON.parse(JSON.stringify(context)) as unknown).copyInto({ release: true });

    const run = vmContext.evalClosure(HARNESS, [sink, data, step.source], {
      timeout: step.timeoutMs,
      result: { promise: true, copy: true },
    }).then(
      (value): Outcome => ({ kind: 'result', value }),
      (error: unknown): Outcome => ({ kind: 'error', error }),
    );
    // isolated-vm's timeout covers CPU spent running, not time spent waiting on a promise that
    // never settles, so the host keeps its own wall-clock deadline and disposes the isolate.
    const hostDeadline = new Promise<Outcome>((resolve) => {
      deadline = setTimeout(() => resolve({ kind: 'deadline' }), step.timeoutMs + DEADLINE_GRACE_MS);
    });
    const outcome = await Promise.race([run, hostDeadline]);
    return toExecution(step, outcome, stdout);
  } catch (error) {
    // createContext or the copy can fail when the limit is too small for the context itself.
    return toExecution(step, { kind: 'error', error }, stdout);
  } finally {
    if (deadline !== undefined) clearTimeout(deadline);
    if (!isolate.isDisposed) isolate.dispose();
  }
}

function toExecution(step: CodeStep, outcome: Outcome, stdout: StdoutBuffer): StepExecution {
  if (outcome.kind === 'deadline' || (outcome.kind === 'error' && isTimeout(outcome.error))) {
    const error = `the code ran longer than its limit of ${step.timeoutMs} ms`;
    stdout.append(`[error] ${error}`);
    return failure('TIMEOUT', EXIT_TIMEOUT, error, stdout);
  }
  if (outcome.kind === 'error') {
    if (isOutOfMemory(outcome.error)) {
      const error = `the code used more than its memory limit of ${step.memoryLimitMb} MB`;
      stdout.append(`[error] ${error}`);
      return failure('FAILED', EXIT_OUT_OF_MEMORY, error, stdout);
    }
    const error = `the sandbox failed: ${messageOf(outcome.error)}`;
    stdout.append(`[error] ${error}`);
    return failure('FAILED', EXIT_FAILURE, error, stdout);
  }
  const parsed = HarnessResultSchema.safeParse(outcome.value);
  if (!parsed.success) {
    const error = 'the sandbox returned a malformed answer';
    stdout.append(`[error] ${error}`);
    return failure('FAILED', EXIT_FAILURE, error, stdout);
  }
  if (!parsed.data.ok) {
    stdout.append(parsed.data.error);
    if (parsed.data.error === ARRAY_BUFFER_REFUSED) {
      return failure('FAILED', EXIT_OUT_OF_MEMORY, `the code used more than its memory limit of ${step.memoryLimitMb} MB`, stdout);
    }
    return failure('FAILED', EXIT_FAILURE, parsed.data.error, stdout);
  }
  return { status: 'COMPLETE', result: parsed.data.text, resultType: parsed.data.type, exitCode: 0, stdout: stdout.text() };
}

function failure(status: 'FAILED' | 'TIMEOUT', exitCode: number, error: string, stdout: StdoutBuffer): StepExecution {
  return { status, result: '', resultType: 'plaintext', exitCode, stdout: stdout.text(), error };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * isolated-vm refuses an ArrayBuffer over the limit with this error inside the sandbox instead of
 * disposing the isolate; it is the memory limit all the same.
 */
const ARRAY_BUFFER_REFUSED = 'RangeError: Array buffer allocation failed';

// isolated-vm reports its limits only through error messages; these are the texts of v5.
function isTimeout(error: unknown): boolean {
  return /timed out/i.test(messageOf(error));
}

function isOutOfMemory(error: unknown): boolean {
  return /memory limit/i.test(messageOf(error));
}
