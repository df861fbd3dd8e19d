/**
 * The `code` step's sandbox: QuickJS compiled to WebAssembly (quickjs-emscripten), run inside a
 * worker thread that code-step.ts owns. Nothing here is native, so it runs unchanged on every
 * Node line.
 *
 * Every run gets a WebAssembly instance of its own whose linear memory cannot grow past the
 * interpreter's fixed base plus the step's memory limit: the limit holds for everything (objects,
 * strings, ArrayBuffers), and nothing one run allocated or corrupted survives into the next.
 * The time limit is QuickJS's interrupt handler (checked while code runs, including inside
 * promise jobs). The sandbox has plain JS built-ins and a captured `console`; no Node, `require`,
 * file system, network, timers or WebAssembly. The context goes in as a JSON string and is parsed
 * inside, results come out as strings, so user code never holds a reference into the host.
 */
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import releaseSync from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSContext, type QuickJSHandle } from 'quickjs-emscripten-core';

/** The worker's `workerData`, so that importing this file elsewhere never starts listening. */
export const SANDBOX_WORKER = 'flowgate-code-sandbox';

export interface SandboxJob {
  source: string;
  /** The interpolation context as JSON. */
  data: string;
  timeoutMs: number;
  memoryLimitMb: number;
  maxStdoutBytes: number;
}

/**
 * `result` is the harness's own answer (a JSON text, parsed and checked by the caller);
 * `never-settles`: the code awaits a promise that nothing can settle any more.
 */
type SandboxOutcome =
  | { kind: 'result'; value: string }
  | { kind: 'error'; error: string }
  | { kind: 'timeout' }
  | { kind: 'out-of-memory' }
  | { kind: 'never-settles' };
export type SandboxAnswer = SandboxOutcome & { stdout: string };

/** Node's WebAssembly global; the project's `lib` (ES2022, no DOM) carries no types for it. */
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number; maximum: number }) => { readonly buffer: ArrayBuffer };
};

const WASM_PAGE_BYTES = 64 * 1024;
/** The QuickJS build's initial memory (16 MiB: its static data, stack and runtime); the step's limit comes on top. */
const BASE_PAGES = 256;
/** QuickJS's own stack check; deeper recursion is a RangeError-like InternalError, well before the host's stack. */
const MAX_STACK_BYTES = 256 * 1024;
/** QuickJS's text for an allocation that failed (the harness reports it as `InternalError: out of memory`). */
export const OUT_OF_MEMORY = 'out of memory';

/**
 * Evaluated to a function of (sink, dataJson, source). The user function is built with the
 * AsyncFunction constructor rather than pasted into this text, so user source cannot break out of
 * the wrapper, cannot see the harness's variables, and a syntax error surfaces as an ordinary
 * thrown SyntaxError. The harness keeps its own JSON.stringify so user code cannot swap it.
 */
const HARNESS = `(function (sink, dataJson, source) {
'use strict';
const stringify = JSON.stringify;
const data = JSON.parse(dataJson);
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
      const json = stringify(value);
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

Object.defineProperty(globalThis, 'console', {
  value: {
    log: writer(''), info: writer(''), debug: writer(''),
    warn: writer('[warn] '), error: writer('[error] '),
  },
  writable: true, configurable: true, enumerable: false,
});

// A nested forEach's enclosing item: a global, not a parameter as item and index are, so that
// code declaring an 'outer' of its own (const, let) still compiles.
Object.defineProperty(globalThis, 'outer', { value: data.outer, writable: true, configurable: true, enumerable: false });

return (async () => {
  try {
    const AsyncFunction = (async function () {}).constructor;
    const fn = new AsyncFunction('inputs', 'steps', 'run', 'local', 'item', 'index', source);
    const value = await fn(data.inputs, data.steps, data.run, data.local, data.item, data.index);
    if (value === undefined || value === null) return stringify({ ok: true, type: 'plaintext', text: '' });
    if (typeof value === 'string') return stringify({ ok: true, type: 'plaintext', text: value });
    const json = stringify(value);
    // functions and symbols have no JSON form
    if (json === undefined) return stringify({ ok: true, type: 'plaintext', text: '' });
    return stringify({ ok: true, type: 'json', text: json });
  } catch (error) {
    return stringify({ ok: false, error: describeError(error) });
  }
})();
})`;

/** Collects console lines up to a byte cap, then notes the cut once. */
export class StdoutBuffer {
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

  text(): string {
    return this.lines.length === 0 ? '' : this.lines.join('\n') + '\n';
  }
}

let compiled: object | undefined;

/** Compiled once per thread; each run instantiates it afresh. */
function wasmModule(): object {
  compiled ??= new WebAssembly.Module(readFileSync(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm')));
  return compiled;
}

export async function runSandboxed(job: SandboxJob): Promise<SandboxAnswer> {
  const stdout = new StdoutBuffer(job.maxStdoutBytes);
  const limitPages = Math.ceil((job.memoryLimitMb * 1024 * 1024) / WASM_PAGE_BYTES);
  const memory = new WebAssembly.Memory({ initial: BASE_PAGES, maximum: BASE_PAGES + limitPages });
  const quickjs = await newQuickJSWASMModuleFromVariant(newVariant(releaseSync, {
    wasmModule: wasmModule(),
    wasmMemory: memory,
  }));
  const runtime = quickjs.newRuntime();
  // QuickJS's own accounting refuses a single allocation larger than the limit up front; the
  // memory's maximum is what bounds the total.
  runtime.setMemoryLimit(job.memoryLimitMb * 1024 * 1024);
  runtime.setMaxStackSize(MAX_STACK_BYTES);
  const context = runtime.newContext();
  const deadline = Date.now() + job.timeoutMs;
  let interrupted = false;
  runtime.setInterruptHandler(() => {
    if (Date.now() <= deadline) return false;
    interrupted = true;
    return true;
  });

  const answer = (outcome: SandboxOutcome): SandboxAnswer => {
    if (interrupted) return { kind: 'timeout', stdout: stdout.text() };
    if (outcome.kind === 'error' && outcome.error.endsWith(OUT_OF_MEMORY)) return { kind: 'out-of-memory', stdout: stdout.text() };
    return { ...outcome, stdout: stdout.text() };
  };

  // The instance is not disposed: it is dropped whole after the run (with its memory), and
  // QuickJS's leak assertions on a runtime that hit a limit would only abort it again.
  const sink = context.newFunction('sink', (line) =>
    context.typeof(line) === 'string' && stdout.write(context.getString(line)) ? context.true : context.false);
  const harness = context.evalCode(HARNESS, 'harness.js');
  if (harness.error) return answer({ kind: 'error', error: describe(context, harness.error) });
  const call = context.callFunction(harness.value, context.undefined, sink, context.newString(job.data), context.newString(job.source));
  if (call.error) return answer({ kind: 'error', error: describe(context, call.error) });
  const promise = call.value;

  for (;;) {
    const jobs = runtime.executePendingJobs();
    if (jobs.error) return answer({ kind: 'error', error: describe(context, jobs.error) });
    if (jobs.value === 0) break;
  }
  const state = context.getPromiseState(promise);
  if (state.type === 'pending') return answer({ kind: 'never-settles' });
  if (state.type === 'rejected') return answer({ kind: 'error', error: describe(context, state.error) });
  return answer({ kind: 'result', value: context.typeof(state.value) === 'string' ? context.getString(state.value) : '' });
}

function describe(context: QuickJSContext, error: QuickJSHandle): string {
  try {
    const dumped: unknown = context.dump(error);
    if (dumped !== null && typeof dumped === 'object' && 'message' in dumped) {
      const name = 'name' in dumped ? dumped.name : undefined;
      return `${typeof name === 'string' ? name : 'Error'}: ${String(dumped.message)}`;
    }
    return String(dumped);
  } catch {
    return 'an error that cannot be printed';
  }
}

if (workerData === SANDBOX_WORKER && parentPort) {
  const port = parentPort;
  port.on('message', (job: SandboxJob) => {
    runSandboxed(job).then(
      (answer) => port.postMessage(answer),
      (error: unknown) => port.postMessage({ kind: 'error', error: error instanceof Error ? error.message : String(error), stdout: '' } satisfies SandboxAnswer),
    );
  });
}
