/**
 * Checks of a definition's control flow that a schema cannot express (run at the management API
 * when a definition is created, updated or published): expressions that do not parse, references
 * to steps a step cannot see, nesting deeper than MAX_NESTING_DEPTH, `retry` on a step kind that
 * has no activity, and what each kind checks of its steps in their place (`problems` of a
 * DefinitionStepKind: an approval where two could wait at once).
 */
import jsonata from 'jsonata';
import { EXPRESSION_STACK } from './expressions';
import { fieldOf } from './narrow';
import type { DefinitionStepKind, Retry, StepProblem } from './step-schema';

/** Step lists nest at most this deep (a forEach in a branch in a parallel is depth 3). */
export const MAX_NESTING_DEPTH = 3;

/**
 * An expression's text nests at most this deep (brackets, and the conditionals and bindings open
 * within them), judged before jsonata's parser, which recurses once per level: a stack overflow
 * there can abort the process rather than throw. Regular expressions count with the rest, since
 * V8 compiles them recursively when a run evaluates them.
 */
export const MAX_EXPRESSION_NESTING = 64;

export type FlowProblem = StepProblem;

/** The fields of steps this module reads; the schema has already checked their shapes. */
type StepLike = {
  type: string;
  name: string;
  if?: string;
  retry?: Retry;
  items?: string;
  concurrency?: number;
  steps?: StepLike[];
  cases?: { if: string; steps: StepLike[] }[];
  default?: StepLike[];
  branches?: { steps: StepLike[] }[];
};

interface ListContext {
  /** the number of top-level steps before the construct this list is in (or before the step, at top level) */
  topLevelBefore: number;
  depth: number;
  /** an approval here could wait while another does (parallel, forEach with concurrency > 1) */
  concurrent: boolean;
  /** the step kinds by type */
  kinds: ReadonlyMap<string, DefinitionStepKind>;
  /** the step types `retry` applies to: the kinds the runStep activity runs, built in and registered */
  retryable: readonly string[];
}

/**
 * An upper bound of how deep jsonata's parser will recurse over `text`, without tokenizing it:
 * brackets open and close a level; `?` and `:=` open one that lasts to the end of the enclosing
 * bracket or list item. Inside what may be a string, a comment or a regular expression (where a
 * quote may not start a string after all), brackets and `?` only ever add, so no text can hide
 * its nesting by looking like a string.
 */
export function expressionNesting(text: string): number {
  const pending: number[] = [0]; // per open bracket: the conditionals and bindings open in it
  let open = 0;
  let inQuotes = 0;
  let max = 0;
  let i = 0;
  const bump = (): void => {
    max = Math.max(max, pending.length - 1 + open + inQuotes);
  };
  while (i < text.length) {
    const c = text[i]!;
    const quote = c === '"' || c === "'" || c === '`' ? c : c === '/' && text[i + 1] === '*' ? '*/' : undefined;
    if (quote !== undefined) {
      // a string, a name in backquotes or a comment: to its end, counting what might open a level
      for (i += quote.length; i < text.length && !text.startsWith(quote, i); i++) {
        if (text[i] === '\\' && quote !== '*/') i++;
        else if ('([{?'.includes(text[i]!)) {
          inQuotes++;
          bump();
        }
      }
      i += quote.length;
      continue;
    }
    if (c === '\\') {
      i += 2; // an escaped character of a regular expression
      continue;
    }
    if (c === '(' || c === '[' || c === '{') pending.push(0);
    else if ((c === ')' || c === ']' || c === '}') && pending.length > 1) open -= pending.pop()!;
    else if (c === ',' || c === ';') {
      open -= pending[pending.length - 1]!;
      pending[pending.length - 1] = 0;
    } else if (c === '?' || (c === ':' && text[i + 1] === '=')) {
      pending[pending.length - 1]! += 1;
      open++;
    }
    bump();
    i++;
  }
  return max;
}

/** How many objects deep a syntax tree goes, measured without recursion, up to `limit + 1`. */
function treeDepthExceeds(tree: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[tree, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    const own = Array.isArray(node) ? depth : depth + 1;
    if (own > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, own]);
  }
  return false;
}

/**
 * Parses a JSONata expression; the error names the position of the problem. An expression nests
 * at most MAX_EXPRESSION_NESTING deep as text and EXPRESSION_STACK deep once parsed (as deep as
 * a run evaluates: jsonata's own guard stops a deeper evaluation).
 */
export function expressionProblem(expression: string): string | undefined {
  if (expressionNesting(expression) > MAX_EXPRESSION_NESTING) {
    return `nests deeper than ${MAX_EXPRESSION_NESTING} levels (brackets, and the conditionals and := bindings open within them)`;
  }
  let tree: unknown;
  try {
    tree = jsonata(expression).ast();
  } catch (err) {
    // jsonata's post-processing recurses along a chain of operators: how long a chain overflows
    // the stack depends on the Node line (5,000 `+` parse on 20 and not on 26); either way too deep
    if (err instanceof RangeError) return `nests deeper than the ${EXPRESSION_STACK} levels a run evaluates (a chain of operators counts one level each)`;
    const position = fieldOf(err, 'position');
    return `does not parse as JSONata${position === undefined ? '' : ` (at character ${String(position)})`}: ${String(fieldOf(err, 'message') ?? String(err))}`;
  }
  if (treeDepthExceeds(tree, EXPRESSION_STACK)) return `nests deeper than the ${EXPRESSION_STACK} levels a run evaluates (a chain of operators counts one level each)`;
  return undefined;
}

type Reference = { kind: 'steps' | 'local'; index: string };

/** References of `steps.\`N\``, `local.\`N\`` and `$step("N…")` in an expression's syntax tree (walked without recursion). */
function references(tree: unknown): Reference[] {
  const found: Reference[] = [];
  const stack: unknown[] = [tree];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      stack.push(...[...node].reverse());
      continue;
    }
    // a jsonata syntax tree node: {type, value, steps, procedure, arguments, …}
    const type = fieldOf(node, 'type');
    const steps = fieldOf(node, 'steps');
    if (type === 'path' && Array.isArray(steps) && steps.length >= 2) {
      const [head, next]: unknown[] = steps;
      const kind = fieldOf(head, 'value');
      if (fieldOf(head, 'type') === 'name' && (kind === 'steps' || kind === 'local') && fieldOf(next, 'type') === 'name') {
        found.push({ kind, index: String(fieldOf(next, 'value')) });
      }
    }
    const procedure = fieldOf(node, 'procedure');
    const args = fieldOf(node, 'arguments');
    const first: unknown = Array.isArray(args) ? args[0] : undefined;
    if (type === 'function' && fieldOf(procedure, 'type') === 'variable' && fieldOf(procedure, 'value') === 'step' && fieldOf(first, 'type') === 'string') {
      found.push({ kind: 'steps', index: String(fieldOf(first, 'value')).split('.')[0] ?? '' });
    }
    stack.push(...Object.values(node).filter((value) => value !== null && typeof value === 'object').reverse());
  }
  return found;
}

function checkExpression(expression: string, path: FlowProblem['path'], ctx: ListContext, siblingsBefore: number, problems: FlowProblem[]): void {
  const problem = expressionProblem(expression);
  if (problem) {
    problems.push({ path, message: problem });
    return;
  }
  for (const ref of references(jsonata(expression).ast())) {
    const n = Number(ref.index);
    // Inside a construct, `steps.<its index>` reaches its own inner steps (`steps.3.2.1`).
    const limit = ref.kind === 'steps' ? ctx.topLevelBefore + (ctx.depth > 0 ? 1 : 0) : siblingsBefore;
    if (!Number.isInteger(n) || n < 1 || n > limit) {
      const seen = limit === 0 ? 'none' : limit === 1 ? '1' : `1 to ${limit}`;
      problems.push({ path, message: `refers to ${ref.kind}.${ref.index}, which this step cannot see (earlier ${ref.kind === 'steps' ? 'top-level steps' : 'steps of this list'}: ${seen})` });
    }
  }
}

function checkList(steps: StepLike[], path: FlowProblem['path'], ctx: ListContext, problems: FlowProblem[]): void {
  steps.forEach((step, i) => {
    const at = [...path, i];
    const own: ListContext = ctx.depth === 0 ? { ...ctx, topLevelBefore: i } : ctx;
    if (step.if !== undefined) checkExpression(step.if, [...at, 'if'], own, i, problems);
    if (step.retry !== undefined && !ctx.retryable.includes(step.type)) {
      const named = `${ctx.retryable.slice(0, -1).join(', ')} and ${ctx.retryable.at(-1)}`;
      problems.push({ path: [...at, 'retry'], message: `retry applies to ${named} steps, not ${step.type}` });
    }
    for (const problem of ctx.kinds.get(step.type)?.problems?.(step, { concurrent: ctx.concurrent }) ?? []) {
      problems.push({ path: [...at, ...problem.path], message: problem.message });
    }
    const nested = (list: StepLike[], listPath: FlowProblem['path'], concurrent: boolean): void => {
      if (ctx.depth + 1 > MAX_NESTING_DEPTH) {
        problems.push({ path: listPath, message: `step lists nest at most ${MAX_NESTING_DEPTH} deep` });
        return;
      }
      checkList(list, listPath, { ...ctx, topLevelBefore: own.topLevelBefore, depth: ctx.depth + 1, concurrent: ctx.concurrent || concurrent }, problems);
    };
    switch (step.type) {
      case 'branch':
        step.cases?.forEach((c, k) => {
          checkExpression(c.if, [...at, 'cases', k, 'if'], own, i, problems);
          nested(c.steps, [...at, 'cases', k, 'steps'], false);
        });
        if (step.default) nested(step.default, [...at, 'default'], false);
        break;
      case 'forEach':
        if (step.items !== undefined) checkExpression(step.items, [...at, 'items'], own, i, problems);
        if (step.steps) nested(step.steps, [...at, 'steps'], (step.concurrency ?? 1) > 1);
        break;
      case 'parallel':
        step.branches?.forEach((b, k) => nested(b.steps, [...at, 'branches', k, 'steps'], true));
        break;
    }
  });
}

/** `kinds`: every step kind by type, in the order definitionSchemas lists them (which the message on `retry` keeps). */
export function flowProblems(steps: StepLike[], kinds: ReadonlyMap<string, DefinitionStepKind>): FlowProblem[] {
  const problems: FlowProblem[] = [];
  const retryable = [...kinds.values()].filter((kind) => kind.runsIn !== 'workflow').map((kind) => kind.type);
  checkList(steps, ['steps'], { topLevelBefore: 0, depth: 0, concurrent: false, kinds, retryable }, problems);
  return problems;
}
