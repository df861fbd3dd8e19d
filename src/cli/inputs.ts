/** Reading documents (JSON or YAML files, or stdin) and `k=v` pairs for commands. */
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { CliError, EXIT } from './errors';

export function readText(file: string): string {
  try {
    return file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`, EXIT.USAGE);
  }
}

/** A JSON or YAML document (YAML is a superset of JSON, so one parser reads both). */
export function readDocument(file: string): unknown {
  try {
    return YAML.parse(readText(file));
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`${file} is neither JSON nor YAML: ${err instanceof Error ? err.message : String(err)}`, EXIT.USAGE);
  }
}

/** `k=v` pairs; a value that parses as JSON (numbers, booleans, objects) is taken as such, else as a string. */
export function parsePairs(pairs: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new CliError(`expected key=value, got ${JSON.stringify(pair)}`, EXIT.USAGE);
    const raw = pair.slice(at + 1);
    let value: unknown = raw;
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
