/**
 * evaluateAlertRule: the entity of one alert rule (issue 54; docs/operations.md "Alerts"),
 * workflow ID `alert:<ruleId>` (src/common/alerts.ts).
 *
 * Signal `alertOutcome` (sent with signal-with-start by the worker that saw a run of the rule's
 * organization end, src/runs/alerts.ts): the outcome joins the queue; the loop takes them in
 * order and `judge` decides (window, threshold or ratio, cooldown) whether one makes a delivery.
 * A delivery goes through the deliverAlert activity with retries and backoff; a delivery that
 * fails for good is audited by alertDeliveryFailed, and the entity carries on. A run reported twice
 * (its last workflow task retried on another worker) counts once. So an outage of a
 * thousand failed runs is one delivery per cooldown, with the count it covers.
 *
 * With nothing queued it waits until its cooldown and window are over (a later outcome must still
 * see them), then completes; a signal arriving as it completes makes Temporal refuse the
 * completion and deliver the signal first. Past CONTINUE_AFTER_EVENTS (or when Temporal suggests
 * it) it continues as new carrying its state and queue. Times are the outcomes' own (the worker's
 * clock when the run ended), so a replay decides the same.
 *
 * A rule of kind approval_waiting or budget is watched by watchRule (workflows/alert-watches.ts).
 */
import { condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import { cooldownOf, emptyAlertState, judge, watchesOutcomes, type AlertCondition, type AlertEvaluatorInput, type AlertSignal } from '../src/common/alerts';
import { alertOutcomeSignal, alertStateQuery } from '../src/common/workflow-contracts';
import { CONTINUE_AFTER_EVENTS, deliverOnce, watchRule } from './alert-watches';

/** Run IDs remembered to count a repeated report once (the newest). */
const SEEN_RUNS = 10_000;

export async function evaluateAlertRule(input: AlertEvaluatorInput): Promise<void> {
  // approval waits and budget use: their own loop, chosen before anything else happens
  if (!watchesOutcomes(input.condition)) return watchRule(input);
  const state = input.state ?? emptyAlertState();
  const queue: AlertSignal[] = [...(input.pending ?? [])];
  let conditionNow: AlertCondition = input.condition;
  let delivered = 0;
  let failed = 0;
  let lastAt = 0;
  // a run's end reported twice (its last workflow task retried on another worker) counts once
  const seen = new Set<string>();

  setHandler(alertStateQuery, () => ({ ...state, outcomes: [...state.outcomes], delivered, failed }));
  setHandler(alertOutcomeSignal, (signal) => {
    queue.push(signal);
  });

  for (;;) {
    while (queue.length > 0) {
      const signal = queue.shift()!;
      if (seen.has(signal.ended.runId)) continue;
      seen.add(signal.ended.runId);
      if (seen.size > SEEN_RUNS) seen.delete(seen.values().next().value ?? '');
      // the rule as its sender read it last (an update applies from its next outcome)
      conditionNow = signal.condition;
      lastAt = Math.max(lastAt, signal.ended.at);
      const firing = judge(conditionNow, state, signal.ended);
      if (!firing) continue;
      // unique per delivery: this execution's ID and the count (a fresh entity counts from 0 again)
      const deliveryId = `alert_${input.ruleId}_${workflowInfo().runId.slice(0, 8)}_${state.fired}`;
      const outcome = await deliverOnce({ orgId: input.orgId, ruleId: input.ruleId, deliveryId, firing, run: signal.ended });
      if (outcome === 'delivered') delivered++;
      if (outcome === 'failed') failed++;
      const info = workflowInfo();
      if (info.continueAsNewSuggested || info.historyLength > CONTINUE_AFTER_EVENTS) {
        await continueAsNew<typeof evaluateAlertRule>({ ...input, condition: conditionNow, state, pending: [...queue] });
      }
    }
    // idle: stay while the cooldown or the window could still matter to a later outcome
    const windowMs = conditionNow.kind === 'failure_rate' ? conditionNow.windowSeconds * 1000 : 0;
    const until = Math.max(state.lastFiredAt + cooldownOf(conditionNow) * 1000, lastAt + windowMs);
    const left = until - Date.now();
    if (left <= 0 || !(await condition(() => queue.length > 0, left))) {
      if (queue.length === 0) return;
    }
  }
}
