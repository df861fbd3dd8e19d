/**
 * Trigger inputs against the workflow's `inputSchema` (JSON Schema; draft-07 unless `$schema` names
 * 2019-09 or 2020-12). Inputs that arrived as text (query, form and multipart fields) are converted
 * to the types the schema asks for ("5" → 5 for an integer); JSON values are taken as sent.
 * Validators are compiled once per workflow version (versions are immutable).
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { linearRegExp } from '../documents/linear-regexp';
import { MAX_COMPILED_SCHEMA_DEPTH, schemaDepthExceeds } from '../documents/resolved-shape';
import { messageOf } from '../common/narrow';

const CACHE_SIZE = 500;
const MAX_REPORTED = 10;

type Compiled = { validate: ValidateFunction } | { error: string };
const cache = new Map<string, Compiled>();

/**
 * `pattern` and `patternProperties` run on RE2 (src/documents/linear-regexp.ts): a schema is written by one
 * organization and checked on the gateway every organization shares. A schema using look-around
 * or back-references is refused when the workflow is saved.
 */
function ajvFor(schema: Record<string, unknown>, coerce: boolean): Ajv {
  const options = { allErrors: true, strict: false, coerceTypes: coerce ? ('array' as const) : false, code: { regExp: linearRegExp } };
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  const ajv = dialect.includes('2020-12') ? new Ajv2020(options) : dialect.includes('2019-09') ? new Ajv2019(options) : new Ajv(options);
  addFormats(ajv);
  return ajv;
}

/** ajv's compiler recurses over the schema and the `$ref`s it follows: too deep a schema is refused before. */
function compile(schema: Record<string, unknown>, coerce: boolean): ValidateFunction {
  if (schemaDepthExceeds(schema, MAX_COMPILED_SCHEMA_DEPTH)) {
    throw new Error(`it nests deeper than ${MAX_COMPILED_SCHEMA_DEPTH} levels once its $refs are followed`);
  }
  return ajvFor(schema, coerce).compile(schema);
}

function compiled(cacheKey: string, schema: Record<string, unknown>, coerce: boolean): Compiled {
  const key = `${cacheKey}\n${coerce}`;
  const hit = cache.get(key);
  if (hit) return hit;
  let entry: Compiled;
  try {
    entry = { validate: compile(schema, coerce) };
  } catch (err) {
    entry = { error: messageOf(err) };
  }
  const oldest = cache.keys().next();
  if (cache.size >= CACHE_SIZE && !oldest.done) cache.delete(oldest.value);
  cache.set(key, entry);
  return entry;
}

/** Where an error is in the inputs, as segments (`/a/0/b` → ['a', 0, 'b']), the missing or extra property included; [] is the inputs themselves. */
function pathOf(error: ErrorObject): (string | number)[] {
  const segments: (string | number)[] = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  const params: Record<string, unknown> = error.params;
  const extra = error.keyword === 'required' ? params.missingProperty
    : error.keyword === 'additionalProperties' ? params.additionalProperty
      : error.keyword === 'dependentRequired' || error.keyword === 'dependencies' ? params.missingProperty : undefined;
  if (typeof extra === 'string') segments.push(extra);
  return segments;
}

/** ['a', 0, 'b'] → `a[0].b`; the root is `inputs`. */
function fieldName(path: readonly (string | number)[]): string {
  if (path.length === 0) return 'inputs';
  return path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}

/** What is wrong there, without naming where (`is required`, `must be integer`). */
function complaint(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required': return 'is required';
    case 'additionalProperties': return 'is not an accepted input';
    default: return error.message ?? 'is invalid';
  }
}

/** Why a workflow's `inputSchema` cannot be used (for the management API), or undefined when it can. */
export function inputSchemaProblem(schema: Record<string, unknown> | undefined): string | undefined {
  if (!schema) return undefined;
  try {
    compile(schema, false);
    return undefined;
  } catch (err) {
    return messageOf(err);
  }
}

/** One input that does not fit, where it is (the console puts the complaint beside its field). */
export interface InputsIssue {
  /** [] for the inputs as a whole */
  path: (string | number)[];
  /** without the field's name: `is required`, `must be integer` */
  message: string;
}

export type InputsProblem = { code: 'invalid_inputs' | 'invalid_input_schema'; message: string; issues?: InputsIssue[] };

/**
 * Validates (and, with `coerce`, converts in place) the inputs. Answers undefined when they fit,
 * else `invalid_inputs` naming the fields (each one also in `issues`), or `invalid_input_schema` when
 * the stored schema itself cannot be compiled. The gateway turns these into 422 and 409; a `trigger`
 * step into its failure.
 */
export function checkInputs(options: { cacheKey: string; schema: Record<string, unknown> | undefined; coerce: boolean },
  inputs: Record<string, unknown>): InputsProblem | undefined {
  if (!options.schema) return undefined;
  const entry = compiled(options.cacheKey, options.schema, options.coerce);
  if ('error' in entry) {
    return { code: 'invalid_input_schema', message: `the workflow's inputSchema is not a usable JSON Schema (${entry.error}); fix and republish the workflow` };
  }
  if (entry.validate(inputs)) return undefined;
  const issues = (entry.validate.errors ?? []).map((e) => ({ path: pathOf(e), message: complaint(e) }));
  const problems = [...new Set(issues.map((i) => `${fieldName(i.path)} ${i.message}`))];
  const shown = problems.slice(0, MAX_REPORTED).join('; ');
  const more = problems.length > MAX_REPORTED ? ` (and ${problems.length - MAX_REPORTED} more)` : '';
  return { code: 'invalid_inputs', message: `the inputs do not match the workflow's input schema: ${shown}${more}`, issues };
}
