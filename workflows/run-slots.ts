/**
 * runSlots: the semaphore of one concurrency limit (issue 36), workflow ID `slots:<key>`
 * (src/common/slots.ts). It holds the runs that have a slot and the FIFO queue of those waiting.
 *
 * Signal `slotAcquire` (sent with signal-with-start by a run's acquireSlot activity): the run joins
 * the queue in order of its start time (a request that arrives a moment late still goes before runs
 * started after it; a repeat is ignored, so a retried activity asks once); the limit is the latest
 * asker's.
 * In `newest-wins` mode every waiting run is told it was superseded (it ends without running) and
 * every holder is cancelled (its release frees the slot for the newcomer); "newest" is by start
 * time: a request from a run started before the newest one seen is itself superseded at once.
 * Signal `slotRelease` (sent by the run when it ends, whatever the ending): the run leaves the
 * holders or the queue. Whenever a slot is free, the first waiting run gets a `slotGrant` signal; a
 * run that cannot be signalled (closed) is dropped and the next one served.
 * While it has holders, every `checkSeconds` the slotHoldersClosed activity asks Temporal which of
 * them have closed (terminated by an operator, or by the backstop timeout, so no release came) and
 * their slots are freed. Query `slots`: the holders and the queue (the gateway reads a waiting run's
 * place from it). It never completes; past CONTINUE_AFTER_EVENTS (or when Temporal suggests it) it
 * continues as new with its holders and queue, so its history stays small.
 */
import { condition, continueAsNew, getExternalWorkflowHandle, log, patched, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { SlotAcquire, SlotGrant, SlotsInput } from '../src/common/slots';
import { slotAcquireSignal, slotGrantSignal, slotReleaseSignal, slotsQuery } from '../src/common/workflow-contracts';

/** The semaphore continues as new past this many history events. */
export const CONTINUE_AFTER_EVENTS = 2_000;

/**
 * The patch of newest-wins by start time: before it, the last request to arrive won, so a run whose
 * first workflow task ran late superseded a run started after it (and was itself cancelled by none).
 */
export const NEWEST_BY_START = 'slots-newest-by-start';

const { slotHoldersClosed } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 3 },
});

export async function runSlots(input: SlotsInput): Promise<void> {
  const { key, checkSeconds } = input;
  let limit = input.limit;
  let newest = input.newest;
  const holders: string[] = [...input.holders];
  const queue: SlotAcquire[] = [...input.queue];
  const sending = new Set<Promise<void>>();
  let changed = true;

  const drop = (runId: string): void => {
    const held = holders.indexOf(runId);
    if (held >= 0) holders.splice(held, 1);
    const waiting = queue.findIndex((q) => q.runId === runId);
    if (waiting >= 0) queue.splice(waiting, 1);
    changed = true;
  };
  const tell = (runId: string, grant: SlotGrant): void => {
    const sent: Promise<void> = getExternalWorkflowHandle(runId).signal(slotGrantSignal, grant).then(
      () => undefined,
      // the run has closed (terminated while it waited): its slot goes to the next one
      () => { if (!grant.supersededBy) drop(runId); },
    ).finally(() => sending.delete(sent));
    sending.add(sent);
  };

  setHandler(slotsQuery, () => ({ key, limit, holders: [...holders], queue: queue.map((q) => q.runId) }));
  setHandler(slotAcquireSignal, (request) => {
    if (holders.includes(request.runId) || queue.some((q) => q.runId === request.runId)) return;
    limit = request.limit;
    if (request.mode === 'newest-wins' && patched(NEWEST_BY_START)) {
      // the newest run by start wins, not the last request to arrive: one from a run started before
      // the newest seen (its first workflow task ran late) is superseded at once
      if (newest && request.started !== undefined && request.started < newest.started) {
        tell(request.runId, { key, supersededBy: newest.runId });
        return;
      }
      if (request.started !== undefined) newest = { runId: request.runId, started: request.started };
    }
    if (request.mode === 'newest-wins') {
      for (const superseded of queue.splice(0)) tell(superseded.runId, { key, supersededBy: request.runId });
      for (const holder of holders) {
        getExternalWorkflowHandle(holder).cancel().catch(() => drop(holder));
      }
    }
    // first come by start: behind every waiting run that started no later than this one
    let at = queue.length;
    while (at > 0 && request.started !== undefined && (queue[at - 1]!.started ?? '') > request.started) at--;
    queue.splice(at, 0, request);
    changed = true;
  });
  setHandler(slotReleaseSignal, ({ runId }) => drop(runId));

  for (;;) {
    while (holders.length < limit && queue.length > 0) {
      const next = queue.shift()!;
      holders.push(next.runId);
      tell(next.runId, { key });
    }
    changed = false;
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > CONTINUE_AFTER_EVENTS) {
      await Promise.all([...sending]);
      if (!changed) {
        await continueAsNew<typeof runSlots>({ key, limit, holders, queue, checkSeconds, ...(newest ? { newest } : {}) });
      }
      continue;
    }
    if (holders.length === 0) {
      await condition(() => changed);
      continue;
    }
    if (await condition(() => changed, checkSeconds * 1000)) continue;
    const closed = await slotHoldersClosed([...holders]);
    for (const runId of closed) {
      log.info('a slot holder closed without releasing its slot; the slot is freed', { key, runId });
      drop(runId);
    }
  }
}
