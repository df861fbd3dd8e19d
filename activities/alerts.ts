/**
 * The alert evaluator's activities (workflows/alert-evaluator.ts): deliverAlert makes one attempt
 * at a delivery (src/runs/alerts.ts AlertDeliveries); a refusal for good is ALERT_REFUSED, not
 * retried; anything else is retried with backoff by the evaluator's policy. alertDeliveryFailed
 * audits a delivery whose attempts are spent.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { AlertDeliveryRequest, AlertDeliveryResult } from '../src/common/alerts';
import { messageOf } from '../src/common/narrow';
import { AlertRefused, type AlertDeliveries } from '../src/runs/alert-deliveries';

export const ALERT_REFUSED = 'ALERT_REFUSED';

export function createAlertActivities(alerts: AlertDeliveries | undefined) {
  const deliveries = (): AlertDeliveries => {
    // retried until a worker that has them takes the task
    if (!alerts) throw ApplicationFailure.retryable('this worker delivers no alerts (no alert deliveries configured)', 'ALERT_UNAVAILABLE');
    return alerts;
  };
  return {
    async deliverAlert(request: AlertDeliveryRequest): Promise<AlertDeliveryResult> {
      try {
        return await deliveries().deliver(request);
      } catch (err) {
        if (err instanceof AlertRefused) throw ApplicationFailure.nonRetryable(err.message, ALERT_REFUSED);
        if (err instanceof ApplicationFailure) throw err;
        throw ApplicationFailure.retryable(messageOf(err), 'ALERT_FAILED');
      }
    },
    async alertDeliveryFailed(request: AlertDeliveryRequest, error: string): Promise<void> {
      await deliveries().failed(request, error);
    },
  };
}
