/**
 * The one outbound HTTP client: steps, tool servers and anything else that calls out over HTTP go
 * through here. It runs on undici with one pooled keep-alive Agent per address policy, and the
 * policy sits in the Agent's connector: names are resolved by a lookup that refuses private
 * answers, and each new socket's connected address is judged again, so neither DNS rebinding nor
 * a redirect can reach a private address. Redirects are followed by hand so each hop is checked.
 *
 * An abort signal reaches the socket: aborting a request in flight destroys its connection at
 * once (HTTP/1.1 has no other way to cancel), so a cancelled step does not leave a request
 * running behind it.
 *
 * One piece (over 300 lines): the address policy, the connector, redirects and abort handling guard
 * the same sockets; split, a path around the policy would be easy to add by mistake.
 */
import { context, propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { tracer, tracingOn } from '../observability/tracing';
import { PassThrough, Readable } from 'node:stream';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { assertAddressAllowed, assertUrlAllowed, guardedLookup, OutboundRefusedError, type AddressPolicy } from './address-policy';

export { OutboundRefusedError } from './address-policy';

export class OutboundTimeoutError extends Error {
  override readonly name = 'OutboundTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`no complete answer within ${timeoutMs} ms`);
  }
}

export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
  constructor(readonly maxResponseBytes: number) {
    super(`the response body is larger than ${maxResponseBytes} bytes`);
  }
}

export class TooManyRedirectsError extends Error {
  override readonly name = 'TooManyRedirectsError';
  constructor(readonly maxRedirects: number) {
    super(`more than ${maxRedirects} redirects`);
  }
}

export type ResponseHeaders = Record<string, string | string[] | undefined>;

export interface HttpRequestOptions {
  method: string;
  url: string | URL;
  headers?: Record<string, string>;
  /** a Readable is sent as it is read; it cannot be replayed, so a redirect that needs the body again fails */
  body?: string | Buffer | Uint8Array | Readable;
  /** buffered: the whole exchange, redirects included; streamed: until the headers, and the longest idle gap between body chunks */
  timeoutMs: number;
  /** aborting closes the connection at once */
  signal?: AbortSignal;
  allowPrivateNetwork: boolean;
  /** default 5; 0 returns a 3xx as it is */
  maxRedirects?: number;
  /**
   * Which addresses to refuse when private networks are not allowed; default isPrivateAddress.
   * Lets a caller be stricter, and lets tests exercise the guard against servers on loopback.
   */
  isBlockedAddress?: (ip: string) => boolean;
}

export interface StreamedResponse {
  status: number;
  headers: ResponseHeaders;
  /** the URL that answered, after redirects */
  url: string;
  /** the caller reads it to the end or destroys it; either releases the connection */
  body: Readable;
}

export interface BufferedResponse {
  status: number;
  headers: ResponseHeaders;
  /** the URL that answered, after redirects */
  url: string;
  body: Buffer;
}

const DEFAULT_MAX_REDIRECTS = 5;
const CONNECT_TIMEOUT_MS = 10_000;
/** What is read of a redirect's body so its connection can go back to the pool. */
const REDIRECT_BODY_DUMP_BYTES = 64 * 1024;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers that carry credentials for one origin and must not follow a redirect to another. */
const ORIGIN_BOUND_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);
const BODY_HEADERS = new Set(['content-type', 'content-length', 'content-encoding', 'transfer-encoding']);
/** Connection management belongs to the client; undici refuses most of these outright. */
const HOP_BY_HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'expect', 'te']);

// ---------------------------------------------------------------------------------------------
// Agents: one pool per policy

/**
 * A connector that applies the policy: the lookup refuses names with private answers before any
 * connection, and the connected peer is judged before the socket is handed to undici. The second
 * check covers IP literals (no lookup) and whatever else led to a connection.
 */
function guardedConnector(policy: AddressPolicy): buildConnector.connector {
  const connect = buildConnector({ lookup: guardedLookup(policy), timeout: CONNECT_TIMEOUT_MS });
  return (options, callback) => {
    connect(options, (...args) => {
      const [error, socket] = args;
      if (error !== null) {
        callback(error, null);
        return;
      }
      try {
        const peer = socket.remoteAddress;
        if (peer === undefined) throw new OutboundRefusedError('could not determine the connected address');
        assertAddressAllowed(peer, policy, options.hostname);
      } catch (refusal) {
        socket.destroy();
        callback(refusal instanceof Error ? refusal : new Error(String(refusal)), null);
        return;
      }
      callback(null, socket);
    });
  };
}

let openAgent: Agent | undefined;
let guardedAgent: Agent | undefined;
/** Agents for callers' own isBlockedAddress functions (tests, stricter callers), keyed by the function. */
const customAgents = new WeakMap<(ip: string) => boolean, Agent>();

function agentFor(policy: AddressPolicy): Agent {
  if (policy.allowPrivateNetwork) {
    openAgent ??= new Agent({ connect: { timeout: CONNECT_TIMEOUT_MS } });
    return openAgent;
  }
  const custom = policy.isBlockedAddress;
  if (custom === undefined) {
    guardedAgent ??= new Agent({ connect: guardedConnector({ allowPrivateNetwork: false }) });
    return guardedAgent;
  }
  let agent = customAgents.get(custom);
  if (agent === undefined) {
    agent = new Agent({ connect: guardedConnector({ allowPrivateNetwork: false, isBlockedAddress: custom }) });
    customAgents.set(custom, agent);
  }
  return agent;
}

// ---------------------------------------------------------------------------------------------
// One exchange, redirects followed by hand

interface FinalHop {
  response: Dispatcher.ResponseData;
  url: URL;
}

/** `headers` less those named in `names` (lowercase); `headers` itself when it has none of them (every proxied call's case). */
function withoutHeaders(headers: Record<string, string>, names: ReadonlySet<string>): Record<string, string> {
  if (!Object.keys(headers).some((name) => names.has(name.toLowerCase()))) return headers;
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.has(name.toLowerCase())));
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((key) => key.toLowerCase() === name);
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Credentials in the URL become Basic authentication, as node:http does, and leave the URL. */
function moveUserInfo(url: URL, headers: Record<string, string>): Record<string, string> {
  if (url.username === '' && url.password === '') return headers;
  const userInfo = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  if (hasHeader(headers, 'authorization')) return headers;
  return { ...headers, authorization: `Basic ${Buffer.from(userInfo).toString('base64')}` };
}

function isReadable(body: HttpRequestOptions['body']): body is Readable {
  return body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array);
}

/** What traced() hands an exchange while tracing is off: no headers to add. */
const NO_TRACE_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * One exchange as a client span of the current trace, its context sent along as `traceparent`
 * (a no-op while tracing is off). The span names the host, not the path: paths and queries of
 * outbound calls can carry credentials.
 */
async function traced<T>(hop: { url: URL; method: string }, exchange: (traceHeaders: Record<string, string>) => Promise<T>, statusOf: (answer: T) => number): Promise<T> {
  // tracing off: no span, no context, nothing to inject (a proxied tool call pays this on every request)
  if (!tracingOn()) return exchange(NO_TRACE_HEADERS);
  return tracer().startActiveSpan(`HTTP ${hop.method}`, {
    kind: SpanKind.CLIENT,
    attributes: { 'http.request.method': hop.method, 'server.address': hop.url.hostname, 'server.port': Number(hop.url.port || (hop.url.protocol === 'https:' ? 443 : 80)), 'url.scheme': hop.url.protocol.replace(':', '') },
  }, async (span) => {
    const traceHeaders: Record<string, string> = {};
    propagation.inject(context.active(), traceHeaders);
    try {
      const response = await exchange(traceHeaders);
      const status = statusOf(response);
      span.setAttribute('http.response.status_code', status);
      if (status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
      return response;
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
      throw err;
    } finally {
      span.end();
    }
  });
}

async function send(req: HttpRequestOptions, signal: AbortSignal, bodyTimeoutMs: number): Promise<FinalHop> {
  const maxRedirects = req.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const policy: AddressPolicy = { allowPrivateNetwork: req.allowPrivateNetwork, isBlockedAddress: req.isBlockedAddress };
  const agent = agentFor(policy);
  let url = new URL(req.url);
  let method = req.method.toUpperCase();
  let headers = withoutHeaders(req.headers ?? {}, HOP_BY_HOP_HEADERS);
  let body = req.body;
  for (let redirects = 0; ; redirects++) {
    assertUrlAllowed(url, policy);
    headers = moveUserInfo(url, headers);
    const response = await traced({ url, method }, (traceHeaders) => agent.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method,
      headers: { ...headers, ...traceHeaders },
      body: body ?? null,
      signal,
      // our own timers govern the exchange; undici's only watches idle gaps in a streamed body
      // (it pauses while the reader applies backpressure; its clock ticks about every half second)
      headersTimeout: 0,
      bodyTimeout: bodyTimeoutMs,
    }), (answer) => answer.statusCode);
    const location = firstValue(response.headers.location);
    if (!REDIRECT_STATUSES.has(response.statusCode) || location === undefined || maxRedirects === 0) return { response, url };
    // The redirect's own body is of no interest; reading a little lets its connection be reused.
    await response.body.dump({ limit: REDIRECT_BODY_DUMP_BYTES }).catch(() => undefined);
    if (redirects >= maxRedirects) throw new TooManyRedirectsError(maxRedirects);
    const next = new URL(location, url);
    if (next.origin !== url.origin) headers = withoutHeaders(headers, ORIGIN_BOUND_HEADERS);
    // 303 always, and 301/302 after a POST by long-standing browser practice, turn into a GET
    const status = response.statusCode;
    if ((status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
      headers = withoutHeaders(headers, BODY_HEADERS);
    } else if (isReadable(body)) {
      throw new Error(`cannot follow the ${status} redirect: the streamed request body cannot be sent again`);
    }
    url = next;
  }
}

/**
 * A signal that aborts with an OutboundTimeoutError when the timer fires, or with the caller's
 * reason when the caller's signal aborts. One controller and a listener on the caller's signal, not
 * AbortSignal.any (a composite signal per request, followed until it is collected): `clear` stops
 * the timer, `untie` lets go of the caller's signal once the exchange is over.
 */
function deadline(req: HttpRequestOptions): { signal: AbortSignal; timedOut(): boolean; clear(): void; untie(): void } {
  const controller = new AbortController();
  let timedOut = false;
  const handle = setTimeout(() => {
    timedOut = true;
    controller.abort(new OutboundTimeoutError(req.timeoutMs));
  }, req.timeoutMs);
  const outer = req.signal;
  let untie = (): void => undefined;
  if (outer?.aborted) {
    controller.abort(outer.reason);
  } else if (outer) {
    const onAbort = (): void => controller.abort(outer.reason);
    outer.addEventListener('abort', onAbort, { once: true });
    untie = () => outer.removeEventListener('abort', onAbort);
  }
  return { signal: controller.signal, timedOut: () => timedOut, clear: () => clearTimeout(handle), untie };
}

function isUndiciTimeout(error: unknown): boolean {
  const code = error instanceof Error && 'code' in error ? error.code : undefined;
  return code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT';
}

/**
 * Sends a request and returns once the final response's headers arrived; the body streams. The
 * caller must read the body to the end or destroy it. Aborting `signal` later still closes the
 * connection and ends the body with an error.
 */
export async function httpStream(req: HttpRequestOptions): Promise<StreamedResponse> {
  const until = deadline(req);
  let final: FinalHop;
  try {
    final = await send(req, until.signal, req.timeoutMs);
  } catch (error) {
    until.untie();
    if (until.timedOut()) throw new OutboundTimeoutError(req.timeoutMs);
    throw error;
  } finally {
    until.clear();
  }
  const source = final.response.body;
  // A pass-through so that an idle gap surfaces as OutboundTimeoutError, like every other timeout here.
  const body = new PassThrough();
  source.on('error', (error) => body.destroy(isUndiciTimeout(error) ? new OutboundTimeoutError(req.timeoutMs) : error));
  // a caller that stops reading early releases the connection; the caller's signal matters until then
  body.on('close', () => {
    until.untie();
    if (!source.readableEnded) source.destroy();
  });
  source.pipe(body, { end: false });
  // Ending a turn later lets undici mark the connection idle first, so that a request the caller
  // sends as soon as it has read the end reuses it instead of opening another one.
  source.once('end', () => setImmediate(() => body.end()));
  return { status: final.response.statusCode, headers: final.response.headers, url: final.url.toString(), body };
}

/** What httpAnswer hands back: the whole body, or, when the headers announce a stream the caller reads as it comes, the stream. */
export type AnsweredResponse = (BufferedResponse & { streamed: false }) | (StreamedResponse & { streamed: true });

export interface AnswerRequestOptions extends Omit<HttpRequestOptions, 'body' | 'maxRedirects'> {
  body?: string | Buffer | Uint8Array;
  /** the most a plain answer may hold (a streamed one is the reader's to limit) */
  maxResponseBytes: number;
  /** whether the response (its status and headers) is one to hand on as a stream rather than read whole */
  streamIf(status: number, headers: ResponseHeaders): boolean;
}

const abortReason = (signal: AbortSignal): Error => (signal.reason instanceof Error ? signal.reason : new Error('aborted'));

/**
 * One exchange, no redirect followed (a 3xx comes back as it is), its answer read whole as
 * httpRequest reads one (within `timeoutMs` in all, at most `maxResponseBytes`) unless `streamIf`
 * says the response is a stream: that body is handed on as it arrives, as httpStream's is
 * (`timeoutMs` until the headers, then for each gap). Made for the proxied MCP call, one per
 * tool call, whose answer is nearly always a small JSON body: it drives undici's dispatch handler
 * directly, so that a plain answer costs no body stream, no abort-signal listener and no
 * pass-through (a proxied call's exchange at 50 callers against a bare loopback server, in one
 * sitting: 40 to 46 µs of CPU, against 86 to 92 µs over httpStream's path). Same pool, same
 * address guard in the connector.
 */
export async function httpAnswer(req: AnswerRequestOptions): Promise<AnsweredResponse> {
  const policy: AddressPolicy = { allowPrivateNetwork: req.allowPrivateNetwork, isBlockedAddress: req.isBlockedAddress };
  const url = new URL(req.url);
  const method = req.method.toUpperCase();
  assertUrlAllowed(url, policy);
  const headers = moveUserInfo(url, withoutHeaders(req.headers ?? {}, HOP_BY_HOP_HEADERS));
  if (req.signal?.aborted) throw abortReason(req.signal);
  const agent = agentFor(policy);
  return traced({ url, method }, (traceHeaders) => dispatchAnswer(agent, url, method, traceHeaders === NO_TRACE_HEADERS ? headers : { ...headers, ...traceHeaders }, req),
    (answer) => answer.status);
}

function dispatchAnswer(agent: Agent, url: URL, method: string, headers: Record<string, string>, req: AnswerRequestOptions): Promise<AnsweredResponse> {
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    /** a reason to abort with that came before the request started */
    let abortWhenStarted: Error | undefined;
    let settled = false;
    let stream: Readable | undefined;
    let ended = false;
    let status = 0;
    let responseHeaders: ResponseHeaders = {};
    const chunks: Buffer[] = [];
    let size = 0;
    const outer = req.signal;
    const cancel = (reason: Error): void => {
      if (controller) controller.abort(reason);
      else abortWhenStarted = reason;
    };
    const onAbort = (): void => {
      const reason = abortReason(outer!);
      fail(reason);
      cancel(reason);
    };
    const untie = (): void => outer?.removeEventListener('abort', onAbort);
    const timer = setTimeout(() => {
      const timeout = new OutboundTimeoutError(req.timeoutMs);
      fail(timeout);
      cancel(timeout);
    }, req.timeoutMs);
    outer?.addEventListener('abort', onAbort, { once: true });
    /** The exchange failed: before the answer (rejected), or in a streamed body (which ends with the error). */
    function fail(error: Error): void {
      clearTimeout(timer);
      untie();
      if (stream) {
        stream.destroy(error);
        return;
      }
      if (settled) return;
      settled = true;
      reject(error);
    }
    const tooLarge = (handle: Dispatcher.DispatchController): void => {
      const error = new ResponseTooLargeError(req.maxResponseBytes);
      fail(error);
      handle.abort(error);
    };
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(handle) {
        controller = handle;
        if (abortWhenStarted) handle.abort(abortWhenStarted);
      },
      onResponseStart(handle, statusCode, answered) {
        status = statusCode;
        responseHeaders = answered;
        if (req.streamIf(statusCode, answered)) {
          clearTimeout(timer);
          stream = new Readable({
            read: () => handle.resume(),
            destroy: (error, callback) => {
              untie();
              // a reader that stops early closes the connection: the rest of the answer is still on it
              if (!ended) handle.abort(error ?? new Error('the body was closed before its end'));
              callback(error);
            },
          });
          settled = true;
          resolve({ streamed: true, status, headers: answered, url: url.toString(), body: stream });
          return;
        }
        const declared = firstValue(answered['content-length']);
        if (declared !== undefined && Number(declared) > req.maxResponseBytes) tooLarge(handle);
      },
      onResponseData(handle, chunk) {
        if (stream) {
          if (!stream.push(chunk)) handle.pause();
          return;
        }
        size += chunk.length;
        if (size > req.maxResponseBytes) tooLarge(handle);
        else chunks.push(chunk);
      },
      onResponseEnd() {
        ended = true;
        clearTimeout(timer);
        untie();
        if (stream) {
          stream.push(null);
          return;
        }
        if (settled) return;
        settled = true;
        const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
        // After undici's own check of the idle connection (an immediate it sets once this returns):
        // the connection is free by then, so a request the caller sends at once reuses it instead
        // of opening another one (the test 'keeps its connection for the next request' holds this).
        queueMicrotask(() => setImmediate(() => resolve({ streamed: false, status, headers: responseHeaders, url: url.toString(), body })));
      },
      onResponseError(_handle, error) {
        fail(isUndiciTimeout(error) ? new OutboundTimeoutError(req.timeoutMs) : error);
      },
    };
    try {
      agent.dispatch({
        origin: url.origin, path: `${url.pathname}${url.search}`, method, headers, body: req.body ?? null,
        // our timer governs the exchange until the answer (or a stream's headers); undici's, a stream's idle gaps
        headersTimeout: 0, bodyTimeout: req.timeoutMs,
      }, handler);
    } catch (error) {
      fail(error instanceof Error ? error : new Error(String(error)));
    }
  });
}

/** Drops a body unread; that closes its connection, since the rest of the answer is still on it. */
function discard(body: Readable): void {
  body.on('error', () => undefined); // destroying an undici body reports an AbortError nobody waits for
  body.destroy();
}

/** Sends a request and reads the whole answer, refusing bodies over `maxResponseBytes`. */
export async function httpRequest(req: HttpRequestOptions & { maxResponseBytes: number }): Promise<BufferedResponse> {
  const until = deadline(req);
  try {
    const { response, url } = await send(req, until.signal, 0);
    const declared = Number(firstValue(response.headers['content-length']));
    if (Number.isFinite(declared) && declared > req.maxResponseBytes) {
      discard(response.body);
      throw new ResponseTooLargeError(req.maxResponseBytes);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      size += buffer.length;
      if (size > req.maxResponseBytes) {
        discard(response.body);
        throw new ResponseTooLargeError(req.maxResponseBytes);
      }
      chunks.push(buffer);
    }
    // as in httpStream: the connection goes back to the pool before the caller's next request
    await new Promise((resolve) => setImmediate(resolve));
    return { status: response.statusCode, headers: response.headers, url: url.toString(), body: Buffer.concat(chunks) };
  } catch (error) {
    if (until.timedOut()) throw new OutboundTimeoutError(req.timeoutMs);
    throw error;
  } finally {
    until.clear();
    until.untie();
  }
}
