/**
 * A run's status stream as the CLI reads it: Server-Sent Events split into events, `follow` (one line
 * per step transition until the run ends, reconnecting with Last-Event-ID), and `readHistory` (the
 * transitions so far, for `runs history`).
 */
import { z } from 'zod';
import { fieldOf } from '../common/narrow';
import { StatusBodySchema } from '../contracts/http-bodies';
import { SseParser } from '../net/sse';
import type { CliContext } from './context';
import { CliError, EXIT } from './errors';
import { note, Progress } from './output';

const enc = encodeURIComponent;

export interface StatusBody {
  runId: string; automationId: string; status: string; error?: string; stepInfo?: Record<string, { status: string; name: string }>;
  /** a PENDING run over a concurrency limit: `{kind: 'slot', scope, limit, position?}` */
  waitingOn?: { kind: string; [field: string]: unknown };
}

export function exitCodeFor(status: string): number {
  if (status === 'COMPLETE') return EXIT.OK;
  if (status === 'TIMEOUT') return EXIT.TIMEOUT;
  return EXIT.FAILURE;
}

/**
 * One line for a run PAUSED at an approval, as `call --wait` prints it: `run ID PAUSED at step 2 (Sign-off):
 * approval by ann@example.com (0 of 1) until 2026-12-02T10:00:00.000Z`.
 */
export function describeApprovalWait(status: StatusBody): string {
  const wait: Record<string, unknown> = status.waitingOn ?? {};
  const step = typeof wait.stepIndex === 'number' ? wait.stepIndex : undefined;
  const name = step === undefined ? undefined : status.stepInfo?.[String(step)]?.name;
  const approvers = Array.isArray(wait.approvers) ? wait.approvers.filter((a): a is string => typeof a === 'string') : [];
  const count = typeof wait.required === 'number' ? ` (${typeof wait.approvals === 'number' ? wait.approvals : 0} of ${wait.required})` : '';
  const until = typeof wait.deadline === 'string' ? ` until ${wait.deadline}` : '';
  const at = step === undefined ? '' : ` at step ${step}${name ? ` (${name})` : ''}`;
  return `run ${status.runId} PAUSED${at}: approval by ${approvers.join(', ') || 'its approvers'}${count}${until}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One Server-Sent Event as the status stream sends it. */
export interface StreamEvent { id?: string; event: string; data: string }

/**
 * Splits a text/event-stream body into events (src/net/sse.ts; comments and `retry:` lines are
 * dropped, `id` is the event's own). An event cut off by the stream's end is dropped: the stream
 * is reopened after the last one with an id.
 */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const decoder = new TextDecoder();
  const parser = new SseParser();
  for await (const chunk of body) {
    for (const { id, event, data } of parser.push(decoder.decode(chunk, { stream: true }))) yield { ...(id === undefined ? {} : { id }), event, data };
  }
  parser.end();
}

/** Reconnects after a stream was cut: at most this many in a row without an event in between. */
const MAX_RECONNECTS = 8;

/**
 * Follows a run through its status stream (`…/status/stream` or `/api/v1/runs/{id}/stream`),
 * printing one line per step transition, until its `end` event; answers that event's status body.
 * A cut stream is reopened with `Last-Event-ID`, so nothing is missed or repeated. Throws a
 * TIMEOUT CliError past `timeoutSeconds`. With `stopAt`, a step that turns PAUSED has the run's status
 * read, and a status `stopAt` accepts ends the follow early (it is answered, PAUSED).
 */
export async function follow(
  c: CliContext, target: { stream: string; status: string; auth: 'admin' | 'none'; runId: string }, timeoutSeconds: number, echo = true,
  stopAt?: (status: StatusBody) => boolean,
): Promise<StatusBody> {
  const deadline = AbortSignal.timeout(timeoutSeconds * 1000);
  const progress = new Progress();
  const stillGoing = () => new CliError(`run ${target.runId} has not ended after ${timeoutSeconds} s`, EXIT.TIMEOUT);
  let lastEventId: string | undefined;
  let failures = 0;
  let lastError: string | undefined;
  progress.update(`waiting for run ${target.runId}…`);
  for (;;) {
    if (deadline.aborted) {
      progress.done();
      throw stillGoing();
    }
    try {
      const response = await c.client.open(target.stream, { auth: target.auth, signal: deadline, headers: lastEventId ? { 'Last-Event-ID': lastEventId } : {} });
      // 204: the run had ended and its end event was already read on an earlier connection
      if (response.status === 204 || !response.body) {
        progress.done();
        return (await c.client.request<StatusBody>('GET', target.status, { auth: target.auth })).body;
      }
      for await (const event of readEvents(response.body)) {
        failures = 0;
        if (event.id !== undefined) lastEventId = event.id;
        progress.done();
        if (event.event === 'step') {
          const step: unknown = JSON.parse(event.data);
          if (echo) note(c.json, `step ${String(fieldOf(step, 'stepIndex'))} ${String(fieldOf(step, 'name'))}: ${String(fieldOf(step, 'status'))}`);
          // A step that pauses may be a wait the caller wants to stop at (an approval): read what the run waits on.
          if (stopAt && fieldOf(step, 'status') === 'PAUSED') {
            const status = StatusBodySchema.parse((await c.client.request<unknown>('GET', target.status, { auth: target.auth })).body);
            if (status.status === 'PAUSED' && stopAt(status)) {
              progress.done();
              return status;
            }
          }
        } else if (event.event === 'gap') {
          const gap: unknown = JSON.parse(event.data);
          if (echo) note(c.json, `(transitions ${String(fieldOf(gap, 'from'))} to ${String(fieldOf(gap, 'to'))} are no longer kept)`);
        } else if (event.event === 'end') {
          // the gateway's own status body, as the status endpoint answers it
          const body: StatusBody = StatusBodySchema.parse(JSON.parse(event.data));
          if (echo) note(c.json, `run ${body.runId}: ${body.status}${body.error ? ` (${body.error})` : ''}`);
          return body;
        }
        progress.update(`waiting for run ${target.runId}…`);
      }
    } catch (err) {
      if (deadline.aborted) {
        progress.done();
        throw stillGoing();
      }
      if (err instanceof CliError) throw err;
      lastError = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    }
    // The stream ended without an `end` event (a proxy or the gateway cut it): reopen it after the last event.
    if (++failures > MAX_RECONNECTS) {
      progress.done();
      throw new CliError(`the status stream of run ${target.runId} keeps failing${lastError ? `: ${lastError}` : ' (closed before the run ended)'}`);
    }
    await sleep(Math.min(5000, 250 * 2 ** failures));
  }
}

const TransitionSchema = z.looseObject({
  seq: z.number(), stepIndex: z.number(), stepPath: z.string().optional(), name: z.string(), status: z.string(), at: z.string().nullable(),
});
export type Transition = z.infer<typeof TransitionSchema>;
const GapSchema = z.looseObject({ from: z.number(), to: z.number() });

/** The run's step transitions so far (`…/stream?follow=false`), and the gaps the workflow no longer keeps. */
export async function readHistory(c: CliContext, runId: string): Promise<{ transitions: Transition[]; gaps: { from: number; to: number }[]; end?: StatusBody }> {
  const response = await c.client.open(`/api/v1/runs/${enc(runId)}/stream?follow=false`, { auth: 'admin', signal: AbortSignal.timeout(60_000) });
  const transitions: Transition[] = [];
  const gaps: { from: number; to: number }[] = [];
  let end: StatusBody | undefined;
  if (response.status === 204 || !response.body) return { transitions, gaps };
  for await (const event of readEvents(response.body)) {
    if (event.event === 'step') transitions.push(TransitionSchema.parse(JSON.parse(event.data)));
    else if (event.event === 'gap') gaps.push(GapSchema.parse(JSON.parse(event.data)));
    else if (event.event === 'end') end = StatusBodySchema.parse(JSON.parse(event.data));
  }
  return { transitions, gaps, ...(end ? { end } : {}) };
}

/** How long after `from` `to` was, as `20 ms`, `1.2 s`, `3 min 4 s`; '' without both times. */
export function elapsed(from: string | null | undefined, to: string | null | undefined): string {
  if (!from || !to) return '';
  const ms = Date.parse(to) - Date.parse(from);
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  return minutes < 60 ? `${minutes} min ${Math.round((ms % 60_000) / 1000)} s` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
