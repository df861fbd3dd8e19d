/**
 * A JSON or YAML document given as text (an OpenAPI document, a workflow file of the CLI), parsed
 * without letting its nesting drive a recursion. JSON.parse is iterative, so JSON text is parsed
 * first and judged after; YAML's composer and its conversion to JavaScript recurse once per level,
 * and a stack overflow inside them can abort the whole process (V8 compiling a regular expression
 * with no stack left is fatal, not a RangeError), so YAML text is first read by the yaml package's
 * lexer and CST parser, which keep their own stack, and refused as soon as that stack is deeper
 * than the limit: the recursive steps only ever see a bounded document. The value is then judged
 * again, because YAML aliases can repeat (or nest inside themselves) what the text holds once.
 */
import { Composer, Lexer, LineCounter, Parser, type CST, type Document } from 'yaml';
import { jsonShapeProblem, type JsonShapeLimits } from './json-shape';

export interface DocumentTextLimits extends JsonShapeLimits {
  /** YAML aliases resolved at most (the yaml package's guard against exponential expansion) */
  maxAliasCount: number;
}

/** A text that is not a usable document; the message is meant for the person who sent it. */
export class DocumentTextError extends Error {
  override readonly name = 'DocumentTextError';
}

export function tooDeepText(maxDepth: number): string {
  return `the document nests deeper than ${maxDepth} levels of objects and arrays`;
}

/** The value of a JSON or YAML text within `limits`, else a DocumentTextError saying why. */
export function parseDocumentText(text: string, limits: DocumentTextLimits): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // YAML 1.2 is a superset of JSON: JSON with a mistake gets YAML's (more precise) message
    value = parseYaml(text, limits);
  }
  const problem = jsonShapeProblem(value, limits);
  if (problem === 'depth') throw new DocumentTextError(`${tooDeepText(limits.maxDepth)} (counting what YAML aliases repeat)`);
  if (problem === 'size') {
    const chars = limits.maxChars === undefined ? '' : ` or ${limits.maxChars} characters of JSON`;
    throw new DocumentTextError(`the document holds more than ${limits.maxValues} values${chars} (counting what YAML aliases repeat)`);
  }
  return value;
}

class TooDeep extends Error {}

function parseYaml(text: string, limits: DocumentTextLimits): unknown {
  const lines = new LineCounter();
  const parser = new Parser(lines.addNewLine);
  // the CST parser's stack holds the document, each open collection and at most one scalar
  const maxStack = limits.maxDepth + 2;
  function* tokens(): Generator<CST.Token> {
    lines.addNewLine(0);
    for (const lexeme of new Lexer().lex(text)) {
      yield* parser.next(lexeme);
      if (parser.stack.length > maxStack) throw new TooDeep();
    }
    yield* parser.end();
  }
  let documents: Document.Parsed[];
  try {
    documents = [...new Composer().compose(tokens(), true, text.length)];
  } catch (error) {
    if (error instanceof TooDeep) throw new DocumentTextError(tooDeepText(limits.maxDepth));
    throw error;
  }
  if (documents.length !== 1) throw new DocumentTextError('the text holds more than one YAML document');
  const document = documents[0]!;
  const error = document.errors[0];
  if (error) {
    const at = lines.linePos(error.pos[0]);
    throw new DocumentTextError(`the document is neither JSON nor YAML: ${error.message} (line ${at.line}, column ${at.col})`);
  }
  try {
    const value: unknown = document.toJS({ maxAliasCount: limits.maxAliasCount });
    return value;
  } catch (cause) {
    throw new DocumentTextError(`the document is neither JSON nor YAML: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}
