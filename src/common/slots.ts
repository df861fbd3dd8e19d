/**
 * Concurrency limits that queue (issue 36): the shapes a limited run, its semaphore workflow
 * (workflows/run-slots.ts) and the activities that start and check it share. Pure: workflow code
 * imports it.
 *
 * A limit key names one semaphore workflow, `slots:<key>`: `org:<orgId>@<taskQueue>` for an
 * organization's limit (FLOWGATE_ORG_MAX_RUNNING), `trigger:<triggerId>@<taskQueue>` for a
 * trigger's `concurrency` (the task queue keeps instances that share a namespace apart). A run
 * carries the limits in force when it started (RunInput.slots) and takes its slots in that order
 * (its trigger's first, then its organization's), so a run never holds an organization slot while
 * it waits for a trigger slot.
 */

/** How a trigger's runs share its slots: `queue` (first come, first served) or `newest-wins`. */
export type SlotMode = 'queue' | 'newest-wins';

/** One limit a run must take a slot of before its steps start. */
export interface SlotClaim {
  scope: 'trigger' | 'organization';
  /** `trigger:<id>` or `org:<id>`: the semaphore is the workflow `slots:<key>` */
  key: string;
  /** at most this many runs hold a slot of the key at once (the latest run's limit wins) */
  limit: number;
  /** trigger limits only; absent: queue */
  mode?: SlotMode;
}

/** RunInput.slots: the limits in force when the run started. Absent: no limit, no extra steps. */
export interface RunSlots {
  claims: SlotClaim[];
  /** a run that waited this long for its slots ends TIMEOUT without running (FLOWGATE_SLOT_MAX_WAIT_SECONDS) */
  maxWaitSeconds: number;
}

/** The workflow ID of the semaphore of limit `key`. */
export function slotsWorkflowId(key: string): string {
  return `slots:${key}`;
}

/** The `slotAcquire` signal: run `runId` asks for a slot (a repeat is ignored). */
export interface SlotAcquire {
  runId: string;
  limit: number;
  mode?: SlotMode;
  /**
   * when the run started (ISO 8601 UTC, RunInput.started): the queue is kept in this order, so a
   * run whose request arrives a moment after a later-started one's still goes first; ties (and
   * requests without it) in order of arrival
   */
  started?: string;
}

/** The `slotRelease` signal: run `runId` holds or waits for a slot no more. */
export interface SlotRelease {
  runId: string;
}

/** The `slotGrant` signal to a run: its slot of `key` is granted, or it was superseded (newest-wins). */
export interface SlotGrant {
  key: string;
  /** newest-wins: the newer run that took this waiting run's place; the run ends without running */
  supersededBy?: string;
}

/** The semaphore's input, and what it carries over when it continues as new. */
export interface SlotsInput {
  key: string;
  limit: number;
  /** run IDs holding a slot */
  holders: string[];
  /** waiting runs, first come first */
  queue: SlotAcquire[];
  /** how often the semaphore checks that its holders still run (FLOWGATE_SLOT_CHECK_SECONDS) */
  checkSeconds: number;
  /**
   * newest-wins: the latest-started run that asked (a request from a run started before it is
   * superseded at once, whatever order the requests arrived in); absent in other modes
   */
  newest?: { runId: string; started: string };
}

/** What the semaphore's `slots` query answers. */
export interface SlotsState {
  key: string;
  limit: number;
  holders: string[];
  queue: string[];
}

/** The acquireSlot activity's argument: signal-with-start the semaphore of `key`. */
export interface AcquireSlotRequest extends SlotAcquire {
  key: string;
  /**
   * the asker's fairness key (its organization, src/common/priority.ts): a semaphore this request
   * starts runs its workflow tasks and activities under it, so that a flooding organization's
   * semaphore is dispatched in that organization's turn, not in a turn of its own shared with every
   * other semaphore. Absent (a request from before): the semaphore has none.
   */
  fairnessKey?: string;
}

/**
 * The key of an organization's limit (FLOWGATE_ORG_MAX_RUNNING) on one task queue: runs and durable
 * tool calls of the organization share its semaphore.
 */
export function orgSlotKey(orgId: string, taskQueue?: string): string {
  return `org:${orgId}${taskQueue ? `@${taskQueue}` : ''}`;
}

/**
 * A durable tool call's slot of its organization's limit (src/tools/custom/durable.ts): the call's
 * workflow takes it before its first attempt and gives it back when it ends (workflows/durable-call-slot.ts).
 */
export interface CallSlot {
  key: string;
  limit: number;
  /** a call that waited this long for its slot fails without calling the upstream (FLOWGATE_SLOT_MAX_WAIT_SECONDS) */
  maxWaitSeconds: number;
  /** when the call started (ISO 8601 UTC): its place among the queue's runs and calls */
  started: string;
}
