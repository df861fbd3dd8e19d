/** The CLI's HTTP client: JSON in and out, an explicit timeout on every request, HTTP errors as CliError. */
import { CliError, EXIT } from './errors';

const REQUEST_TIMEOUT_MS = 30_000;

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** the admin token (default) or none */
  auth?: 'admin' | 'none';
  timeoutMs?: number;
  /** raw body (already encoded) with its content type */
  raw?: { contentType: string; data: string };
}

export interface Reply<T> { status: number; headers: Headers; body: T }

export class FlowgateClient {
  constructor(readonly baseUrl: string, private readonly token: string | undefined) {}

  url(pathname: string): string {
    return `${this.baseUrl.replace(/\/+$/, '')}${pathname}`;
  }

  async request<T = unknown>(method: string, pathname: string, options: RequestOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
    if ((options.auth ?? 'admin') === 'admin') {
      if (!this.token) throw new CliError('no admin token: set FLOWGATE_TOKEN, pass --token, or run `flowgate login`', EXIT.USAGE);
      headers.Authorization = `Bearer ${this.token}`;
    }
    let body: string | undefined;
    if (options.raw) {
      headers['Content-Type'] = options.raw.contentType;
      body = options.raw.data;
    } else if (options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    let response: Response;
    try {
      response = await fetch(this.url(pathname), { method, headers, body, signal: AbortSignal.timeout(options.timeoutMs ?? REQUEST_TIMEOUT_MS) });
    } catch (err) {
      const reason = err instanceof Error && err.name === 'TimeoutError' ? 'timed out' : (err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err));
      throw new CliError(`${method} ${this.url(pathname)}: ${reason}`, err instanceof Error && err.name === 'TimeoutError' ? EXIT.TIMEOUT : EXIT.FAILURE);
    }
    const text = await response.text();
    let parsed: unknown = text;
    if (text && (response.headers.get('content-type') ?? '').includes('json')) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (!response.ok) {
      const detail = typeof parsed === 'object' && parsed !== null && 'message' in parsed ? String(parsed.message)
        : typeof parsed === 'object' && parsed !== null && 'error' in parsed ? JSON.stringify(parsed.error) : text.slice(0, 500);
      throw new CliError(`${method} ${pathname}: HTTP ${response.status}: ${detail}`, EXIT.FAILURE);
    }
    // T is the caller's word for what this endpoint answers: the CLI trusts its own server's JSON
    return { status: response.status, headers: response.headers, body: parsed as T };
  }

  /**
   * Opens a streamed GET (Server-Sent Events): the response with its body unread. No timeout of
   * its own: `signal` ends it. HTTP errors are CliErrors as for request().
   */
  async open(pathname: string, options: { auth?: 'admin' | 'none'; headers?: Record<string, string>; signal: AbortSignal }): Promise<Response> {
    const headers: Record<string, string> = { Accept: 'text/event-stream', ...options.headers };
    if ((options.auth ?? 'admin') === 'admin') {
      if (!this.token) throw new CliError('no admin token: set FLOWGATE_TOKEN, pass --token, or run `flowgate login`', EXIT.USAGE);
      headers.Authorization = `Bearer ${this.token}`;
    }
    const response = await fetch(this.url(pathname), { headers, signal: options.signal });
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      let detail = text.slice(0, 500);
      try {
        const parsed: unknown = JSON.parse(text);
        if (typeof parsed === 'object' && parsed !== null && 'message' in parsed && typeof parsed.message === 'string') detail = parsed.message;
      } catch {
        // not JSON: the text itself
      }
      throw new CliError(`GET ${pathname}: HTTP ${response.status}: ${detail}`, EXIT.FAILURE);
    }
    return response;
  }

  async get<T = unknown>(pathname: string): Promise<T> {
    return (await this.request<T>('GET', pathname)).body;
  }
}
