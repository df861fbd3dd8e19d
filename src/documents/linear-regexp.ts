/**
 * Regular expressions of schemas that flowgate did not write (a workflow's `inputSchema`, an
 * agent's `outputSchema`, the schemas of an OpenAPI document), for ajv's `code.regExp`. They run
 * on RE2 (re2js: linear time, and its parser refuses nesting deeper than 1,000), never on V8's
 * engine, where `^(a+)+$` stalls the event loop every organization shares and a pattern nested a
 * few thousand groups deep aborts the process: V8 compiles a pattern recursively, and a compile
 * that runs out of stack is fatal rather than an exception. RE2 has no look-around or
 * back-references.
 */
import { RE2JS } from 're2js';

type Matcher = { test(input: string): boolean };

/** A pattern RE2 cannot run throws (ajv reports the schema as unusable). */
export function linearRegExp(pattern: string, flags: string): Matcher {
  return RE2JS.compile(pattern, flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
}
linearRegExp.code = 'linearRegExp'; // named for Ajv's standalone code, which flowgate does not use

/**
 * For checks that are only a courtesy, such as a generated tool's arguments (the customer's API
 * checks them again): a pattern RE2 cannot run (look-around, back-references, too deep) is not
 * checked rather than run on V8 or refused.
 */
export function lenientLinearRegExp(pattern: string, flags: string): Matcher {
  try {
    return linearRegExp(pattern, flags);
  } catch {
    return { test: () => true };
  }
}
lenientLinearRegExp.code = 'lenientLinearRegExp';
