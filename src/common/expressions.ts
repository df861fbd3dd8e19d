/**
 * Expressions of `if`, `items` and branch cases: JSONata over the same context as `{{path}}`
 * interpolation (`inputs`, `steps`, `run`, and inside lists `local`, `item`, `index`), plus
 * `$step("3.2.1")` for a step by its address. Pure: evaluated in workflow code, where Temporal's
 * sandbox makes `$now()`/`$millis()` the workflow's own (replayed) time and `$random()` seeded by
 * the run, so evaluation is deterministic on replay.
 */
import type jsonataModule from 'jsonata';
import { lookup, type InterpolationContext } from './interpolate';
import { fieldOf } from './narrow';

let loaded: typeof jsonataModule | undefined;
/**
 * jsonata, loaded at the first expression and not before: in the workflow sandbox each run
 * evaluates the modules it loads and keeps them while it is cached (jsonata is the bundle's
 * largest), and most runs evaluate no expression. A plain require (no `import()`) so that loading
 * adds no await: workflow code keeps the same order of commands as before.
 */
function jsonata(expression: string, options: typeof EVAL_OPTIONS): ReturnType<typeof jsonataModule> {
  if (loaded === undefined) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const required: typeof jsonataModule = require('jsonata');
    loaded = required;
  }
  return loaded(expression, options);
}

/**
 * jsonata's own guards against runaway evaluation. In a workflow the clock stands still during a
 * workflow task, so the depth limit is the one that bites there; the timeout guards validation.
 */
export const EXPRESSION_STACK = 200;
const EVAL_OPTIONS = { timeout: 1000, stack: EXPRESSION_STACK };

export class ExpressionError extends Error {}

function describe(err: unknown): string {
  const code = fieldOf(err, 'code');
  const position = fieldOf(err, 'position');
  const text = fieldOf(err, 'message') ?? (code ? `error ${String(code)}` : String(err));
  return `${String(text)}${position === undefined ? '' : ` (at character ${String(position)})`}`;
}

export async function evaluateExpression(expression: string, context: InterpolationContext): Promise<unknown> {
  let compiled;
  try {
    compiled = jsonata(expression, EVAL_OPTIONS);
  } catch (err) {
    throw new ExpressionError(`does not parse: ${describe(err)}`);
  }
  try {
    const value: unknown = await compiled.evaluate(context, { step: (address: unknown) => lookup(context, `steps.${String(address)}`) });
    // jsonata marks its result arrays with extra properties; keep plain JSON
    const text = JSON.stringify(value);
    const plain: unknown = text === undefined ? undefined : JSON.parse(text);
    return plain;
  } catch (err) {
    throw new ExpressionError(describe(err));
  }
}

/**
 * JSONata's truthiness: false for undefined, null, false, 0, '', an empty array or object; an
 * array is true when any element is. Judged without recursion: the value may be a step's JSON,
 * nested as deep as some API chose to answer.
 */
export function truthy(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (Array.isArray(current)) {
      for (const element of current) pending.push(element);
    } else if (current !== undefined && current !== null && typeof current !== 'function') {
      if (typeof current === 'object' ? Object.keys(current).length > 0 : Boolean(current)) return true;
    }
  }
  return false;
}
