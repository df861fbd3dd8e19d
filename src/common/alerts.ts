/**
 * Alerts on run outcomes (issue 54; docs/operations.md "Alerts"), the part workflow code shares
 * with Node code: the rule as its evaluator sees it, the outcome a worker reports when a run ends,
 * and the decision (`judge`) of whether an outcome makes a delivery. Pure and sandbox-safe: the
 * entity workflow (workflows/alert-evaluator.ts) holds the state and calls judge on each outcome in
 * the order Temporal delivered them, with the outcomes' own times, so a replay decides the same.
 */
import type { Sinks } from '@temporalio/workflow';

export const ALERT_RULE_KINDS = ['run_failed', 'failure_rate', 'approval_waiting', 'budget'] as const;
export type AlertRuleKind = (typeof ALERT_RULE_KINDS)[number];

/** What a rule watches, as stored (src/management/alerts.ts checks it) and as its evaluator gets it. */
export type AlertCondition =
  | { kind: 'run_failed'; workflowId?: string | undefined; cooldownSeconds?: number | undefined }
  | {
    kind: 'failure_rate'; workflowId?: string | undefined; windowSeconds: number;
    /** fires when at least this many runs failed within the window */
    threshold?: number | undefined;
    /** or: when this share (0-1] of the runs that ended within the window failed, once `minRuns` ended */
    ratio?: number | undefined;
    minRuns?: number | undefined;
    cooldownSeconds?: number | undefined;
  }
  | {
    kind: 'approval_waiting'; workflowId?: string | undefined;
    /** fires for a run PAUSED at an approval for this long (once per run) */
    afterSeconds: number;
    cooldownSeconds?: number | undefined;
  }
  | {
    /** the organization's monthly budget (tokens or cost, whichever is the more spent) reached this share, once per month */
    kind: 'budget'; percent: number;
    workflowId?: undefined; cooldownSeconds?: undefined;
  };

/** The cooldown a run_failed rule gets when it names none: one delivery per five minutes at most. */
export const RUN_FAILED_COOLDOWN_SECONDS = 300;
/** A failure_rate ratio needs this many ended runs in the window when the rule names no `minRuns`. */
export const DEFAULT_MIN_RUNS = 10;
/** Outcomes an evaluator keeps (the newest), whatever the window. */
export const KEPT_OUTCOMES = 10_000;

/** At most one delivery per this many seconds: the rule's own, else its window (failure_rate) or RUN_FAILED_COOLDOWN_SECONDS (budget: none, once per month instead). */
export function cooldownOf(condition: AlertCondition): number {
  if (condition.kind === 'budget') return 0;
  if (condition.cooldownSeconds !== undefined) return condition.cooldownSeconds;
  return condition.kind === 'failure_rate' ? condition.windowSeconds : RUN_FAILED_COOLDOWN_SECONDS;
}

/** Kinds whose evaluator is fed run outcomes (the others: approval waits, budget use; src/common/alert-watches.ts). */
export function watchesOutcomes(condition: AlertCondition): condition is Extract<AlertCondition, { kind: 'run_failed' | 'failure_rate' }> {
  return condition.kind === 'run_failed' || condition.kind === 'failure_rate';
}

/** Whether a rule needs the runs that ended well too (a ratio counts them). */
export function countsCompletions(condition: AlertCondition): boolean {
  return condition.kind === 'failure_rate' && condition.ratio !== undefined;
}

/** A run of the organization ended: what the worker that ran its last step saw (the sink `flowgateAlerts`). */
export interface RunEnded {
  runId: string;
  orgId: string;
  workflowId: string;
  workflowName: string;
  status: 'COMPLETE' | 'FAILED' | 'TIMEOUT' | 'CANCELLED';
  /** the run's error (a failed step's message) */
  error?: string | undefined;
  /** when it ended, ms since the epoch (the worker's clock) */
  at: number;
}

export const isFailure = (status: RunEnded['status']): boolean => status === 'FAILED' || status === 'TIMEOUT';

/** A run started (`waiting`) or stopped waiting at an approval step: what the worker running it saw. */
export interface ApprovalWaitEvent {
  runId: string;
  orgId: string;
  workflowId: string;
  workflowName: string;
  stepIndex: number;
  waiting: boolean;
  /** ms since the epoch (the workflow's clock when it started or stopped waiting) */
  at: number;
}

/** A wait an approval_waiting evaluator keeps a deadline for. */
export interface PendingWait {
  runId: string;
  workflowId: string;
  workflowName: string;
  stepIndex: number;
  /** when the run started waiting */
  since: number;
  /** since + the rule's afterSeconds */
  deadline: number;
}

/** The organization's use of its monthly budget after a model call (src/runs/alerts.ts computes `percent`). */
export interface BudgetUse {
  orgId: string;
  /** `YYYY-MM` (UTC) */
  period: string;
  /** the more spent of tokens and cost, in percent of its bound */
  percent: number;
  tokens: number;
  maxTokens: number | null;
  costNanoUsd: number;
  maxCostNanoUsd: number | null;
  at: number;
}

/** What the approval_waiting and budget evaluators are fed (signal `alertWatch`), with the rule's condition as the sender read it. */
export type AlertWatch = { kind: 'approval'; event: ApprovalWaitEvent } | { kind: 'budget'; use: BudgetUse };
export interface AlertWatchSignal {
  watch: AlertWatch;
  condition: AlertCondition;
}

/** What the worker reports to (a Temporal sink: no history event, so it never affects replay). */
export interface AlertSinks extends Sinks {
  flowgateAlerts: {
    runEnded(ended: RunEnded): void;
    approvalWaiting(event: ApprovalWaitEvent): void;
  };
}

/** The evaluator's input: its rule (signals carry the rule as it is now) and its state carried over a continue-as-new. */
export interface AlertEvaluatorInput {
  orgId: string;
  ruleId: string;
  condition: AlertCondition;
  state?: AlertState | undefined;
  pending?: AlertSignal[] | undefined;
  /** approval_waiting, budget: the watches not yet taken */
  watches?: AlertWatchSignal[] | undefined;
}

/** One outcome for a rule, with the rule's condition as the sender read it. */
export interface AlertSignal {
  ended: RunEnded;
  condition: AlertCondition;
}

export interface AlertState {
  /** the outcomes within the window (failure_rate), oldest first */
  outcomes: { at: number; failed: boolean }[];
  /** when the last delivery was decided (an outcome's time); 0: never */
  lastFiredAt: number;
  /** failures seen since the last delivery and not covered by it (a cooldown held them back) */
  suppressed: number;
  /** deliveries decided by this entity (and its predecessors) */
  fired: number;
  /** failures seen */
  failures: number;
  /** approval_waiting: the runs waiting at an approval, not yet alerted (src/common/alert-watches.ts) */
  waits?: PendingWait[] | undefined;
  /** approval_waiting: the runs already alerted (or held back by the cooldown): once per run, the newest KEPT_OUTCOMES */
  alerted?: string[] | undefined;
  /** budget: the months (`YYYY-MM`) already alerted */
  periods?: string[] | undefined;
}

export const emptyAlertState = (): AlertState => ({ outcomes: [], lastFiredAt: 0, suppressed: 0, fired: 0, failures: 0 });

/** A delivery to make: how many failures it covers, over which span. */
export interface AlertFiring {
  /** failures this delivery stands for: the window's (failure_rate) or this one and those a cooldown held back (run_failed) */
  count: number;
  /** of the window (failure_rate): the runs that ended in it */
  total?: number;
  /** failures held back by the cooldown since the previous delivery */
  suppressed: number;
  firstAt: number;
  lastAt: number;
}

/**
 * Takes one outcome into the state (mutated) and answers the delivery it makes, if any: at most
 * one per cooldown, so an outage is one alert. Outcomes of other workflows than the rule's are
 * the sender's to filter; a completion counts only for a ratio.
 */
export function judge(condition: AlertCondition, state: AlertState, ended: RunEnded): AlertFiring | undefined {
  const failed = isFailure(ended.status);
  if (failed) state.failures++;
  const cooling = state.lastFiredAt > 0 && ended.at - state.lastFiredAt < cooldownOf(condition) * 1000;
  if (condition.kind === 'run_failed') {
    if (!failed) return undefined;
    if (cooling) {
      state.suppressed++;
      return undefined;
    }
    return fire(state, ended.at, { count: 1 + state.suppressed, suppressed: state.suppressed, firstAt: ended.at, lastAt: ended.at });
  }
  // an outcome reaching a rule of another kind (its kind changed): nothing to judge
  if (condition.kind !== 'failure_rate') return undefined;
  const windowMs = condition.windowSeconds * 1000;
  state.outcomes.push({ at: ended.at, failed });
  const since = ended.at - windowMs;
  // outcomes arrive about in order; drop those out of the window (and the oldest past the cap)
  state.outcomes = state.outcomes.filter((o) => o.at > since).slice(-KEPT_OUTCOMES);
  if (!failed) return undefined;
  const failures = state.outcomes.filter((o) => o.failed);
  const total = state.outcomes.length;
  const crossed = condition.threshold !== undefined
    ? failures.length >= condition.threshold
    : condition.ratio !== undefined && total >= (condition.minRuns ?? DEFAULT_MIN_RUNS) && failures.length / total >= condition.ratio;
  if (!crossed) return undefined;
  if (cooling) {
    state.suppressed++;
    return undefined;
  }
  const firstAt = failures[0]?.at ?? ended.at;
  return fire(state, ended.at, { count: failures.length, total, suppressed: state.suppressed, firstAt, lastAt: ended.at });
}

export function fire(state: AlertState, at: number, firing: AlertFiring): AlertFiring {
  state.lastFiredAt = at;
  state.suppressed = 0;
  state.fired++;
  return firing;
}

/** The evaluator of rule `ruleId`: one entity per rule (the rule ID is unique across organizations). */
export function alertWorkflowId(ruleId: string): string {
  return `alert:${ruleId}`;
}

/** What the evaluator asks its deliverAlert activity to send. */
export interface AlertDeliveryRequest {
  orgId: string;
  ruleId: string;
  /** unique per delivery, the same on each attempt (the webhook's `webhook-id`, the error-handler run's idempotency key) */
  deliveryId: string;
  firing: AlertFiring;
  /** the run whose outcome made the delivery (run_failed, failure_rate) */
  run?: RunEnded | undefined;
  /** approval_waiting: the run that has waited too long */
  waiting?: PendingWait | undefined;
  /** budget: the month's use that crossed the rule's share */
  budget?: BudgetUse | undefined;
}

export interface AlertDeliveryResult {
  delivered: boolean;
  /** `webhook`, `email`, `workflow` */
  destination: string;
  /** the error-handler run started (destination `workflow`) */
  runId?: string;
  /** the rule was deleted or disabled since: nothing sent */
  skipped?: string;
}
