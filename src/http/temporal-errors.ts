import { isTemporalUnavailable } from '../../temporal/client';
import { temporalUnavailable } from './http-error';

export { isTemporalUnavailable };

/** Runs a Temporal call, turning "Temporal is unreachable" into a 503 with Retry-After. */
export async function callTemporal<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isTemporalUnavailable(err)) throw temporalUnavailable();
    throw err;
  }
}
