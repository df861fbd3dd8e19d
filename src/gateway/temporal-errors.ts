import { ServiceError } from '@temporalio/client';
import { temporalUnavailable } from './http-error';

/** gRPC UNAVAILABLE / DEADLINE_EXCEEDED from Temporal: the service is down or unreachable. */
export function isTemporalUnavailable(err: unknown): boolean {
  const cause = err instanceof ServiceError ? err.cause : err;
  const code = (cause as { code?: number } | undefined)?.code;
  return err instanceof ServiceError && (code === 14 || code === 4);
}

/** Runs a Temporal call, turning "Temporal is unreachable" into a 503 with Retry-After. */
export async function callTemporal<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isTemporalUnavailable(err)) throw temporalUnavailable();
    throw err;
  }
}
