/**
 * Reading a run's event stream (`GET /v1/agents/{id}/runs/{runId}/stream`, SSE) for a bounded
 * window, so that a series of calls, each resuming with the previous call's `lastEventId`, sees
 * every event exactly once:
 * - only events up to the last complete event that carried an `id` are answered (events without an
 *   id before it come along; those after it are left for the next call, which the server replays
 *   after that id);
 * - the leading `status` event has no id and is re-sent on every connection: it updates `status`
 *   and is never answered as an event;
 * - a connection cut inside the window is reopened with the last id (a few times at most);
 * - 410 `stream_expired` falls back to the run's final state from Get Run.
 *
 * The HTTP side is net/http-client.ts's httpStream (the private-network guard, aborts that close
 * the connection); its timeout bounds the wait for headers and any silent gap in the stream, and
 * a gap that long counts as a cut connection.
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { z } from 'zod';
import { httpStream, OutboundTimeoutError, type StreamedResponse } from '../../../net/http-client';
import { isOneOf } from '../../../common/narrow';
import { ToolCallError, type ToolProgress } from '../../server';
import type { CodeAgentClient } from './client';
import { SseParser, type SseEvent } from '../../../net/sse';

const CONNECT_TIMEOUT_MS = 15_000;
const MAX_RECONNECTS = 3;
/** Past this much event text the call answers early; the caller resumes from lastEventId. */
const MAX_ANSWER_CHARS = 2 * 1024 * 1024;
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export const TERMINAL_RUN_STATUSES = ['FINISHED', 'ERROR', 'CANCELLED', 'EXPIRED'] as const;

export interface StreamedEvent {
  id?: string;
  event: string;
  data: unknown;
}

export interface StreamAnswer {
  runId: string;
  /** the run's latest status seen (leading status event, status or result events) */
  status?: string;
  events: StreamedEvent[];
  /** resume with this as Last-Event-ID; the argument given when no event with an id arrived */
  lastEventId?: string;
  /** the stream said `done` (or the run was already over when the stream had expired) */
  ended: boolean;
  /** 410 stream_expired: `run` holds the final state instead */
  expired?: boolean;
  run?: Record<string, unknown>;
}

async function readSmall(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_ERROR_BODY_BYTES) break;
    chunks.push(buffer);
  }
  body.destroy();
  return Buffer.concat(chunks).toString('utf8');
}

function parseData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

const StatusDataSchema = z.object({ status: z.string().max(100) }).loose();

function statusOf(event: SseEvent): string | undefined {
  if (event.event !== 'status' && event.event !== 'result') return undefined;
  const parsed = StatusDataSchema.safeParse(parseData(event.data));
  return parsed.success ? parsed.data.status : undefined;
}

export interface ReadRunOptions {
  agentId: string;
  runId: string;
  lastEventId?: string;
  waitMs: number;
  signal: AbortSignal;
  progress(report: ToolProgress): void;
  /** Get Run, for the fallback on 410 */
  getRun(): Promise<Record<string, unknown>>;
}

export async function readRunStream(client: CodeAgentClient, options: ReadRunOptions): Promise<StreamAnswer> {
  const answer: StreamAnswer = { runId: options.runId, events: [], ended: false, ...(options.lastEventId === undefined ? {} : { lastEventId: options.lastEventId }) };
  const deadline = Date.now() + options.waitMs;
  let answeredChars = 0;
  const path = `/v1/agents/${encodeURIComponent(options.agentId)}/runs/${encodeURIComponent(options.runId)}/stream`;

  for (let attempt = 0; attempt <= MAX_RECONNECTS && !answer.ended && Date.now() < deadline; attempt++) {
    const window = new AbortController();
    const onOuterAbort = (): void => window.abort(options.signal.reason);
    options.signal.addEventListener('abort', onOuterAbort, { once: true });
    const timer = setTimeout(() => window.abort(new Error('window over')), Math.max(0, deadline - Date.now()));
    try {
      let opened: StreamedResponse;
      const connectTimeoutMs = Math.min(CONNECT_TIMEOUT_MS, Math.max(1, deadline - Date.now()));
      try {
        opened = await httpStream({
          method: 'GET', url: client.url(path), signal: window.signal, allowPrivateNetwork: client.privateNetworkAllowed, maxRedirects: 0,
          timeoutMs: connectTimeoutMs,
          headers: {
            authorization: client.authorization(), accept: 'text/event-stream', 'cache-control': 'no-cache',
            ...(answer.lastEventId === undefined ? {} : { 'last-event-id': answer.lastEventId }),
          },
        });
      } catch (error) {
        // the window ran out: its timer fired, or the connect timeout it bounded did first (by a millisecond, say)
        const windowOver = window.signal.aborted || (error instanceof OutboundTimeoutError && connectTimeoutMs < CONNECT_TIMEOUT_MS);
        if (windowOver && !options.signal.aborted) {
          // a backend that never answered is a timeout; a reconnect that did not make it in time is just the window's end
          if (attempt === 0) throw new ToolCallError('TIMEOUT', `the codeagent backend did not open the stream within ${options.waitMs} ms`);
          break;
        }
        if (attempt > 0 && !(error instanceof OutboundTimeoutError)) continue; // a reconnect that failed: try again while the window lasts
        throw client.transportError(error, connectTimeoutMs);
      }
      if (opened.status === 410) {
        await readSmall(opened.body).catch(() => '');
        const run = await options.getRun();
        const status = typeof run.status === 'string' ? run.status : undefined;
        return { ...answer, expired: true, run, ...(status === undefined ? {} : { status }), ended: status !== undefined && isOneOf(TERMINAL_RUN_STATUSES, status) };
      }
      if (opened.status !== 200) {
        const text = await readSmall(opened.body).catch(() => '');
        const retryAfter = opened.headers['retry-after'];
        throw client.backendError(opened.status, text, Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
      }

      const parser = new SseParser();
      const decoder = new StringDecoder('utf8');
      // events since the last one with an id: answered only once an event with an id follows
      let pending: StreamedEvent[] = [];
      let sawIdThisConnection = false;
      const commit = (): void => {
        for (const e of pending) {
          answer.events.push(e);
          options.progress({ progress: answer.events.length, message: JSON.stringify(e) });
        }
        pending = [];
      };
      try {
        for await (const chunk of opened.body) {
          const text = decoder.write(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
          for (const event of parser.push(text)) {
            const status = statusOf(event);
            if (status !== undefined) answer.status = status;
            // the leading status event: no id, re-sent on every connection
            if (!sawIdThisConnection && event.id === undefined && event.event === 'status') continue;
            pending.push({ ...(event.id === undefined ? {} : { id: event.id }), event: event.event, data: parseData(event.data) });
            answeredChars += event.data.length;
            if (event.id !== undefined) {
              sawIdThisConnection = true;
              answer.lastEventId = event.id;
              commit();
            }
            if (event.event === 'done') {
              commit();
              answer.ended = true;
              break;
            }
          }
          if (answer.ended || answeredChars > MAX_ANSWER_CHARS) break;
        }
      } catch (error) {
        // a cut connection or the window closing: what is committed stands, the rest is re-read after lastEventId
        if (options.signal.aborted) throw error;
      } finally {
        parser.end();
        opened.body.destroy();
      }
      if (answeredChars > MAX_ANSWER_CHARS) break;
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onOuterAbort);
    }
  }
  return answer;
}
