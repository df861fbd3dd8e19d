/**
 * Requests to a customer's API on a custom connection: the connection's credentials added, the
 * private-network guard and time and size limits of every outbound request, and one retry with a
 * fresh token when an OAuth API answers 401 (the token was revoked or expired early).
 */
import { httpRequest, type BufferedResponse } from '../../net/http-client';
import type { CustomAuth, CustomConnectionRef } from './auth';

/** the most a customer API may answer to one request */
export const MAX_API_RESPONSE_BYTES = 10 * 1024 * 1024;

export interface ApiRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
}

export interface ApiSendOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  allowPrivateNetwork: boolean;
  maxResponseBytes?: number;
}

export async function sendToCustomerApi(auth: CustomAuth, connection: CustomConnectionRef, request: ApiRequest, options: ApiSendOptions): Promise<BufferedResponse> {
  const started = Date.now();
  const attempt = async (): Promise<BufferedResponse> => {
    const credentials = await auth.credentialsFor(connection);
    const url = new URL(request.url);
    for (const [name, value] of Object.entries(credentials.query)) url.searchParams.set(name, value);
    // the credential wins over a same-named header the caller built from the document
    const headers = { ...withoutNames(request.headers, Object.keys(credentials.headers)), ...credentials.headers };
    return httpRequest({
      method: request.method, url: url.toString(), headers, body: request.body,
      timeoutMs: Math.max(1, options.timeoutMs - (Date.now() - started)), maxResponseBytes: options.maxResponseBytes ?? MAX_API_RESPONSE_BYTES,
      allowPrivateNetwork: options.allowPrivateNetwork, signal: options.signal,
    });
  };
  const first = await attempt();
  if (first.status !== 401 || !auth.canRenew(connection)) return first;
  auth.invalidate(connection);
  return attempt();
}

function withoutNames(headers: Record<string, string>, names: readonly string[]): Record<string, string> {
  const drop = new Set(names.map((n) => n.toLowerCase()));
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !drop.has(name.toLowerCase())));
}
