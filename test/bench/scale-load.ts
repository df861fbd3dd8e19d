/**
 * The open loop of `npm run bench:scale`: at an offered rate, calls go out on a fixed schedule
 * (call i at i/rate seconds), whatever the answers do, so a slow system is measured as queueing,
 * not hidden by callers that wait (coordinated omission). Times count from the scheduled moment.
 * Each step is bounded: at most `seconds` of offering, at most `maxCount` calls, then at most
 * `drainSeconds` for the runs to close; a run not closed by then counts as not completed.
 */
import type { Client } from '@temporalio/client';
import { percentile } from './scale-meters';

export const KINDS = ['one-step', 'five-step', 'forEach-10'] as const;
export type Kind = (typeof KINDS)[number];

/** One side under load: starts a run of `kind` (resolves at the answer, with its workflow ID). */
export type Starter = (kind: Kind) => Promise<string>;

export interface KindFigures {
  answerMs: number[];
  completeMs: number[];
}

export interface StepFigures {
  rate: number;
  offered: number;
  answered: number;
  completed: number;
  /** calls refused or failed, by status or error */
  errors: Map<string, number>;
  /** completed runs per second, from the first call until the last run closed (or the drain ended) */
  completedPerSecond: number;
  byKind: Record<Kind, KindFigures>;
  /** every run's trigger-to-COMPLETE, all kinds; a run not completed counts as Infinity */
  allCompleteMs: number[];
}

/** HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT: only the close event, once there is one. */
const CLOSED = 2;

/**
 * Resolves once workflow `workflowId` has closed, or at `deadline` (epoch ms) with false. Reads the
 * close event itself (a long poll), without decoding its payloads, as the SDK's result() does.
 */
export async function closedBy(client: Client, workflowId: string, deadline: number): Promise<boolean> {
  while (Date.now() < deadline) {
    const reply = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace, execution: { workflowId }, waitNewEvent: true, historyEventFilterType: CLOSED,
      skipArchival: true,
    });
    if ((reply.history?.events?.length ?? 0) > 0) return true;
  }
  return false;
}

function noteError(errors: Map<string, number>, err: unknown): void {
  const what = err instanceof Error ? err.message.slice(0, 80) : String(err);
  errors.set(what, (errors.get(what) ?? 0) + 1);
}

export async function runStep(options: {
  rate: number; seconds: number; maxCount: number; drainSeconds: number;
  start: Starter; client: Client;
}): Promise<StepFigures> {
  const { rate, start, client } = options;
  const count = Math.max(1, Math.min(options.maxCount, Math.round(rate * options.seconds)));
  const byKind: Record<Kind, KindFigures> = { 'one-step': { answerMs: [], completeMs: [] }, 'five-step': { answerMs: [], completeMs: [] }, 'forEach-10': { answerMs: [], completeMs: [] } };
  const errors = new Map<string, number>();
  const began = performance.now();
  const beganAt = Date.now();
  const offerEnds = beganAt + (count / rate) * 1000;
  const deadline = offerEnds + options.drainSeconds * 1000;
  let answered = 0;
  let completed = 0;
  let lastClose = began;
  const all: number[] = [];
  const calls: Promise<void>[] = [];
  const one = async (i: number): Promise<void> => {
    const kind = KINDS[i % KINDS.length]!;
    const scheduled = began + (i / rate) * 1000;
    let workflowId: string;
    try {
      workflowId = await start(kind);
    } catch (err) {
      noteError(errors, err);
      all.push(Infinity);
      return;
    }
    answered++;
    byKind[kind].answerMs.push(performance.now() - scheduled);
    let closed = false;
    try {
      closed = await closedBy(client, workflowId, deadline);
    } catch (err) {
      noteError(errors, err);
    }
    if (!closed) {
      byKind[kind].completeMs.push(Infinity);
      all.push(Infinity);
      return;
    }
    completed++;
    lastClose = performance.now();
    const ms = lastClose - scheduled;
    byKind[kind].completeMs.push(ms);
    all.push(ms);
  };
  for (let i = 0; i < count; i++) {
    const due = began + (i / rate) * 1000;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    calls.push(one(i));
  }
  await Promise.all(calls);
  return {
    rate, offered: count, answered, completed, errors,
    completedPerSecond: completed / Math.max(0.001, (lastClose - began) / 1000),
    byKind, allCompleteMs: all,
  };
}

/** `p50/p95/p99` of `values` in ms, "-" for none, "∞" past the drain. */
export function spread(values: number[]): string {
  if (values.length === 0) return '-';
  const show = (v: number): string => (Number.isFinite(v) ? String(Math.round(v)) : '∞');
  return `${show(percentile(values, 50))}/${show(percentile(values, 95))}/${show(percentile(values, 99))}`;
}
