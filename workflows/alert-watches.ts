/**
 * The evaluator of an approval_waiting or budget rule (issue 54; docs/operations.md "Alerts"):
 * evaluateAlertRule (workflows/alert-evaluator.ts) hands over to watchRule when its rule is of one
 * of those kinds, at its very start, so the histories of the outcome kinds replay as before.
 *
 * Signal `alertWatch` (signal-with-start by the worker that saw an approval wait start or end, or
 * that recorded a model call's usage, src/runs/alerts.ts) joins the queue; takeWatch and dueWaits
 * (src/common/alert-watches.ts) decide. Each waiting run has its deadline in the state, and the
 * loop sleeps on a durable timer until the nearest one (or a new signal). Idle with no waits, it
 * stays until its cooldown (approval_waiting) or its last alerted month (budget) is over, then
 * completes. Deliveries go through deliverAlert as the outcome kinds' do (deliverOnce).
 */
import { ActivityFailure, condition, continueAsNew, log, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { dueWaits, nextWake, takeWatch, type WatchFiring } from '../src/common/alert-watches';
import { emptyAlertState, type AlertDeliveryRequest, type AlertEvaluatorInput, type AlertWatchSignal } from '../src/common/alerts';
import { messageOf } from '../src/common/narrow';
import { alertStateQuery, alertWatchSignal } from '../src/common/workflow-contracts';

/** The entity continues as new past this many history events. */
export const CONTINUE_AFTER_EVENTS = 5_000;
/** Attempts of one delivery (1 s backoff doubling up to a minute: about ten minutes in all). */
export const ALERT_DELIVERY_ATTEMPTS = 12;

const { deliverAlert } = proxyActivities<Activities>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s', maximumAttempts: ALERT_DELIVERY_ATTEMPTS, nonRetryableErrorTypes: ['ALERT_REFUSED'] },
});
const { alertDeliveryFailed } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/** One delivery with its retries; a delivery that fails for good is audited. Answers whether it was sent ('failed' when it failed for good). */
export async function deliverOnce(request: AlertDeliveryRequest): Promise<'delivered' | 'skipped' | 'failed'> {
  try {
    const result = await deliverAlert(request);
    // a rule deleted or disabled since (or a run no longer waiting): nothing was sent
    return result.delivered ? 'delivered' : 'skipped';
  } catch (err) {
    const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
    log.warn('an alert delivery failed for good', { ruleId: request.ruleId, deliveryId: request.deliveryId, error: messageOf(cause) });
    await alertDeliveryFailed(request, messageOf(cause));
    return 'failed';
  }
}

export async function watchRule(input: AlertEvaluatorInput): Promise<void> {
  const state = input.state ?? emptyAlertState();
  const queue: AlertWatchSignal[] = [...(input.watches ?? [])];
  let conditionNow = input.condition;
  let delivered = 0;
  let failed = 0;
  setHandler(alertStateQuery, () => ({ ...state, outcomes: [], waits: [...(state.waits ?? [])], delivered, failed }));
  setHandler(alertWatchSignal, (signal) => {
    queue.push(signal);
  });

  for (;;) {
    const firings: WatchFiring[] = [];
    while (queue.length > 0) {
      const signal = queue.shift()!;
      // the rule as its sender read it last
      conditionNow = signal.condition;
      const firing = takeWatch(conditionNow, state, signal.watch);
      if (firing) firings.push(firing);
    }
    firings.push(...dueWaits(conditionNow, state, Date.now()));
    for (const { firing, waiting, budget } of firings) {
      const about = waiting?.runId.slice(-8) ?? budget?.period ?? 'x';
      const deliveryId = `alert_${input.ruleId}_${workflowInfo().runId.slice(0, 8)}_${about}_${state.fired}`;
      const outcome = await deliverOnce({ orgId: input.orgId, ruleId: input.ruleId, deliveryId, firing, ...(waiting ? { waiting } : {}), ...(budget ? { budget } : {}) });
      if (outcome === 'delivered') delivered++;
      if (outcome === 'failed') failed++;
    }
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > CONTINUE_AFTER_EVENTS) {
      await continueAsNew<(input: AlertEvaluatorInput) => Promise<void>>({ ...input, condition: conditionNow, state, watches: [...queue] });
    }
    if (queue.length > 0) continue;
    const left = nextWake(conditionNow, state) - Date.now();
    if (left <= 0) {
      if ((state.waits ?? []).length === 0) return;
      continue;
    }
    await condition(() => queue.length > 0, left);
  }
}
