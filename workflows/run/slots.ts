/**
 * Concurrency limits, the run's side (level 7; issue 36). A run whose input carries `slots` (the
 * limits in force when it started: src/runs/trigger-service.ts slotsFor) takes a slot of each, in
 * order, before its steps start: the acquireSlot activity signals the limit's semaphore
 * (../run-slots.ts, started on first use) and the run waits for its `slotGrant` signal, PENDING with
 * `waitingOn: {kind: 'slot'}` in its state. When the run ends, whatever the ending (complete,
 * failed, its time limit, cancelled while it ran or while it waited), it signals `slotRelease` to
 * every semaphore it asked, outside any cancelled scope; a run terminated by an operator cannot, and
 * its semaphore frees its slot at its next check of its holders.
 *
 * A run that waits longer than `maxWaitSeconds` ends TIMEOUT without running; one superseded in a
 * newest-wins queue ends FAILED (RUN_SUPERSEDED). The run's own time limit counts from the moment
 * it got its last slot (time-limit.ts reads slotsGrantedAt). Runs without `slots` do none of this.
 */
import {
  ApplicationFailure, CancellationScope, condition, getExternalWorkflowHandle, patched, proxyActivities, proxyLocalActivities, setHandler, upsertMemo, workflowInfo,
  type ActivityOptions, type LocalActivityOptions,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { decisionsOf, FailureType, type RunInput, type RunState, type RunSummary } from '../../src/common/run-types';
import { slotsWorkflowId, type RunSlots } from '../../src/common/slots';
import { slotGrantSignal, slotReleaseSignal, stateQuery } from '../../src/common/workflow-contracts';
import { atLevel } from './features';
import { runLocals } from './run-locals';

/** The level runs wait for their slots from. */
export const SLOTS_LEVEL = 7;

const ACQUIRE_OPTIONS = {
  // short: a request lost with a killed worker is sent again soon (a repeat is ignored)
  startToCloseTimeout: '10s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s' },
} satisfies ActivityOptions & LocalActivityOptions;
const { acquireSlot } = proxyActivities<Activities>(ACQUIRE_OPTIONS);
const { acquireSlot: acquireSlotHere } = proxyLocalActivities<Activities>(ACQUIRE_OPTIONS);

/**
 * The patch that asks for a slot in a local activity, within the run's first workflow task: a
 * regular activity cost every limited run an activity task and a second workflow task before it
 * even waited, and under a flood a quiet organization's run queued behind all of them on its way to
 * its own free slot (issue 48: 25-41 s). Only limited runs reach it (a marker on those alone).
 */
export const LOCAL_ACQUIRE = 'slots-local-acquire';

/** When a limited run's own time limit starts: when it got its slots; undefined for any other run. */
export function slotsGrantedAt(): number | undefined {
  return runLocals().slotsGrantedAtMs;
}

/** Runs `body` (the run) within its slots when it has limits; otherwise hands back `body()` as it is. */
export function withSlots(input: RunInput, state: RunState, body: () => Promise<RunSummary>): Promise<RunSummary> {
  if (!input.slots || input.slots.claims.length === 0 || !atLevel(SLOTS_LEVEL)) return body();
  return holdingSlots(input, input.slots, state, body);
}

async function holdingSlots(input: RunInput, slots: RunSlots, state: RunState, body: () => Promise<RunSummary>): Promise<RunSummary> {
  const granted = new Set<string>();
  let supersededBy: string | undefined;
  setHandler(slotGrantSignal, (grant) => {
    if (grant.supersededBy !== undefined) supersededBy ??= grant.supersededBy;
    else granted.add(grant.key);
  });
  // the steps register it again; until then a status poll sees the run waiting
  setHandler(stateQuery, () => state);
  const asked: string[] = [];
  const waitUntil = Date.now() + slots.maxWaitSeconds * 1000;
  const acquire = patched(LOCAL_ACQUIRE) ? acquireSlotHere : acquireSlot;
  const fairnessKey = workflowInfo().priority?.fairnessKey;
  try {
    for (const claim of slots.claims) {
      state.status = 'PENDING';
      state.waitingOn = { kind: 'slot', scope: claim.scope, key: claim.key, limit: claim.limit };
      asked.push(claim.key);
      await acquire({ key: claim.key, runId: input.runId, limit: claim.limit, started: input.started, ...(claim.mode ? { mode: claim.mode } : {}), ...(fairnessKey ? { fairnessKey } : {}) });
      const got = await condition(() => granted.has(claim.key) || supersededBy !== undefined, Math.max(1, waitUntil - Date.now()));
      if (supersededBy !== undefined) {
        throw ended(state, 'FAILED', FailureType.RUN_SUPERSEDED, `superseded by run ${supersededBy} of the same trigger (newest-wins) before it started`);
      }
      if (!got) {
        upsertMemo({ endedAs: 'TIMEOUT' });
        throw ended(state, 'TIMEOUT', FailureType.RUN_TIMEOUT, `the run waited ${slots.maxWaitSeconds} seconds for a slot of its ${claim.scope}'s concurrency limit (${claim.limit}) and did not start`);
      }
    }
    delete state.waitingOn;
    state.status = 'RUNNING';
    runLocals().slotsGrantedAtMs = Date.now();
    return await body();
  } finally {
    // whatever the ending, cancellation included: every semaphore asked forgets this run
    await CancellationScope.nonCancellable(() => Promise.all(asked.map(async (key) => {
      try {
        await getExternalWorkflowHandle(slotsWorkflowId(key)).signal(slotReleaseSignal, { runId: input.runId });
      } catch {
        // no such semaphore (the activity never reached it): nothing to release
      }
    })));
  }
}

function ended(state: RunState, status: 'FAILED' | 'TIMEOUT', type: string, message: string): ApplicationFailure {
  // its steps never started: they stay PENDING
  delete state.waitingOn;
  const summary: RunSummary = { status, error: message, outcomes: state.outcomes, steps: state.steps, transitions: state.transitions, ...decisionsOf(state) };
  Object.assign(state, { status, error: message });
  return ApplicationFailure.create({ type, message, nonRetryable: true, details: [summary] });
}
