/**
 * A bound on how deeply a JSON body may nest. Parsing a deep body is fine, but everything after
 * it (schema checks, interpolation, storing the inputs) walks values recursively: 5,000 levels
 * overflowed the stack and answered 500. Every JSON surface checks this right after parsing and
 * answers 400 instead. Checked without recursion, so the check itself cannot overflow.
 */
export const MAX_JSON_DEPTH = 64;

export function tooDeepMessage(max = MAX_JSON_DEPTH): string {
  return `the JSON body nests deeper than ${max} levels of objects and arrays`;
}

/** Whether `value` has more than `max` levels of objects and arrays (a scalar is level 0). */
export function jsonDepthExceeds(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > max) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
