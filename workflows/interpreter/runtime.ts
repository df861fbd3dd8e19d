/**
 * What the interpreter's modules share: the run being interpreted (its state, answered by the
 * `state` query) and the scope of the step list being run. Types and small pure helpers only.
 */
import type { Step } from '../../src/common/definition';
import type { RunInput, RunState, RunStepRequest, RunSummary, StepOutcome, StepScope, StepState, VisibleStep } from '../../src/common/run-types';
import type { ApprovalDesk } from '../steps/approval';

export interface Runtime {
  input: RunInput;
  run: RunStepRequest['run'];
  state: RunState;
  approvals: ApprovalDesk;
  /** the next `executionOrder`: the order steps actually started, nested ones included */
  nextOrder(): number;
  /** the workflow function, for `trigger` steps' child runs */
  runAutomation: (input: RunInput) => Promise<RunSummary>;
  /** chunked forEach steps in flight, by address: where their chunks' progress signals go (fan-out.ts) */
  fanOuts?: Map<string, (progress: { chunk: number; done: number }) => void>;
}

/** The step list being run: where it sits, and which steps its steps can see. */
export interface ListScope {
  /** the list's address prefix (`3.2`); undefined for the top-level list */
  prefix?: string;
  /** 0 at top level, one more per enclosing list */
  depth: number;
  /** the steps visible here, in order: those before the enclosing constructs, then this list's own */
  seen: VisibleStep[];
  /** inside a forEach item */
  item?: unknown;
  index?: number;
}

export interface StepFailure {
  address: string;
  name: string;
  outcome: StepOutcome;
}

export interface ListOutcome {
  /** the step that failed the list (one without `onError: continue`) */
  failure?: StepFailure;
  /** the outcome of the last step that ran (skipped steps have none) */
  last?: StepOutcome;
}

export type RunList = (rt: Runtime, steps: Step[], scope: ListScope) => Promise<ListOutcome>;

/** The scope part of an activity's request and of the interpolation context. */
export function stepScopeOf(scope: ListScope): StepScope | undefined {
  if (scope.prefix === undefined) return undefined;
  return { prefix: scope.prefix, ...(scope.index === undefined ? {} : { item: scope.item, index: scope.index }) };
}

/** The scope of one nested list of the step at `address`. */
export function nestedScope(scope: ListScope, address: string, list: number, item?: { item: unknown; index: number }): ListScope {
  return { prefix: `${address}.${list}`, depth: scope.depth + 1, seen: [...scope.seen], ...(item ?? {}) };
}

export function visible(outcome: StepOutcome): VisibleStep {
  const { stepIndex, stepPath, status, exitCode, resultType, result, truncated } = outcome;
  return { stepIndex, ...(stepPath === undefined ? {} : { stepPath }), status, exitCode, resultType, result, truncated };
}

/** Statuses of the steps under `prefix` (`3.2.`) that never finished become `to`. */
export function settleUnfinished(state: RunState, prefix: string, to: StepState['status']): void {
  for (const [address, step] of Object.entries(state.steps)) {
    if (address.startsWith(prefix) && (step.status === 'RUNNING' || step.status === 'PAUSED' || step.status === 'PENDING')) step.status = to;
  }
}

/**
 * Drops the inline results of finished nested steps under `prefix` from the run's state (their
 * output.txt keeps them; readers load cut results from there), so a run of many items keeps its
 * summary far below Temporal's payload limit.
 */
export function compactOutcomes(state: RunState, prefix: string): void {
  state.outcomes.forEach((o, i) => {
    if (o.stepPath?.startsWith(prefix) && o.result !== '') state.outcomes[i] = { ...o, result: '', truncated: true };
  });
}
