/**
 * `{{path}}` interpolation over a run's context (ARCHITECTURE.md). Pure and deterministic: the same
 * function serves workflow and activity code. Paths read `inputs.*`,
 * `steps.<index>.result|json|exitCode|status` (a nested step by its address: `steps.3.2.1.result`)
 * and `run.*`; inside a list also `local.<n>` (the list's own steps), and anywhere inside a forEach
 * item (branch and parallel lists in it included) `item` and `index`; a forEach nested in another's
 * item shadows them and reaches the enclosing ones as `outer.item`, `outer.index` (`outer.outer`…).
 * An unknown path renders as an empty string. Objects render as JSON.
 */
import { isObjectLike } from './narrow';
import type { ItemScope, StepScope } from './step-scope';

/** The run's fields the context shows (a RunInput, or a step request's `run`). */
export interface RunFacts {
  runId: string;
  automationId: string;
  automationVersion: number;
  triggerId: string;
  started: string;
  inputs: Record<string, unknown> | '';
}

/** An earlier step as the context shows it (a PreviousStep, a VisibleStep or a StepOutcome). */
export interface EarlierStep {
  stepIndex: number;
  stepPath?: string;
  result: string;
  exitCode: number;
  status?: string;
}

export interface StepView {
  result: string;
  json: unknown;
  exitCode: number;
  status: string;
}

/** A step's view, and (for a step with lists) its nested steps by list and position: `steps.3.2.1`. */
type StepsTree = Record<string, Partial<StepView> & Record<string, unknown>>;

export interface InterpolationContext {
  inputs: Record<string, unknown> | '';
  steps: StepsTree;
  run: { id: string; automationId: string; automationVersion: number; triggerId: string; started: string };
  local?: unknown;
  item?: unknown;
  index?: number;
  outer?: ItemScope;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_$.\-[\]]+)\s*\}\}/g;

export function buildContext(run: RunFacts, previous: readonly EarlierStep[], scope?: StepScope): InterpolationContext {
  const steps: StepsTree = {};
  for (const outcome of previous) {
    const view: StepView = {
      result: outcome.result, json: parseJson(outcome.result), exitCode: outcome.exitCode,
      status: outcome.status ?? (outcome.exitCode === 0 ? 'COMPLETE' : 'FAILED'),
    };
    const address = (outcome.stepPath ?? String(outcome.stepIndex)).split('.');
    let node: Record<string, unknown> = steps;
    for (const segment of address.slice(0, -1)) {
      const next = node[segment];
      if (isObjectLike(next)) {
        node = next;
      } else {
        const created: Record<string, unknown> = {};
        node[segment] = created;
        node = created;
      }
    }
    const last = address[address.length - 1]!;
    const existing = node[last];
    node[last] = existing !== null && typeof existing === 'object' ? Object.assign(existing, view) : view;
  }
  const context: InterpolationContext = {
    inputs: run.inputs,
    steps,
    run: { id: run.runId, automationId: run.automationId, automationVersion: run.automationVersion, triggerId: run.triggerId, started: run.started },
  };
  if (scope) {
    context.local = lookup(context, `steps.${scope.prefix}`) ?? {};
    if (scope.index !== undefined) Object.assign(context, { item: scope.item, index: scope.index });
    if (scope.outer !== undefined) context.outer = scope.outer;
  }
  return context;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Splits `a.b[0].c` into `['a', 'b', '0', 'c']`. */
function pathSegments(path: string): string[] {
  return path.replace(/\[(\w+)\]/g, '.$1').split('.').filter((s) => s.length > 0);
}

export function lookup(context: InterpolationContext, path: string): unknown {
  let value: unknown = context;
  for (const segment of pathSegments(path)) {
    if (!isObjectLike(value) || !Object.prototype.hasOwnProperty.call(value, segment)) return undefined;
    value = value[segment];
  }
  return value;
}

export function render(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

export function interpolate(template: string, context: InterpolationContext): string {
  return template.replace(PLACEHOLDER, (_match, path: string) => render(lookup(context, path)));
}

/** Interpolates every string leaf of a JSON-like value; a string that is exactly one placeholder keeps the value's type. */
export function interpolateDeep(value: unknown, context: InterpolationContext): unknown {
  if (typeof value === 'string') {
    const whole = /^\{\{\s*([A-Za-z0-9_$.\-[\]]+)\s*\}\}$/.exec(value);
    if (whole?.[1]) return lookup(context, whole[1]) ?? null;
    return interpolate(value, context);
  }
  if (Array.isArray(value)) return value.map((v) => interpolateDeep(v, context));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateDeep(v, context)]));
  }
  return value;
}
