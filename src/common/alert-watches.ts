/**
 * The approval_waiting and budget alert rules (issue 54; docs/operations.md "Alerts"): what their
 * evaluator decides on what it is fed (signal `alertWatch`). Pure and sandbox-safe, like judge
 * (src/common/alerts.ts): the entity workflow (workflows/alert-watches.ts) holds the state, and the
 * times are the events' own or the workflow's clock, so a replay decides the same.
 *
 * approval_waiting: a run that starts waiting at an approval gets a deadline (`afterSeconds` on);
 * one that stops waiting before it drops out; at the deadline the rule fires, once per run, at most
 * once per cooldown (the runs the cooldown holds back are counted in the next delivery).
 * budget: a use of the organization's monthly budget at or past the rule's share fires once per month.
 */
import { cooldownOf, fire, KEPT_OUTCOMES, type AlertCondition, type AlertFiring, type AlertState, type AlertWatch, type BudgetUse, type PendingWait } from './alerts';

/** A delivery a watch rule decided, with what it is about. */
export interface WatchFiring {
  firing: AlertFiring;
  waiting?: PendingWait;
  budget?: BudgetUse;
}

/** Months a budget evaluator remembers having alerted. */
const KEPT_PERIODS = 24;

/** Takes one event into the state (mutated); a budget use may fire at once (an approval wait fires at its deadline: dueWaits). */
export function takeWatch(condition: AlertCondition, state: AlertState, watch: AlertWatch): WatchFiring | undefined {
  if (watch.kind === 'approval') {
    if (condition.kind !== 'approval_waiting') return undefined;
    const { event } = watch;
    const waits = (state.waits ??= []);
    const at = waits.findIndex((w) => w.runId === event.runId);
    if (!event.waiting) {
      if (at >= 0 && waits[at]!.stepIndex === event.stepIndex) waits.splice(at, 1);
      return undefined;
    }
    if (at >= 0 || (state.alerted ?? []).includes(event.runId)) return undefined;
    waits.push({
      runId: event.runId, workflowId: event.workflowId, workflowName: event.workflowName, stepIndex: event.stepIndex,
      since: event.at, deadline: event.at + condition.afterSeconds * 1000,
    });
    return undefined;
  }
  if (condition.kind !== 'budget') return undefined;
  const { use } = watch;
  const periods = (state.periods ??= []);
  if (use.percent < condition.percent || periods.includes(use.period)) return undefined;
  periods.push(use.period);
  if (periods.length > KEPT_PERIODS) periods.splice(0, periods.length - KEPT_PERIODS);
  return { firing: fire(state, use.at, { count: 1, suppressed: 0, firstAt: use.at, lastAt: use.at }), budget: use };
}

/** The waits whose deadline has come (`now`: the workflow's clock): each fires, unless the cooldown holds it back; either way once per run. */
export function dueWaits(condition: AlertCondition, state: AlertState, now: number): WatchFiring[] {
  if (condition.kind !== 'approval_waiting') return [];
  const waits = state.waits ?? [];
  const due = waits.filter((w) => w.deadline <= now).sort((a, b) => a.deadline - b.deadline);
  if (due.length === 0) return [];
  state.waits = waits.filter((w) => w.deadline > now);
  const alerted = (state.alerted ??= []);
  const firings: WatchFiring[] = [];
  for (const wait of due) {
    alerted.push(wait.runId);
    const cooling = state.lastFiredAt > 0 && wait.deadline - state.lastFiredAt < cooldownOf(condition) * 1000;
    if (cooling) {
      state.suppressed++;
      continue;
    }
    const firing = fire(state, wait.deadline, { count: 1 + state.suppressed, suppressed: state.suppressed, firstAt: wait.since, lastAt: wait.deadline });
    firings.push({ firing, waiting: wait });
  }
  if (alerted.length > KEPT_OUTCOMES) alerted.splice(0, alerted.length - KEPT_OUTCOMES);
  return firings;
}

/** The start of the month after `period` (`YYYY-MM`), ms since the epoch (UTC). */
export function periodEnd(period: string): number {
  const [year, month] = period.split('-').map(Number);
  return Date.UTC(year ?? 1970, month ?? 0, 1);
}

/**
 * When the evaluator must look again: the next wait's deadline; with none, until the cooldown
 * (approval_waiting: its once-per-run memory) or the last alerted month (budget) is over, after
 * which it may complete.
 */
export function nextWake(condition: AlertCondition, state: AlertState): number {
  const deadlines = (state.waits ?? []).map((w) => w.deadline);
  if (deadlines.length > 0) return Math.min(...deadlines);
  if (condition.kind === 'budget') {
    const last = state.periods?.at(-1);
    return last === undefined ? 0 : periodEnd(last);
  }
  return state.lastFiredAt + cooldownOf(condition) * 1000;
}
