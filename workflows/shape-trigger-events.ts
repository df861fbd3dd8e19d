/**
 * shapeTriggerEvents: the entity of one (trigger, key) of a debounced or batched trigger (issue
 * 51), workflow ID `shape:<triggerId>:<key digest>` (src/common/shaping.ts).
 *
 * Signal `shapeEvent` (sent with signal-with-start by the gateway before it answers 202): the
 * event joins the open window, in arrival order; an event whose id the entity has already seen
 * counts once (a provider's redelivery). The window closes when its deadline passes
 * (windowDeadline: debounce after the quiet period or the maximum wait, batch after the maximum
 * wait) or when it is full (a batch's size, or the byte and count bounds of a window); then the
 * startShapedRun activity starts the trigger's run with the window's events, under an
 * idempotency key derived from this execution and the run's number, so a retried activity or a
 * replay finds the same run. Events that arrive while that run starts open the next window.
 *
 * With nothing pending it completes; a signal-with-start for the key then starts a new entity.
 * A signal that arrives as it completes makes Temporal refuse the completion and deliver the
 * signal first, so no event accepted by Temporal is dropped. Past CONTINUE_AFTER_EVENTS (or when
 * Temporal suggests it) it continues as new carrying its pending events. The time it counts is
 * the workflow's own (when the worker saw the events): after a worker outage the quiet period
 * counts from when the worker is back, which keeps a window whole rather than cut.
 */
import { condition, continueAsNew, log, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  SHAPED_WINDOW_MAX_BYTES, SHAPED_WINDOW_MAX_EVENTS, shapedEventBytes, shapingMode, windowDeadline,
  type ShapedEvent, type ShapeInput,
} from '../src/common/shaping';
import { shapeEventSignal, shapeStateQuery } from '../src/common/workflow-contracts';

/** The entity continues as new past this many history events. */
export const CONTINUE_AFTER_EVENTS = 5_000;
/** Event ids remembered for deduplication (the newest). */
const SEEN_IDS = 10_000;
const KEPT_RUNS = 20;

// A start that fails for Temporal's sake is retried without end: an accepted event must get its run.
const { startShapedRun } = proxyActivities<Activities>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

export async function shapeTriggerEvents(input: ShapeInput): Promise<void> {
  const { shaping } = input;
  const mode = shapingMode(shaping);
  const collectLast = 'debounce' in shaping && shaping.debounce.collect === 'last';
  const pending: ShapedEvent[] = [...(input.pending ?? [])];
  let pendingBytes = pending.reduce((sum, e) => sum + shapedEventBytes(e), 0);
  let firstAt = pending.length > 0 ? Date.now() : 0;
  let lastAt = firstAt;
  let started = input.started ?? 0;
  let arrivals = 0;
  const seen = new Set<string>(pending.map((e) => e.id));
  const runs: string[] = [];
  const refused: string[] = [];

  setHandler(shapeStateQuery, () => ({ pending: pending.length, started, runs: [...runs], refused: [...refused] }));
  setHandler(shapeEventSignal, (event) => {
    if (seen.has(event.id)) return;
    seen.add(event.id);
    if (seen.size > SEEN_IDS) seen.delete(seen.values().next().value ?? '');
    const now = Date.now();
    if (pending.length === 0) firstAt = now;
    lastAt = now;
    arrivals++;
    if (collectLast) {
      pending.splice(0, pending.length, event);
      pendingBytes = shapedEventBytes(event);
    } else {
      pending.push(event);
      pendingBytes += shapedEventBytes(event);
    }
  });

  const full = (): boolean => pending.length >= SHAPED_WINDOW_MAX_EVENTS || pendingBytes >= SHAPED_WINDOW_MAX_BYTES
    || windowDeadline(shaping, firstAt, lastAt, pending.length) === 'full';

  for (;;) {
    if (pending.length === 0) {
      const info = workflowInfo();
      if (info.continueAsNewSuggested || info.historyLength > CONTINUE_AFTER_EVENTS) break;
      // nothing pending: done; a signal arriving now is delivered before the completion stands
      return;
    }
    // wait until the window's deadline, waking at each new event (it may move the deadline or fill the window)
    for (;;) {
      if (full()) break;
      const deadline = windowDeadline(shaping, firstAt, lastAt, pending.length);
      const left = deadline === 'full' ? 0 : deadline - Date.now();
      if (left <= 0) break;
      const seenArrivals = arrivals;
      await condition(() => arrivals !== seenArrivals || full(), left);
    }
    // the window closes: its events go to one run; later arrivals open the next window
    const count = 'batch' in shaping ? Math.min(pending.length, shaping.batch.size) : pending.length;
    const events = pending.splice(0, count);
    pendingBytes = pending.reduce((sum, e) => sum + shapedEventBytes(e), 0);
    firstAt = pending.length > 0 ? Date.now() : 0;
    lastAt = firstAt;
    started++;
    const idempotencyKey = `shape:${workflowInfo().workflowId}:${workflowInfo().runId}:${started}`;
    const outcome = await startShapedRun({ orgId: input.orgId, triggerId: input.triggerId, key: input.key, mode, events, idempotencyKey });
    if (outcome.ok) {
      runs.push(outcome.runId);
      if (runs.length > KEPT_RUNS) runs.shift();
    } else {
      // the trigger refuses the run (disabled, deleted, its inputs refused): the refusal is recorded with its deliveries
      log.warn('a shaped trigger refused the run of a window', { triggerId: input.triggerId, events: events.length, error: outcome.error });
      refused.push(outcome.error);
      if (refused.length > KEPT_RUNS) refused.shift();
    }
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > CONTINUE_AFTER_EVENTS) break;
  }
  // a long-lived key: the pending events and the run count carry over
  await continueAsNew<typeof shapeTriggerEvents>({ ...input, pending: [...pending], started });
}
