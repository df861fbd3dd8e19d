/**
 * An agent's `outputSchema`: checked to compile when the agent is saved, and used to validate the
 * final answer. Validators are cached per agent version (id and updatedAt).
 */
import Ajv, { type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { linearRegExp } from '../documents/linear-regexp';
import { MAX_COMPILED_SCHEMA_DEPTH, schemaDepthExceeds } from '../documents/resolved-shape';

const CACHE_SIZE = 200;
const cache = new Map<string, ValidateFunction>();

/**
 * `pattern` runs on RE2 (src/documents/linear-regexp.ts); a schema using look-around is refused when saved,
 * and so is one too deep for ajv's recursive compiler once its `$ref`s are followed.
 */
function compile(schema: Record<string, unknown>): ValidateFunction {
  if (schemaDepthExceeds(schema, MAX_COMPILED_SCHEMA_DEPTH)) {
    throw new Error(`it nests deeper than ${MAX_COMPILED_SCHEMA_DEPTH} levels once its $refs are followed`);
  }
  const options = { allErrors: true, strict: false, code: { regExp: linearRegExp } };
  const ajv = typeof schema.$schema === 'string' && schema.$schema.includes('2020-12') ? new Ajv2020(options) : new Ajv(options);
  addFormats(ajv);
  return ajv.compile(schema);
}

/** Why the schema cannot be used, or undefined when it can. */
export function outputSchemaProblem(schema: Record<string, unknown>): string | undefined {
  try {
    compile(schema);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export type OutputCheck = { ok: true; value: unknown } | { ok: false; problem: string };

/** Parses the answer as JSON (a fenced ```json block too) and validates it against the schema. */
export function checkOutput(cacheKey: string, schema: Record<string, unknown>, answer: string): OutputCheck {
  let validate = cache.get(cacheKey);
  if (!validate) {
    try {
      validate = compile(schema);
    } catch (error) {
      // an agent saved before a rule tightened (say, look-around before patterns ran on RE2)
      return { ok: false, problem: `the agent's outputSchema cannot be used: ${error instanceof Error ? error.message : String(error)}` };
    }
    const oldest = cache.keys().next();
    if (cache.size >= CACHE_SIZE && !oldest.done) cache.delete(oldest.value);
    cache.set(cacheKey, validate);
  }
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/.exec(answer);
  let value: unknown;
  try {
    value = JSON.parse(fenced ? fenced[1]! : answer);
  } catch {
    return { ok: false, problem: 'the answer is not JSON' };
  }
  if (validate(value)) return { ok: true, value };
  const problems = (validate.errors ?? []).slice(0, 10).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`);
  return { ok: false, problem: `the answer does not match the output schema: ${problems.join('; ')}` };
}
