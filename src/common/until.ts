/**
 * The condition of a polling `tool` step (`until` in definition.ts), judged on the step's JSON
 * result. Pure, so that the workflow can judge it between its timers.
 */
import type { Until } from './definition';
import { isObjectLike } from './narrow';

export type UntilVerdict =
  | { met: true; value: unknown }
  | { met: false; value: unknown }
  /** the result cannot be judged at all (not JSON, cut short): polling more will not help */
  | { error: string };

/** The value at a dotted path (`run.status`, `items.0.id`); undefined when a segment is missing. */
export function valueAt(root: unknown, path: string): unknown {
  let current: unknown = root;
  for (const segment of path.split('.')) {
    if (Array.isArray(current) && /^\d+$/.test(segment)) current = current[Number(segment)];
    else if (isObjectLike(current) && Object.prototype.hasOwnProperty.call(current, segment)) current = current[segment];
    else return undefined;
  }
  return current;
}

export function judgeUntil(until: Until, result: string, truncated: boolean): UntilVerdict {
  if (truncated) return { error: `the result is too large to judge until ${until.path} (keep polling results small: a status call, not a listing)` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(result);
  } catch {
    return { error: 'the result is not JSON, so until cannot be judged' };
  }
  const value = valueAt(parsed, until.path);
  return { met: until.in.some((wanted) => wanted === value), value };
}
