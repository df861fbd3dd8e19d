/**
 * The `http` step: one outbound request through src/net/http-client and its address guard. The URL,
 * header values and body are interpolated, so they may carry secrets from inputs: the step's log
 * names only the method, origin and path, never the query string or header values.
 */
import type { HttpStep } from './schema';
import { interpolate, interpolateDeep, type InterpolationContext } from '../../../src/common/interpolate';
import {
  OutboundRefusedError, OutboundTimeoutError, ResponseTooLargeError, TooManyRedirectsError, httpRequest,
} from '../../../src/net/http-client';
import { EXIT_FAILURE, EXIT_TIMEOUT, type StepExecution } from '../step-execution';

export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

export interface HttpStepOptions {
  allowPrivateNetwork: boolean;
  /** default 10 MiB */
  maxResponseBytes?: number;
  /** aborts the request and closes its connection, e.g. when the activity is cancelled */
  signal?: AbortSignal;
  /** the step's default Idempotency-Key (`<runId>:<stepIndex>`); none when unset */
  idempotencyKey?: string;
}

export async function runHttpStep(step: HttpStep, context: InterpolationContext, options: HttpStepOptions): Promise<StepExecution> {
  const method = step.method;
  let url: URL;
  try {
    url = new URL(interpolate(step.url, context));
  } catch {
    // the text may hold interpolated secrets, so it stays out of the message
    return failed(EXIT_FAILURE, 'FAILED', 'the URL is not a valid absolute URL', `${method} (invalid URL)`);
  }
  const shown = `${method} ${describeUrl(url)}`;

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(step.headers)) headers[name] = interpolate(value, context);
  const key = step.idempotencyKey === undefined ? options.idempotencyKey : step.idempotencyKey === false ? undefined : interpolate(step.idempotencyKey, context);
  if (key && !Object.keys(headers).some((name) => name.toLowerCase() === 'idempotency-key')) headers['idempotency-key'] = key;
  let body: string | undefined;
  if (typeof step.body === 'string') {
    body = interpolate(step.body, context);
  } else if (step.body !== undefined) {
    body = JSON.stringify(interpolateDeep(step.body, context));
    if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  }

  const started = Date.now();
  try {
    const response = await httpRequest({
      method,
      url: url.toString(),
      headers,
      body,
      timeoutMs: step.timeoutMs,
      maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      allowPrivateNetwork: options.allowPrivateNetwork,
      signal: options.signal,
    });
    const finalUrl = new URL(response.url);
    const via = response.url === url.toString() ? '' : ` from ${describeUrl(finalUrl)}`;
    const stdout = `${shown} -> ${response.status}${via} (${Date.now() - started} ms, ${response.body.length} bytes)\n`;
    const result = response.body.toString('utf8');
    const resultType = isJsonResponse(firstValue(response.headers['content-type']), result) ? 'json' : 'plaintext';
    const ok = response.status >= 200 && response.status < 300;
    if (!ok && step.failOnHttpError) {
      return { status: 'FAILED', result, resultType, exitCode: EXIT_FAILURE, stdout, error: `HTTP ${response.status} from ${finalUrl.host}` };
    }
    return { status: 'COMPLETE', result, resultType, exitCode: 0, stdout };
  } catch (error) {
    // A cancelled activity (run cancelled, worker shutting down) is not a failed request: its
    // reason is thrown on, so Temporal records a cancellation and the step no result.
    if (options.signal?.aborted) throw abortReason(options.signal);
    const elapsed = `${Date.now() - started} ms`;
    if (error instanceof OutboundTimeoutError) {
      const message = `no complete answer from ${url.host} within ${step.timeoutMs} ms`;
      return failed(EXIT_TIMEOUT, 'TIMEOUT', message, `${shown} -> timed out (${elapsed})`);
    }
    const message = describeFailure(error, url);
    return failed(EXIT_FAILURE, 'FAILED', message, `${shown} -> failed (${elapsed}): ${message}`);
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error(`the step was cancelled: ${String(signal.reason)}`);
}

/** Origin and path only: the query string and any user:password part are left out. */
function describeUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function describeFailure(error: unknown, url: URL): string {
  if (error instanceof OutboundRefusedError) return error.message;
  if (error instanceof ResponseTooLargeError) return `the response from ${url.host} is larger than ${error.maxResponseBytes} bytes`;
  if (error instanceof TooManyRedirectsError) return `${url.host} redirected more than ${error.maxRedirects} times`;
  const detail = error instanceof Error ? error.message : String(error);
  return `request to ${url.host} failed: ${detail}`;
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function isJsonResponse(contentType: string | undefined, text: string): boolean {
  // application/json, and the structured-syntax suffix form (application/problem+json)
  if (contentType === undefined || !/^[^;]*[/+]json\s*(;|$)/i.test(contentType)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function failed(exitCode: number, status: 'FAILED' | 'TIMEOUT', error: string, log: string): StepExecution {
  return { status, result: '', resultType: 'plaintext', exitCode, stdout: `${log}\n`, error };
}
