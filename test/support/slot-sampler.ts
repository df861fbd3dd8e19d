/**
 * Samples the status of many runs through the status API at a steady pace (concurrency-limit
 * tests): the most runs seen in progress at once (RUNNING or PAUSED), when each was first seen
 * in progress and ended, and every `waitingOn` a PENDING run showed.
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter, type PayloadCodec } from '@temporalio/common';
import { clearHistory } from './histories';

export interface SampledRun {
  runId: string;
  /** the status URL path (`/ext/webhook/<key>/runs/<workflow>/<run>/status`) */
  statusPath: string;
  /** the gateway base URL to ask (spread over gateways in scale-out tests) */
  base: string;
  firstInProgress?: number;
  ended?: number;
  final?: { status: string; error?: string };
  pendingWaits: Record<string, unknown>[];
  /** every answer: when it was asked for (`sent`) and arrived (`at`), the status, what it waited on */
  observations?: { sent: number; at: number; status: string; waitingOn?: Record<string, unknown> }[];
}

export interface Sample {
  /**
   * most runs that answered in progress in one sample (coarse: the answers of one sample are
   * computed moments apart, so a run that ended just before another started may count with it;
   * surelyAtOnce is the sound figure)
   */
  maxInProgress: number;
  samples: number;
  /** samples where a status call failed (a gateway down): not counted */
  failedCalls: number;
}

const IN_PROGRESS = new Set(['RUNNING', 'PAUSED']);
const ENDED = new Set(['COMPLETE', 'FAILED', 'TIMEOUT']);

/** Samples every `everyMs` until every run has ended or `timeoutMs` passed (then throws). */
export async function sampleUntilEnded(runs: SampledRun[], options: { everyMs?: number; timeoutMs?: number; onSample?: (inProgress: number) => void } = {}): Promise<Sample> {
  const everyMs = options.everyMs ?? 100;
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  const result: Sample = { maxInProgress: 0, samples: 0, failedCalls: 0 };
  while (runs.some((r) => r.ended === undefined)) {
    if (Date.now() > deadline) throw new Error(`runs still open after the deadline: ${runs.filter((r) => r.ended === undefined).map((r) => r.runId).join(', ')}`);
    const started = Date.now();
    const statuses = await Promise.all(runs.map(async (run) => {
      if (run.final) return run.final.status;
      const sent = Date.now();
      try {
        const response = await fetch(`${run.base}${run.statusPath}`);
        if (response.status !== 200) throw new Error(`status ${response.status}`);
        const body = (await response.json()) as { status: string; error?: string; waitingOn?: Record<string, unknown> };
        const now = Date.now();
        if (IN_PROGRESS.has(body.status) && run.firstInProgress === undefined) run.firstInProgress = now;
        if (ENDED.has(body.status)) {
          run.ended = now;
          run.final = { status: body.status, ...(body.error ? { error: body.error } : {}) };
        }
        if (body.status === 'PENDING' && body.waitingOn) run.pendingWaits.push(body.waitingOn);
        (run.observations ??= []).push({ sent, at: now, status: body.status, ...(body.waitingOn ? { waitingOn: body.waitingOn } : {}) });
        return body.status;
      } catch {
        result.failedCalls++;
        return 'UNKNOWN';
      }
    }));
    const inProgress = statuses.filter((s) => IN_PROGRESS.has(s)).length;
    result.maxInProgress = Math.max(result.maxInProgress, inProgress);
    result.samples++;
    options.onSample?.(inProgress);
    const spent = Date.now() - started;
    if (spent < everyMs) await new Promise((resolve) => setTimeout(resolve, everyMs - spent));
  }
  return result;
}

/**
 * When each run was surely in progress by its answers: a run's status only moves forward (PENDING,
 * then in progress, then ended), so it was in progress from the arrival of its first in-progress
 * answer to the asking of its last one; undefined for a run seen in progress at most once.
 */
function surelyInProgress(run: SampledRun): { from: number; to: number } | undefined {
  const seen = (run.observations ?? []).filter((o) => IN_PROGRESS.has(o.status));
  const from = seen[0]?.at;
  const to = seen[seen.length - 1]?.sent;
  return from !== undefined && to !== undefined && from < to ? { from, to } : undefined;
}

/** The most runs surely in progress at one moment, by their answers (sound where maxInProgress is coarse). */
export function surelyAtOnce(runs: SampledRun[]): number {
  const spans = runs.map(surelyInProgress).filter((s): s is { from: number; to: number } => s !== undefined);
  return mostAtOnce(spans.map((s) => ({ granted: s.from, released: s.to })));
}

type HistoryEvent = NonNullable<Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>['events']>[number];

function eventMs(event: HistoryEvent | undefined): number {
  return event?.eventTime ? Number(event.eventTime.seconds) * 1000 + Math.floor((event.eventTime.nanos ?? 0) / 1e6) : Number.NaN;
}

/** The input of the signal `name` a workflow received in `event`; undefined for any other event. */
function receivedSignal<T>(event: HistoryEvent, name: string): T | undefined {
  const signaled = event.workflowExecutionSignaledEventAttributes;
  return signaled?.signalName === name ? defaultPayloadConverter.fromPayload<T>(signaled.input?.payloads?.[0] ?? {}) : undefined;
}

/**
 * When each run got its last slot and when it gave its slots back, as Temporal recorded them: the
 * last `slotGrant` signal in its history, and its `slotRelease` signal sent as it ended (ms); and
 * when it closed. Exact where sampling is coarse.
 */
export async function slotIntervals(client: Client, runIds: string[]): Promise<{ granted: number; released: number; closed: number }[]> {
  return Promise.all(runIds.map(async (runId) => {
    const handle = client.workflow.getHandle(runId);
    const events = (await handle.fetchHistory()).events ?? [];
    const grants = events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'slotGrant');
    const release = events.find((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'slotRelease');
    const closed = (await handle.describe()).closeTime?.getTime() ?? Number.NaN;
    return { granted: eventMs(grants[grants.length - 1]), released: eventMs(release), closed };
  }));
}

/** The run IDs in the order the semaphore `workflowId` granted them a slot (its history). */
export async function grantOrder(client: Client, workflowId: string, among: string[]): Promise<string[]> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const wanted = new Set(among);
  return events.filter((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'slotGrant')
    .map((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.workflowExecution?.workflowId ?? '')
    .filter((id) => wanted.has(id));
}

/** The most intervals that overlap at one moment. */
export function mostAtOnce(intervals: { granted: number; released: number }[]): number {
  const edges = intervals.flatMap((i) => [{ at: i.granted, d: 1 }, { at: i.released, d: -1 }]).sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const edge of edges) {
    now += edge.d;
    most = Math.max(most, now);
  }
  return most;
}

/**
 * Checks the semaphore `workflowId` served its queue first come by start: each grant (to one of
 * `startOrder`) went to the earliest-started of those runs whose request the deciding workflow
 * task had seen. Returns the grant order. A run whose request reached the semaphore late (its
 * first workflow task delayed) may be overtaken by runs that asked before it: that is the design.
 */
export async function checkFifoByStart(fg: { client: Client; codec: PayloadCodec }, workflowId: string, startOrder: string[]): Promise<string[]> {
  const rank = new Map(startOrder.map((id, i) => [id, i]));
  const events = (await clearHistory(fg, workflowId)).events ?? [];
  const arrived = new Set<string>();
  let seenByTask = new Set<string>();
  const granted: string[] = [];
  for (const event of events) {
    const request = receivedSignal<{ runId: string }>(event, 'slotAcquire');
    if (request && rank.has(request.runId)) arrived.add(request.runId);
    if (event.workflowTaskStartedEventAttributes) seenByTask = new Set(arrived);
    const grant = event.signalExternalWorkflowExecutionInitiatedEventAttributes;
    if (grant?.signalName === 'slotGrant') {
      const runId = grant.workflowExecution?.workflowId ?? '';
      if (!rank.has(runId)) continue;
      const waiting = [...seenByTask].filter((id) => !granted.includes(id));
      const first = waiting.sort((a, b) => rank.get(a)! - rank.get(b)!)[0];
      if (first !== runId) throw new Error(`the semaphore granted ${runId} (started #${rank.get(runId)! + 1}) while ${first} (started #${first === undefined ? '?' : rank.get(first)! + 1}) waited`);
      granted.push(runId);
    }
  }
  return granted;
}

/**
 * When each run held its slot of limit `key`, by Temporal's record: from the `slotGrant` signal
 * naming `key` in its history to its `slotRelease` signal to that limit's semaphore (ms). A run
 * with several limits holds each from its own grant (slotIntervals has the last grant only).
 */
export async function slotHolds(fg: { client: Client; codec: PayloadCodec }, runIds: string[], key: string): Promise<{ granted: number; released: number }[]> {
  return Promise.all(runIds.map(async (runId) => {
    const events = (await clearHistory(fg, runId)).events ?? [];
    const grant = events.find((e) => receivedSignal<{ key?: string }>(e, 'slotGrant')?.key === key);
    const release = events.find((e) => {
      const sent = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
      return sent?.signalName === 'slotRelease' && sent.workflowExecution?.workflowId === `slots:${key}`;
    });
    return { granted: eventMs(grant), released: eventMs(release) };
  }));
}

/**
 * When the semaphore `workflowId` had taken in the requests of all of `runIds`: the end of its
 * first workflow task after the last of them arrived (ms). From then on a waiting run's place can
 * only move forward; before, a run started earlier whose request came late may still go ahead.
 */
export async function allRequestsTakenIn(fg: { client: Client; codec: PayloadCodec }, workflowId: string, runIds: string[]): Promise<number> {
  const wanted = new Set(runIds);
  const events = (await clearHistory(fg, workflowId)).events ?? [];
  let lastRequest = -1;
  events.forEach((event, i) => {
    const request = receivedSignal<{ runId: string }>(event, 'slotAcquire');
    if (request && wanted.delete(request.runId)) lastRequest = i;
  });
  if (wanted.size > 0) throw new Error(`the semaphore ${workflowId} never heard from ${[...wanted].join(', ')}`);
  const takenIn = events.slice(lastRequest + 1).find((e) => e.workflowTaskCompletedEventAttributes);
  if (!takenIn) throw new Error(`the semaphore ${workflowId} has not taken in its last request yet`);
  return eventMs(takenIn);
}
