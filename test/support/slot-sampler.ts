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
  /** every answer: when it arrived, the status, what it waited on */
  observations?: { at: number; status: string; waitingOn?: Record<string, unknown> }[];
}

export interface Sample {
  /** most runs in progress in one sample */
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
        (run.observations ??= []).push({ at: now, status: body.status, ...(body.waitingOn ? { waitingOn: body.waitingOn } : {}) });
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

type HistoryEvent = NonNullable<Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>['events']>[number];

function eventMs(event: HistoryEvent | undefined): number {
  return event?.eventTime ? Number(event.eventTime.seconds) * 1000 + Math.floor((event.eventTime.nanos ?? 0) / 1e6) : Number.NaN;
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
    const signaled = event.workflowExecutionSignaledEventAttributes;
    if (signaled?.signalName === 'slotAcquire') {
      const request = defaultPayloadConverter.fromPayload<{ runId: string }>(signaled.input?.payloads?.[0] ?? {});
      if (rank.has(request.runId)) arrived.add(request.runId);
    }
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
