import { isTemporalBusy, isTemporalUnavailable } from '../../temporal/client';
import { temporalBusy, temporalUnavailable, type HttpError } from './http-error';

export { isTemporalUnavailable };

/**
 * The 503 for a Temporal call that Temporal could not take: unreachable (`temporal_unavailable`) or
 * refusing calls for now, at its rate limit (`temporal_busy`); undefined for any other failure.
 */
export function temporalRefusal(err: unknown): HttpError | undefined {
  if (isTemporalUnavailable(err)) return temporalUnavailable();
  if (isTemporalBusy(err)) return temporalBusy();
  return undefined;
}

/** Runs a Temporal call, turning "Temporal is unreachable" or "Temporal is busy" into a 503 with Retry-After. */
export async function callTemporal<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw temporalRefusal(err) ?? err;
  }
}
