/**
 * The code-agent backend's v1 HTTP client (Cursor Cloud Agents API v1): the auth header (the key
 * as Basic username with an empty password, or Bearer), JSON in and out, and the error envelope
 * `{error: {code, message}}` turned into a ToolFailure that keeps the backend's code, status and
 * Retry-After. The base URL is the customer's, so every request passes the private-network guard.
 *
 * Secrets: the API key (and, for create-agent, envVars values) are redacted from every message
 * this client produces, whatever the backend echoes back.
 */
import { z } from 'zod';
import { httpRequest, OutboundRefusedError, OutboundTimeoutError, ResponseTooLargeError } from '../../../net/http-client';
import { jsonText } from '../../../documents/json-thread';
import { ToolCallError, ToolFailure, type ToolConnection } from '../../server';
import { CodeAgentCredentialsSchema, type CodeAgentCredentials } from './schemas';

export const JSON_TIMEOUT_MS = 30_000;
const MAX_JSON_BYTES = 10 * 1024 * 1024;

const ErrorEnvelopeSchema = z.object({ error: z.object({ code: z.string().max(200), message: z.string().max(5000).optional() }).loose() }).loose();

export function credentialsOf(connection: ToolConnection | undefined): CodeAgentCredentials {
  const parsed = CodeAgentCredentialsSchema.safeParse(connection?.credentials);
  if (!parsed.success) throw new ToolCallError('CONNECTION_REFUSED', `connection ${connection?.id ?? ''} does not hold codeagent settings`);
  return parsed.data;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  timeoutMs?: number;
  /** extra values to keep out of messages (envVars values) */
  secrets?: readonly string[];
}

export class CodeAgentClient {
  private readonly secrets: string[];

  constructor(private readonly credentials: CodeAgentCredentials, private readonly allowPrivateNetwork: boolean, private readonly signal: AbortSignal,
    /** epoch ms after which the caller has given up: no request is given longer than that */
    private readonly deadline = Number.POSITIVE_INFINITY) {
    this.secrets = [credentials.apiKey, Buffer.from(`${credentials.apiKey}:`).toString('base64')];
  }

  authorization(): string {
    const { apiKey, authScheme } = this.credentials;
    return authScheme === 'bearer' ? `Bearer ${apiKey}` : `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`;
  }

  url(path: string, query: RequestOptions['query'] = {}): URL {
    const url = new URL(this.credentials.baseUrl.replace(/\/+$/, '') + path);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
    return url;
  }

  /** `wanted`, cut to what is left before the caller's deadline, so that a slow backend is a timeout, not a hang */
  timeoutWithin(wanted: number): number {
    return Math.max(1, Math.min(wanted, this.deadline - Date.now() - 100));
  }

  get privateNetworkAllowed(): boolean {
    return this.allowPrivateNetwork;
  }

  /** Keeps the key and the given values out of a text that may reach a caller or a log. */
  redact(text: string, extra: readonly string[] = []): string {
    let out = text;
    for (const secret of [...this.secrets, ...extra]) if (secret.length >= 1) out = out.split(secret).join('[redacted]');
    return out;
  }

  /** Sends one JSON request and answers the parsed 2xx body validated by `schema`. */
  async json<T>(method: string, path: string, schema: z.ZodType<T>, options: RequestOptions = {}): Promise<T> {
    const timeoutMs = this.timeoutWithin(options.timeoutMs ?? JSON_TIMEOUT_MS);
    const secrets = options.secrets ?? [];
    const url = this.url(path, options.query);
    let response;
    try {
      response = await httpRequest({
        method, url: url.toString(), timeoutMs, maxResponseBytes: MAX_JSON_BYTES, allowPrivateNetwork: this.allowPrivateNetwork, signal: this.signal,
        // the backend's redirects are not followed: the Authorization header must stay with its origin
        maxRedirects: 0,
        headers: {
          authorization: this.authorization(), accept: 'application/json',
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        // a prompt with images is about 100 MB of JSON: written off the event loop
        body: options.body === undefined ? undefined : await jsonText(options.body),
      });
    } catch (error) {
      throw this.transportError(error, timeoutMs, secrets);
    }
    const text = response.body.toString('utf8');
    if (response.status < 200 || response.status >= 300) throw this.backendError(response.status, text, headerOf(response.headers['retry-after']), secrets);
    let body: unknown;
    try {
      body = text === '' ? {} : JSON.parse(text);
    } catch {
      throw new ToolFailure(`the codeagent backend answered ${method} ${path} with something that is not JSON`, { code: 'invalid_response', status: response.status });
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      throw new ToolFailure(`the codeagent backend answered ${method} ${path} with JSON of an unexpected shape`, { code: 'invalid_response', status: response.status });
    }
    return parsed.data;
  }

  /** An outbound failure as the caller should see it: refused, timed out or unreachable. */
  transportError(error: unknown, timeoutMs: number, secrets: readonly string[] = []): Error {
    if (error instanceof ToolFailure || error instanceof ToolCallError) return error;
    if (error instanceof OutboundTimeoutError) return new ToolCallError('TIMEOUT', `the codeagent backend did not answer within ${timeoutMs} ms`);
    if (error instanceof OutboundRefusedError) return new ToolCallError('CONNECTION_REFUSED', `the codeagent base URL is refused: ${error.message}`);
    if (error instanceof ResponseTooLargeError) return new ToolFailure(`the codeagent backend's answer is too large: ${error.message}`, { code: 'response_too_large' });
    if (this.signal.aborted) return this.signal.reason instanceof Error ? this.signal.reason : new ToolCallError('TIMEOUT', 'the call was abandoned');
    const message = error instanceof Error ? error.message : String(error);
    return new ToolCallError('UNAVAILABLE', `the codeagent backend is unreachable: ${this.redact(message, secrets)}`);
  }

  /** A non-2xx answer as a ToolFailure with the backend's code, message, status and Retry-After. */
  backendError(status: number, text: string, retryAfterHeader: string | undefined, secrets: readonly string[] = []): ToolFailure {
    let code = `http_${status}`;
    let message = '';
    try {
      const envelope = ErrorEnvelopeSchema.safeParse(JSON.parse(text));
      if (envelope.success) {
        code = envelope.data.error.code;
        message = envelope.data.error.message ?? '';
      }
    } catch {
      // not JSON (a proxy's HTML page, say): the status alone speaks
    }
    message = this.redact(message, secrets);
    const details: Record<string, unknown> = { code, status };
    const retryAfter = retryAfterSeconds(retryAfterHeader);
    if (retryAfter !== undefined) details.retryAfter = retryAfter;
    if (status === 401) {
      return new ToolFailure(`the codeagent backend refused the connection's API key (401 ${code}${message ? `: ${message}` : ''}); check the key of this connection`, details);
    }
    if (status === 429) {
      return new ToolFailure(`the codeagent backend is rate limiting (429 ${code})${retryAfter === undefined ? '' : `; retry after ${retryAfter} s`}${message ? `: ${message}` : ''}`, details);
    }
    return new ToolFailure(`the codeagent backend answered ${status} ${code}${message ? `: ${message}` : ''}`, details);
  }
}

function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Retry-After in seconds, from either of its forms (delta seconds or an HTTP date). */
export function retryAfterSeconds(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
