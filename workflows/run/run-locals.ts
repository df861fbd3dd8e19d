/**
 * What a run keeps beside its workflow function's own variables: its engine level (features.ts),
 * how many child IDs it derived (child-ids.ts), its deadline (time-limit.ts) and when it got its
 * slots (slots.ts).
 *
 * The modules of workflows/ are loaded once into the worker's reused V8 context and shared by every
 * run (temporal/worker.ts sharedWorkflowModules), so a module-level variable would be one for all
 * runs. A run's global object is its own: Temporal's sandbox gives each run its globals (in the
 * reused context it swaps them in before each activation of a run, and a new run starts from the
 * pristine ones), which is where these live, under a symbol no other code reads.
 */

export interface RunLocals {
  /** the run's engine level (RunInput.engine); undefined for runs from before levels */
  engineLevel: number | undefined;
  /** child IDs this run derived so far */
  derivedIds: number;
  /** when the run must end (ms, workflow time), once its time limit is kept by the workflow */
  deadlineMs: number | undefined;
  /** when a limited run got its last slot (ms, workflow time) */
  slotsGrantedAtMs: number | undefined;
}

const KEY = Symbol.for('flowgate.runLocals');

function isRunLocals(value: unknown): value is RunLocals {
  return typeof value === 'object' && value !== null && 'derivedIds' in value;
}

/** This run's locals, made on first use. */
export function runLocals(): RunLocals {
  const held: unknown = Reflect.get(globalThis, KEY);
  if (isRunLocals(held)) return held;
  const fresh: RunLocals = { engineLevel: undefined, derivedIds: 0, deadlineMs: undefined, slotsGrantedAtMs: undefined };
  Reflect.defineProperty(globalThis, KEY, { value: fresh, writable: true, enumerable: false, configurable: true });
  return fresh;
}
