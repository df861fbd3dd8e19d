/** Reading documents (JSON or YAML files, or stdin) and `k=v` pairs for commands. */
import { readFileSync } from 'node:fs';
import { DocumentTextError, parseDocumentText } from '../documents/text';
import { MAX_JSON_DEPTH } from '../common/json-depth';
import { CliError, EXIT } from './errors';

/** what the server would accept anyway: a JSON body nests at most MAX_JSON_DEPTH levels */
const DOCUMENT_LIMITS = { maxDepth: MAX_JSON_DEPTH, maxValues: 1_000_000, maxChars: 64 * 1024 * 1024, maxAliasCount: 100 };

export function readText(file: string): string {
  try {
    return file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`, EXIT.USAGE);
  }
}

/** A JSON or YAML document, read without recursing over its nesting (src/documents/text.ts). */
export function readDocument(file: string): unknown {
  const text = readText(file);
  try {
    return parseDocumentText(text, DOCUMENT_LIMITS);
  } catch (err) {
    if (err instanceof DocumentTextError) throw new CliError(`${file}: ${err.message}`, EXIT.USAGE);
    throw err;
  }
}

/** `k=v` pairs; a value that parses as JSON (numbers, booleans, objects) is taken as such, else as a string. */
export function parsePairs(pairs: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new CliError(`expected key=value, got ${JSON.stringify(pair)}`, EXIT.USAGE);
    const raw = pair.slice(at + 1);
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
    out[pair.slice(0, at)] = value;
  }
  return out;
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
