/**
 * How deep and how large a parsed value is, judged without recursion and with bounded work, so
 * that the judgement itself can neither overflow the stack nor run long. A value that holds the
 * same object more than once (YAML aliases) is counted as often as it appears, which is how every
 * later consumer (JSON.stringify, schema validators, copies) will walk it; a value that contains
 * itself is infinitely deep.
 */

export interface JsonShapeLimits {
  /** levels of objects and arrays; a scalar is level 0 */
  maxDepth: number;
  /** values of any kind (objects, arrays and scalars), counted with repetition */
  maxValues: number;
  /**
   * characters of its JSON text, about (strings and keys at their length), counted with
   * repetition: a 2 MB YAML text whose anchors hold long strings aliased a hundred times each
   * became 190 MB of JSON
   */
  maxChars?: number;
}

export type JsonShapeProblem = 'depth' | 'size';

/** The first limit `value` exceeds, or undefined; stops as soon as one is exceeded. */
export function jsonShapeProblem(value: unknown, limits: JsonShapeLimits): JsonShapeProblem | undefined {
  const stack: [unknown, number][] = [[value, 0]];
  const maxChars = limits.maxChars ?? Number.POSITIVE_INFINITY;
  let values = 0;
  let chars = 0;
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (++values > limits.maxValues) return 'size';
    if (current === null || typeof current !== 'object') {
      chars += typeof current === 'string' ? current.length + 3 : 8;
      if (chars > maxChars) return 'size';
      continue;
    }
    if (depth + 1 > limits.maxDepth) return 'depth';
    const keys = Array.isArray(current) ? undefined : Object.keys(current);
    const children: unknown[] = Array.isArray(current) ? current : Object.values(current);
    chars += 2;
    for (const key of keys ?? []) chars += key.length + 3;
    // each child is one more value: a container too wide for the budget is refused before it is copied
    if (values + stack.length + children.length > limits.maxValues || chars > maxChars) return 'size';
    for (const child of children) stack.push([child, depth + 1]);
  }
  return undefined;
}
