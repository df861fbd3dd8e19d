/**
 * What the interpreter's modules share: the run being interpreted (its state, answered by the
 * `state` query) and the scope of the step list being run. Types and small helpers only.
 */
import type { Step } from '../../src/common/definition';
import type { ItemScope, RunInput, RunState, RunStepRequest, RunSummary, StepOutcome, StepScope, StepState, VisibleStep } from '../../src/common/run-types';
import type { ApprovalDesk } from '../steps/approval';
import { feature } from '../run/features';
import type { OperatorHold } from '../run/operator-pause';

export interface Runtime {
  input: RunInput;
  run: RunStepRequest['run'];
  state: RunState;
  approvals: ApprovalDesk;
  /** the next `executionOrder`: the order steps actually started, nested ones included */
  nextOrder(): number;
  /** the workflow function, for `trigger` steps' child runs */
  runAutomation: (input: RunInput) => Promise<RunSummary>;
  /** an operator's pause (run/operator-pause.ts): lists hold at their step boundaries while it is in force; absent in forEach chunks */
  hold?: OperatorHold;
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
  /** inside a forEach item, at any depth within it */
  item?: unknown;
  index?: number;
  /** inside a forEach nested in a forEach item: the enclosing item */
  outer?: ItemScope;
  /**
   * the list may run while another list of the same workflow runs: an item of a forEach running
   * several at a time, a branch of a parallel step, or any list nested in one (run-list.ts: where
   * a template step is not a local activity)
   */
  alongside?: true;
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
  return {
    prefix: scope.prefix,
    ...(scope.index === undefined ? {} : { item: scope.item, index: scope.index }),
    ...(scope.outer === undefined ? {} : { outer: scope.outer }),
  };
}

/** The forEach item a list sits in, with the items around it. */
export function itemScopeOf(scope: ListScope): ItemScope | undefined {
  if (scope.index === undefined) return undefined;
  return { item: scope.item, index: scope.index, ...(scope.outer === undefined ? {} : { outer: scope.outer }) };
}

/**
 * Runs from engine level 4 keep the forEach item in every list nested in it (branch cases,
 * parallel branches, nested forEach items, which see it as `outer`). Earlier runs replay without:
 * a condition reading the item there was false, which decided what the run did.
 */
export const NESTED_ITEM_SCOPE_REVISION = 'nested-item-scope';

/**
 * The scope of one nested list of the step at `address`; `item` for a forEach item's list;
 * `alongside` when the step runs this list at the same time as another of its lists.
 */
export function nestedScope(scope: ListScope, address: string, list: number, item?: { item: unknown; index: number }, alongside = false): ListScope {
  const nested = { prefix: `${address}.${list}`, depth: scope.depth + 1, seen: [...scope.seen], ...(alongside || scope.alongside ? { alongside: true as const } : {}) };
  if (!feature(NESTED_ITEM_SCOPE_REVISION, 4)) return { ...nested, ...(item ?? {}) };
  const around = itemScopeOf(scope);
  if (item) return { ...nested, ...item, ...(around ? { outer: around } : {}) };
  return { ...nested, ...(around ?? {}) };
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
