/**
 * Live run status (docs/http-api.md "Live run status"): the status endpoints honour `Prefer: wait=N` as a
 * long poll with an `ETag` and `If-None-Match`, and a Server-Sent Events stream beside them sends
 * the run's step transitions until it ends, resumable with `Last-Event-ID`. Both read the run
 * through the process's RunWatcher: one reader per run, however many callers wait.
 */
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { StepTransition } from '../common/run-types';
import { ended, type RunWatcher } from '../runs/run-watcher';
import type { RunView } from '../runs/run-service';
import { badRequest } from './http-error';
import { preferredWaitSeconds } from './prefer';
import { statusBody } from '../contracts/run-bodies';

/** The longest long poll, in seconds (a larger `wait` is cut to this). */
export const MAX_LONG_POLL_SECONDS = 60;
/** A comment line this often keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;

export function etagOf(body: unknown): string {
  return etagOfJson(JSON.stringify(body));
}

function etagOfJson(json: string): string {
  return `"${createHash('sha256').update(json).digest('base64url').slice(0, 32)}"`;
}

/** A status body as sent: its JSON (UTF-8) and ETag. */
interface SerializedStatus {
  json: Buffer;
  etag: string;
}

/**
 * Serialized bodies of final views (closed runs, kept by the finished-run cache and shared by every
 * poll of the run): built once, so polling a finished run serializes and hashes nothing. Keyed by
 * the view object, so an entry goes when its view leaves the cache.
 */
const finalStatuses = new WeakMap<RunView, SerializedStatus>();

function serializedStatus(view: RunView): SerializedStatus {
  const known = view.final ? finalStatuses.get(view) : undefined;
  if (known) return known;
  const json = JSON.stringify(statusBody(view));
  const serialized = { json: Buffer.from(json), etag: etagOfJson(json) };
  // A view with its callback's state is a fresh copy per read (run-service withCallback): nothing to share.
  if (view.final && !view.callback) finalStatuses.set(view, serialized);
  return serialized;
}

/** Whether `If-None-Match` names `etag` (weak comparison, as RFC 9110 asks for GET). */
export function noneMatch(header: string, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === bare);
}

/**
 * Answers a status request: 200 with the body and its ETag, 304 when `If-None-Match` names the
 * current ETag. With `Prefer: wait=N` (N at most 60) and a run that has not ended, it first waits
 * up to N seconds for the body to differ from the one the caller has (the `If-None-Match` one, or
 * else the one current when the request came).
 */
export async function answerStatus(ctx: Context, watcher: RunWatcher, first: RunView): Promise<void> {
  let view = first;
  let { json, etag } = serializedStatus(view);
  const ifNoneMatch = ctx.get('If-None-Match');
  const prefer = ctx.get('Prefer');
  const preferred = prefer ? preferredWaitSeconds(prefer) : undefined;
  if (preferred !== undefined) {
    const waitSeconds = Math.min(preferred, MAX_LONG_POLL_SECONDS);
    ctx.set('Preference-Applied', `wait=${waitSeconds}`);
    ctx.vary('Prefer');
    const baseline = ifNoneMatch ? (noneMatch(ifNoneMatch, etag) ? etag : undefined) : etag;
    if (baseline && waitSeconds > 0 && !ended(view)) {
      const abort = new AbortController();
      ctx.req.once('close', () => abort.abort());
      const changed = await watcher.waitFor(view.runId, (next) => etagOf(statusBody(next)) !== baseline, waitSeconds * 1000, abort.signal);
      if (changed) {
        view = changed;
        ({ json, etag } = serializedStatus(view));
      }
    }
  }
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('ETag', etag);
  if (noneMatch(ifNoneMatch, etag)) {
    ctx.status = 304;
    return;
  }
  // What Koa would send for the body as an object, serialized once.
  ctx.set('Content-Type', 'application/json; charset=utf-8');
  ctx.body = json;
}

export interface StreamEvent {
  id?: number;
  event: 'step' | 'end' | 'gap';
  data: unknown;
}

/** The run's transitions; for runs that closed before flowgate logged them, rebuilt from the steps. */
function transitionsOf(view: RunView): StepTransition[] {
  if (view.transitions) return view.transitions;
  const started = Object.entries(view.steps).filter(([, s]) => s.executionOrder !== undefined)
    .sort(([, a], [, b]) => (a.executionOrder ?? 0) - (b.executionOrder ?? 0));
  const rebuilt: StepTransition[] = [];
  for (const [index, step] of started) {
    rebuilt.push({ seq: rebuilt.length + 1, stepIndex: Number(index), status: 'RUNNING', at: '' });
    if (step.status !== 'RUNNING') rebuilt.push({ seq: rebuilt.length + 1, stepIndex: Number(index), status: step.status, at: '' });
  }
  return rebuilt;
}

/**
 * The stream's events after event id `after`: one `step` event per transition (id = its sequence
 * number in the run), then once the run ended an `end` event (id = the last sequence number + 1)
 * carrying the status body. A `gap` event (no id) says transitions were dropped from the run's log
 * before this caller saw them (more than the 1,000 the workflow keeps).
 */
export function eventsAfter(view: RunView, after: number): StreamEvent[] {
  const transitions = transitionsOf(view);
  const events: StreamEvent[] = [];
  const firstKept = transitions[0]?.seq;
  if (firstKept !== undefined && firstKept > after + 1) events.push({ event: 'gap', data: { from: after + 1, to: firstKept - 1 } });
  for (const t of transitions) {
    if (t.seq <= after) continue;
    events.push({ id: t.seq, event: 'step', data: { seq: t.seq, stepIndex: t.stepIndex, name: view.steps[String(t.stepIndex)]?.name ?? '', status: t.status, at: t.at || null } });
  }
  const endId = (transitions[transitions.length - 1]?.seq ?? 0) + 1;
  if (ended(view) && endId > after) events.push({ id: endId, event: 'end', data: statusBody(view) });
  return events;
}

function formatEvent(e: StreamEvent): string {
  return `${e.id === undefined ? '' : `id: ${e.id}\n`}event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/** `Last-Event-ID` (header, or `lastEventId` in the query for clients that cannot set headers). */
function lastEventId(ctx: Context): number {
  const raw = ctx.get('Last-Event-ID') || (typeof ctx.query.lastEventId === 'string' ? ctx.query.lastEventId : '');
  if (!raw) return 0;
  if (!/^\d{1,9}$/.test(raw.trim())) throw badRequest('invalid_last_event_id', 'Last-Event-ID must be an event id this stream sent (a whole number)');
  return Number(raw.trim());
}

/**
 * `text/event-stream` of the run's step transitions until it ends (then the stream closes). A run
 * that had already ended when the caller last heard its `end` event answers 204, which tells an
 * EventSource to stop reconnecting.
 */
export function streamStatus(ctx: Context, watcher: RunWatcher, first: RunView): void {
  let last = lastEventId(ctx);
  const initial = eventsAfter(first, last);
  if (ended(first) && initial.length === 0) {
    ctx.status = 204;
    return;
  }
  // Written straight to the socket (Koa would report a client that goes away as an error).
  const stream = ctx.res;
  ctx.status = 200;
  ctx.respond = false;
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  stream.writeHead(200, {
    ...ctx.response.headers,
    'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no',
  });

  let unsubscribe = (): void => undefined;
  const heartbeat = setInterval(() => stream.write(': keep-alive\n\n'), HEARTBEAT_MS);
  const close = (): void => {
    clearInterval(heartbeat);
    unsubscribe();
    if (!stream.writableEnded) stream.end();
  };
  const send = (view: RunView): void => {
    if (stream.writableEnded) return;
    for (const event of eventsAfter(view, last)) {
      stream.write(formatEvent(event));
      if (event.id !== undefined) last = event.id;
    }
    if (ended(view)) close();
  };
  stream.write('retry: 2000\n\n');
  send(first);
  if (stream.writableEnded) return;
  // `?follow=false`: the transitions so far, then the stream closes (`flowgate runs history`).
  if (ctx.query.follow === 'false') {
    close();
    return;
  }
  unsubscribe = watcher.subscribe(first.runId, send);
  ctx.req.once('close', close);
}
