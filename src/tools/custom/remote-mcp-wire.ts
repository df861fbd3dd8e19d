/**
 * One JSON-RPC exchange with a remote MCP server over Streamable HTTP: a POST through flowgate's
 * guarded HTTP client (private-network guard, keep-alive pool, time and size limits), and its
 * answer read as plain JSON or as an SSE stream. An SSE stream is read as it arrives: every
 * message before the response (progress and other notifications) goes to `onMessage` at once,
 * and the exchange ends with the response to the request's id.
 */
import type { Readable } from 'node:stream';
import { httpAnswer, ResponseTooLargeError, type ResponseHeaders } from '../../net/http-client';
import { SseParser, type SseEvent } from '../../net/sse';

/** The largest answer a remote may give to one request, SSE events included. */
export const MAX_REMOTE_RESPONSE_BYTES = 10 * 1024 * 1024;
/** How long a stream may go on after its answer before it is closed (servers end it at once). */
const STREAM_END_GRACE_MS = 1000;

export interface JsonRpcAnswer {
  id?: string | number | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

export interface Exchange {
  url: string;
  /** every header of the request, names lowercased */
  headers: Record<string, string>;
  body: unknown;
  /** the request's JSON-RPC id; undefined for a notification */
  id?: string | number;
  signal?: AbortSignal;
  /** epoch ms; a plain answer must be whole by then, a streamed one must have begun, and no gap in it may last past it */
  deadline: number;
  allowPrivateNetwork: boolean;
  /** messages of an SSE stream other than the response, as they arrive */
  onMessage?(message: Record<string, unknown>): void;
}

export interface ExchangeResult {
  status: number;
  headers: ResponseHeaders;
  /** the response to the request's id (or a JSON-RPC error body of an HTTP error), when there is one */
  answer?: JsonRpcAnswer;
  /** the body's first bytes when it held no JSON-RPC answer (for error messages) */
  text?: string;
}

function header(headers: ResponseHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A response's id as JSON-RPC allows it (a string, a number or null); anything else is no id of ours. */
function idOf(id: unknown): JsonRpcAnswer['id'] {
  return typeof id === 'string' || typeof id === 'number' || id === null ? id : undefined;
}

/** A JSON-RPC response object (result or error), or undefined. */
function asAnswer(value: unknown): JsonRpcAnswer | undefined {
  if (!isRecord(value) || 'method' in value) return undefined;
  const error = value.error;
  if (isRecord(error) && typeof error.code === 'number') {
    return { id: idOf(value.id), error: { code: error.code, message: typeof error.message === 'string' ? error.message : '', data: error.data } };
  }
  if (isRecord(value.result)) return { id: idOf(value.id), result: value.result };
  return undefined;
}

/** The response to `id` among a JSON body's messages (one, or a batch). */
function answerIn(parsed: unknown, id: string | number | undefined): JsonRpcAnswer | undefined {
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  for (const message of messages) {
    const answer = asAnswer(message);
    if (answer && (id === undefined || answer.id === id || answer.id === null)) return answer;
  }
  return undefined;
}

/** Whether an answer is an SSE stream to read as it arrives (an error status's body is read whole, whatever its type). */
function isEventStream(status: number, headers: ResponseHeaders): boolean {
  return status < 300 && (header(headers, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase() === 'text/event-stream';
}

/** Sends one message and reads its answer. Throws what the HTTP client throws (refused, timeout, too large, unreachable). */
export async function exchange(request: Exchange): Promise<ExchangeResult> {
  const response = await httpAnswer({
    method: 'POST', url: request.url, headers: request.headers, body: JSON.stringify(request.body),
    timeoutMs: Math.max(1, request.deadline - Date.now()), signal: request.signal, allowPrivateNetwork: request.allowPrivateNetwork,
    maxResponseBytes: MAX_REMOTE_RESPONSE_BYTES, streamIf: isEventStream,
  });
  const { status, headers } = response;
  if (response.streamed) {
    const answer = await readEvents(response.body, request);
    return { status, headers, answer };
  }
  const text = response.body.toString('utf8');
  if (text === '') return { status, headers };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { status, headers, text: text.slice(0, 300) };
  }
  const answer = answerIn(parsed, request.id);
  return answer ? { status, headers, answer } : { status, headers, text: text.slice(0, 300) };
}

/**
 * Reads an SSE stream (src/net/sse.ts) until the response to the request arrives, handing every
 * other message to `onMessage` as its event completes. Event names, ids, `retry:` and events
 * without JSON data are passed over; an event the stream ends without its blank line still counts.
 * After the response the stream is let end (its connection then goes back to the pool) or, if it
 * goes on, closed.
 */
async function readEvents(body: Readable, request: Exchange): Promise<JsonRpcAnswer | undefined> {
  const parser = new SseParser();
  let size = 0;
  let answer: JsonRpcAnswer | undefined;
  const dispatch = (events: readonly SseEvent[]): void => {
    for (const { data } of events) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch {
        continue;
      }
      answer = answerIn(parsed, request.id);
      if (answer) return;
      for (const message of Array.isArray(parsed) ? parsed : [parsed]) if (isRecord(message)) request.onMessage?.(message);
    }
  };
  body.setEncoding('utf8');
  try {
    for await (const chunk of body.iterator({ destroyOnReturn: false })) {
      const text = String(chunk);
      size += text.length;
      if (size > MAX_REMOTE_RESPONSE_BYTES) throw new ResponseTooLargeError(MAX_REMOTE_RESPONSE_BYTES);
      dispatch(parser.push(text));
      if (answer) break;
    }
    if (!answer) dispatch(parser.finish());
    if (answer && !body.readableEnded) await endOrClose(body);
    return answer;
  } finally {
    if (!body.readableEnded) body.destroy();
  }
}

/** Reads what is left of a stream (little, if anything) until it ends, for at most STREAM_END_GRACE_MS. */
function endOrClose(body: Readable): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, STREAM_END_GRACE_MS);
    function done(): void {
      clearTimeout(timer);
      body.off('end', done).off('close', done).off('error', done);
      resolve();
    }
    body.on('end', done).on('close', done).on('error', done);
    body.resume();
  });
}
