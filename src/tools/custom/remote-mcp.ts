/**
 * flowgate's client of remote MCP servers, both protocol eras, built so a proxied call costs one
 * round trip (docs/tool-gateway.md, "Remote servers"):
 *
 * - Which era a remote speaks is learned once per remote and process, as the 2026-07-28
 *   specification has clients negotiate it: a `server/discover` probe carrying the per-request
 *   `_meta`; a result offering 2026-07-28 (or an UnsupportedProtocolVersion error listing it)
 *   means the stateless era, another answer (method not found, a 4xx, no session) the 2025 era. A
 *   remote that cannot be reached, refuses the credential or fails (5xx) is not classified: the
 *   next request asks again.
 * - A 2026 remote gets one POST per request: protocol version, client info and capabilities in
 *   the request's `_meta`, the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers, and on a
 *   `tools/call` the `Mcp-Param-*` headers its tool's schema declares (param-headers.ts; the
 *   schema comes from the caller, who keeps the remote's tool list).
 * - A 2025 remote gets `initialize` and `notifications/initialized` once per remote, credential
 *   and process; concurrent requests share the one handshake in flight and the session it opens.
 *   A 404 on a request that carried the session id means the remote ended the session: the
 *   session is opened again (once, whoever notices first) and the request sent again, once.
 *
 * Every request carries the caller's forwarded headers (less any named like a protocol header:
 * `mcp-method`, `mcp-name`, `mcp-param-*`, ...), then the protocol headers, then the stored
 * credential, which nothing before it can replace. The handshake is shared by callers, so it
 * carries the credential and no caller's forwarded headers.
 */
import { createHash } from 'node:crypto';
import { encodeHeaderValue, paramHeaders, scanDeclarations } from '../mcp/param-headers';
import { exchange, type ExchangeResult, type JsonRpcAnswer } from './remote-mcp-wire';

export const MODERN_PROTOCOL_VERSION = '2026-07-28';
export const LEGACY_PROTOCOL_VERSION = '2025-11-25';
const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_INFO_META = 'io.modelcontextprotocol/clientInfo';
const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';
const UNSUPPORTED_PROTOCOL_VERSION = -32022;
const CLIENT_INFO = { name: 'flowgate', version: '1.0.0' };
/** How long the shared discovery probe and handshake may take: no one caller's limit governs them. */
const SETUP_TIMEOUT_MS = 15_000;
/** Remotes and credentials whose era and session are kept; the least recently used go first. */
const MAX_REMEMBERED = 1000;

/** A JSON-RPC error the remote answered. */
export class RemoteRpcError extends Error {
  override readonly name = 'RemoteRpcError';
  /** `httpStatus`: the HTTP status the error came with, when not 2xx (a 503 with a JSON-RPC body: the remote is overloaded) */
  constructor(readonly code: number, message: string, readonly data?: unknown, readonly httpStatus?: number) {
    super(message);
  }
}

/** An HTTP answer without a JSON-RPC one. */
export class RemoteHttpError extends Error {
  override readonly name = 'RemoteHttpError';
  constructor(readonly status: number, detail: string | undefined) {
    super(`HTTP ${status}${detail ? `: ${detail}` : ''}`);
  }
}

/** Where a request goes and with which credential. */
export interface RemoteTarget {
  /** the server's URL as registered (what its era is remembered by) */
  url: string;
  /** the stored credential: query parameters and headers (names lowercased) */
  credential: { headers: Readonly<Record<string, string>>; query: Readonly<Record<string, string>> };
  allowPrivateNetwork: boolean;
}

export interface RemoteRequestOptions {
  /** the caller's `X-Pf-Forward-*` headers, reduced (contract 4.7) */
  forward: Readonly<Record<string, string>>;
  signal: AbortSignal;
  deadline: number;
  /** messages the remote streams before its answer (progress notifications, say), as they arrive */
  onMessage?(message: Record<string, unknown>): void;
  /** the called tool's inputSchema as the remote listed it, for the `Mcp-Param-*` headers; asked only on a tools/call to a 2026 remote */
  toolSchema?(): Promise<unknown>;
  /** the client capabilities this request declares to a 2026 remote (the caller's, passed on); none when absent */
  clientCapabilities?: Readonly<Record<string, unknown>>;
  /** params a 2025 remote gets besides `params` (a durable attempt's `task`, remote-tasks.ts); asked only of a 2025 remote */
  legacyParams?(): Promise<Record<string, unknown>>;
}

/** Names a forwarded header may not have: the protocol sets them (in either era), or they mean nothing forwarded. */
const PROTOCOL_HEADER = /^(mcp-method|mcp-name|mcp-protocol-version|mcp-session-id|mcp-param-.*)$/;

/** The caller's forwarded headers, less any named like a protocol header: a forwarded one cannot pose as one. */
function forwardedOnly(forward: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(forward).filter(([name]) => !PROTOCOL_HEADER.test(name.toLowerCase())));
}

/** The `Mcp-Param-*` headers of a tools/call, from its tool's schema; none without one (or with an invalid one: such a tool is not listed). */
function paramHeadersOf(schema: unknown, params: Record<string, unknown>): Record<string, string> {
  if (schema === undefined) return {};
  const scan = scanDeclarations(schema);
  return scan.valid ? paramHeaders(scan.declarations, params.arguments) : {};
}

type Era = { modern: true; version: string } | { modern: false };

interface Session {
  /** absent when the remote handed out none (a stateless 2025 server) */
  id?: string;
  protocolVersion: string;
}

/** A Map that forgets its least recently used entry past MAX_REMEMBERED. */
class Remembered<V> {
  private readonly entries = new Map<string, V>();

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size <= MAX_REMEMBERED) return;
    const oldest = this.entries.keys().next();
    if (!oldest.done) this.entries.delete(oldest.value);
  }

  /** Forgets `key` only while it still holds `value` (another caller may have replaced it). */
  forget(key: string, value: V): void {
    if (this.entries.get(key) === value) this.entries.delete(key);
  }
}

function withCredentialQuery(target: RemoteTarget): string {
  const entries = Object.entries(target.credential.query);
  if (entries.length === 0) return target.url;
  const url = new URL(target.url);
  for (const [name, value] of entries) url.searchParams.set(name, value);
  return url.toString();
}

/** A session's key: the remote and a digest of the credential (the key holds no secret). */
function sessionKey(target: RemoteTarget): string {
  const digest = createHash('sha256').update(JSON.stringify([target.credential.headers, target.credential.query])).digest('base64url');
  return `${target.url}\n${digest}`;
}

const NAME_FIELDS: Readonly<Record<string, string>> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

/** Resolves with `promise`, or rejects when `signal` aborts first (the promise goes on for others). */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The process's remote MCP client: eras by remote, 2025 sessions by remote and credential. */
export class RemoteMcpClient {
  private readonly eras = new Remembered<Promise<Era>>();
  private readonly sessions = new Remembered<Promise<Session>>();
  private nextId = 0;

  /** One request's result; throws RemoteRpcError, RemoteHttpError or what the HTTP client throws. */
  async request(target: RemoteTarget, method: string, params: Record<string, unknown>, options: RemoteRequestOptions): Promise<Record<string, unknown>> {
    const era = await unlessAborted(this.eraOf(target), options.signal);
    if (era.modern) {
      const schema = method === 'tools/call' && options.toolSchema ? await unlessAborted(options.toolSchema(), options.signal) : undefined;
      const result = await this.send(target, method, params, options, { version: era.version, modern: true, extra: paramHeadersOf(schema, params) });
      if (result.answer?.error?.code === UNSUPPORTED_PROTOCOL_VERSION) {
        // the remote no longer speaks what it offered (redeployed): the next request discovers again
        const current = this.eras.get(target.url);
        if (current) this.eras.forget(target.url, current);
      }
      return resultOf(result);
    }
    const key = sessionKey(target);
    if (options.legacyParams) params = { ...params, ...await unlessAborted(options.legacyParams(), options.signal) };
    for (let attempt = 0; ; attempt++) {
      const opened = this.sessionOf(target, key);
      const session = await unlessAborted(opened, options.signal);
      const result = await this.send(target, method, params, options, { version: session.protocolVersion, modern: false, sessionId: session.id });
      // the remote ended the session (specification: 404 to a request with its id): open another, send again once
      if (result.status === 404 && session.id !== undefined && attempt === 0) {
        this.sessions.forget(key, opened);
        continue;
      }
      return resultOf(result);
    }
  }

  private send(
    target: RemoteTarget, method: string, params: Record<string, unknown>, options: RemoteRequestOptions,
    protocol: { version: string; modern: boolean; sessionId?: string; extra?: Readonly<Record<string, string>> },
  ): Promise<ExchangeResult> {
    const id = ++this.nextId;
    const headers: Record<string, string> = { ...forwardedOnly(options.forward), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': protocol.version };
    let body: Record<string, unknown>;
    if (protocol.modern) {
      const meta = {
        ...(isRecord(params._meta) ? params._meta : {}), [PROTOCOL_VERSION_META]: protocol.version, [CLIENT_INFO_META]: CLIENT_INFO,
        [CLIENT_CAPABILITIES_META]: options.clientCapabilities ?? {},
      };
      body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } };
      headers['mcp-method'] = method;
      const field = NAME_FIELDS[method];
      const name = field === undefined ? undefined : params[field];
      if (typeof name === 'string') headers['mcp-name'] = encodeHeaderValue(name);
      Object.assign(headers, protocol.extra);
    } else {
      body = { jsonrpc: '2.0', id, method, params };
      if (protocol.sessionId !== undefined) headers['mcp-session-id'] = protocol.sessionId;
    }
    for (const [name, value] of Object.entries(target.credential.headers)) headers[name] = value;
    return exchange({
      url: withCredentialQuery(target), headers, body, id, signal: options.signal, deadline: options.deadline,
      allowPrivateNetwork: target.allowPrivateNetwork, onMessage: options.onMessage,
    });
  }

  /** The remote's era: discovered once (one probe in flight), forgotten when the probe could not tell. */
  private eraOf(target: RemoteTarget): Promise<Era> {
    const known = this.eras.get(target.url);
    if (known) return known;
    const probing = this.discover(target);
    this.eras.set(target.url, probing);
    probing.catch(() => this.eras.forget(target.url, probing));
    return probing;
  }

  private async discover(target: RemoteTarget): Promise<Era> {
    const setup = { forward: {}, signal: AbortSignal.timeout(SETUP_TIMEOUT_MS), deadline: Date.now() + SETUP_TIMEOUT_MS };
    const probe = await this.send(target, 'server/discover', {}, setup, { version: MODERN_PROTOCOL_VERSION, modern: true });
    const { status, answer } = probe;
    if (status === 401 || status === 403) throw new RemoteHttpError(status, `the remote refused the credential (${status === 401 ? 'unauthorized' : 'forbidden'})`);
    if (status >= 500) throw new RemoteHttpError(status, answer?.error?.message ?? probe.text);
    if (status < 300 && answer?.result) {
      const versions = answer.result.supportedVersions;
      return Array.isArray(versions) && versions.includes(MODERN_PROTOCOL_VERSION) ? { modern: true, version: MODERN_PROTOCOL_VERSION } : { modern: false };
    }
    if (answer?.error?.code === UNSUPPORTED_PROTOCOL_VERSION) {
      const data = answer.error.data;
      const supported = isRecord(data) && Array.isArray(data.supported) ? data.supported : [];
      if (supported.includes(MODERN_PROTOCOL_VERSION)) return { modern: true, version: MODERN_PROTOCOL_VERSION };
    }
    if (status < 300 && !answer) throw new RemoteHttpError(status, `an unusable answer to server/discover${probe.text ? ` (${probe.text.slice(0, 100)})` : ''}`);
    // method not found, no session, a 4xx: a server of the 2025 era
    return { modern: false };
  }

  /** The 2025 session of a remote and credential: one handshake in flight, shared by every caller. */
  private sessionOf(target: RemoteTarget, key: string): Promise<Session> {
    const known = this.sessions.get(key);
    if (known) return known;
    const opening = this.handshake(target);
    this.sessions.set(key, opening);
    opening.catch(() => this.sessions.forget(key, opening));
    return opening;
  }

  private async handshake(target: RemoteTarget): Promise<Session> {
    const setup = { forward: {}, signal: AbortSignal.timeout(SETUP_TIMEOUT_MS), deadline: Date.now() + SETUP_TIMEOUT_MS };
    const init = await this.send(target, 'initialize', { protocolVersion: LEGACY_PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO }, setup,
      { version: LEGACY_PROTOCOL_VERSION, modern: false });
    const result = resultOf(init);
    const sessionHeader = init.headers['mcp-session-id'];
    const id = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
    const protocolVersion = typeof result.protocolVersion === 'string' ? result.protocolVersion : LEGACY_PROTOCOL_VERSION;
    const session: Session = id === undefined ? { protocolVersion } : { id, protocolVersion };
    const initialized = await exchange({
      url: withCredentialQuery(target), body: { jsonrpc: '2.0', method: 'notifications/initialized' },
      headers: {
        'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': protocolVersion,
        ...(id === undefined ? {} : { 'mcp-session-id': id }), ...target.credential.headers,
      },
      signal: setup.signal, deadline: setup.deadline, allowPrivateNetwork: target.allowPrivateNetwork,
    });
    if (initialized.status >= 400) throw new RemoteHttpError(initialized.status, `notifications/initialized was refused${initialized.text ? ` (${initialized.text})` : ''}`);
    return session;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The result of an exchange, or the error it carries. */
function resultOf(exchanged: ExchangeResult): Record<string, unknown> {
  const answer: JsonRpcAnswer | undefined = exchanged.answer;
  if (answer?.error) throw new RemoteRpcError(answer.error.code, answer.error.message, answer.error.data, exchanged.status >= 300 ? exchanged.status : undefined);
  if (answer?.result && exchanged.status < 300) return answer.result;
  throw new RemoteHttpError(exchanged.status, exchanged.text ?? (exchanged.status < 300 ? 'no JSON-RPC answer' : undefined));
}
