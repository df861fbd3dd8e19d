/**
 * Tool arguments mirrored into HTTP headers (SEP-2243, "Custom Headers from Tool Parameters" of the
 * 2026-07-28 Streamable HTTP binding): a tool's `inputSchema` may mark a property with
 * `"x-mcp-header": "<Name>"`, and a 2026 `tools/call` of that tool then carries the argument again
 * as the header `Mcp-Param-<Name>`, so that a load balancer or gateway can route on it without
 * reading the body. flowgate uses it on both sides:
 *   - as a client of a 2026 remote (remote-mcp.ts): paramHeaders() of a call's arguments;
 *   - as a server (modern.ts): paramHeaderMismatch() refuses a call whose headers disagree with its
 *     body, or lack one for an argument the body carries (-32020, HTTP 400).
 * A declaration (scanDeclarations) names an RFC 9110 token, unique in the schema ignoring case, on a
 * property of type integer, string or boolean (not number) that the root reaches through
 * `properties` alone (never through items, oneOf/anyOf/allOf/not, if/then/else, $defs, ...). One
 * broken declaration makes the whole schema invalid: a client drops the tool.
 * A value is sent as text (a string as it is, an integer in decimal, a boolean as true/false), in
 * the `=?base64?…?=` sentinel (UTF-8, padded Base64) when it is not plain visible ASCII without
 * spaces at its ends or looks like the sentinel itself; null, absent, or not of the declared type
 * (an unsafe integer included): no header. The sentinel's markers are lowercase and case-sensitive.
 */
import { isOneOf } from '../../common/narrow';

/** Where the custom headers' names begin (lowercased, as Node hands request headers over). */
export const PARAM_HEADER_PREFIX = 'mcp-param-';

const DECLARATION_KEY = 'x-mcp-header';
/** RFC 9110 `token` (1*tchar): no space, no control character, none of the delimiters. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_TYPES = ['integer', 'string', 'boolean'] as const;
/** Deeper schemas are refused rather than walked (a remote's schema is untrusted input). */
const MAX_DEPTH = 64;

/** Keywords whose value is one subschema, a list of them, or a map of them: not a static path to a property. */
const ONE_SUBSCHEMA = ['items', 'additionalItems', 'contains', 'propertyNames', 'additionalProperties', 'unevaluatedItems',
  'unevaluatedProperties', 'not', 'if', 'then', 'else', 'contentSchema'];
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
const SUBSCHEMA_MAPS = ['$defs', 'definitions', 'dependentSchemas', 'dependencies', 'patternProperties'];

export interface ParamDeclaration {
  /** the name after `Mcp-Param-`, as the schema spells it */
  header: string;
  /** the chain of `properties` keys from the root to the annotated property */
  path: readonly string[];
  type: (typeof HEADER_TYPES)[number];
}

export type ParamScan = { valid: true; declarations: readonly ParamDeclaration[] } | { valid: false; reason: string };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const where = (path: readonly string[]): string => `arguments.${path.join('.')}`;

/** One annotation read: the declaration it makes, or the reason it is invalid. */
function readDeclaration(node: Record<string, unknown>, path: readonly string[] | undefined): ParamDeclaration | string {
  const header = node[DECLARATION_KEY];
  const type = node.type;
  if (path === undefined) return `an ${DECLARATION_KEY} is on a schema the root does not reach through properties alone (items, oneOf, $defs, ...)`;
  if (path.length === 0) return `an ${DECLARATION_KEY} is on the schema's root, not on a property`;
  if (typeof header !== 'string' || !TOKEN.test(header)) return `the ${DECLARATION_KEY} of ${where(path)} is not an HTTP token: ${JSON.stringify(header)}`;
  if (!isOneOf(HEADER_TYPES, type)) {
    return `the ${DECLARATION_KEY} ${header} is on ${where(path)} of type ${JSON.stringify(type ?? null)}: only integer, string and boolean properties may be mirrored`;
  }
  return { header, path, type };
}

/** The subschemas of a node that are not its `properties`: none of them is a static path. */
function otherSubschemas(node: Record<string, unknown>): unknown[] {
  const found: unknown[] = [];
  for (const key of ONE_SUBSCHEMA) if (isRecord(node[key])) found.push(node[key]);
  for (const key of SUBSCHEMA_LISTS) if (Array.isArray(node[key])) found.push(...node[key]);
  for (const key of SUBSCHEMA_MAPS) if (isRecord(node[key])) found.push(...Object.values(node[key]));
  return found;
}

/**
 * Scans already made, by schema object: a remote tool's listed schema is scanned on every call to
 * it (the gateway's check and the headers it sends on), and a listed schema is never changed in
 * place (a new list brings new objects).
 */
const scanned = new WeakMap<object, ParamScan>();

/** The `x-mcp-header` declarations of an input schema, or why the schema is invalid. */
export function scanDeclarations(schema: unknown): ParamScan {
  if (!isRecord(schema)) return scanSchema(schema);
  let scan = scanned.get(schema);
  if (scan === undefined) {
    scan = scanSchema(schema);
    scanned.set(schema, scan);
  }
  return scan;
}

function scanSchema(schema: unknown): ParamScan {
  const declarations: ParamDeclaration[] = [];
  const names = new Set<string>();
  const visit = (node: unknown, path: readonly string[] | undefined, depth: number): string | undefined => {
    if (!isRecord(node)) return undefined;
    if (depth > MAX_DEPTH) return `the input schema is nested more than ${MAX_DEPTH} levels deep`;
    if (Object.hasOwn(node, DECLARATION_KEY)) {
      const declaration = readDeclaration(node, path);
      if (typeof declaration === 'string') return declaration;
      const { header } = declaration;
      if (names.has(header.toLowerCase())) return `the ${DECLARATION_KEY} ${header} is declared twice (names are compared ignoring case)`;
      names.add(header.toLowerCase());
      declarations.push(declaration);
    }
    const properties = isRecord(node.properties) ? Object.entries(node.properties) : [];
    for (const [key, child] of properties) {
      const problem = visit(child, path === undefined ? undefined : [...path, key], depth + 1);
      if (problem) return problem;
    }
    for (const child of otherSubschemas(node)) {
      const problem = visit(child, undefined, depth + 1);
      if (problem) return problem;
    }
    return undefined;
  };
  const reason = visit(schema, [], 0);
  return reason === undefined ? { valid: true, declarations } : { valid: false, reason };
}

/** A header value for `text`: as it is when plain, else in the Base64 sentinel (also the rule of `Mcp-Name`). */
export function encodeHeaderValue(text: string): string {
  const plain = text !== '' && text === text.trim() && /^[\t\x20-\x7e]*$/.test(text) && !(text.startsWith('=?base64?') && text.endsWith('?='));
  return plain ? text : `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}

/** A received header value decoded from the Base64 sentinel (a value without both markers is literal); undefined when the Base64 is malformed. */
export function decodeHeaderValue(value: string): string | undefined {
  if (!(value.startsWith('=?base64?') && value.endsWith('?=') && value.length >= 11)) return value;
  const text = value.slice(9, -2);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  return Buffer.from(text, 'base64').toString('utf8');
}

/** The argument at a declaration's path, own properties only; undefined when absent. */
function valueAt(args: unknown, path: readonly string[]): unknown {
  let value = args;
  for (const key of path) {
    if (!isRecord(value) || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  return value;
}

/** A declared argument as header text; undefined for null, absent, or a value not of the declared type. */
function textOf(value: unknown, type: ParamDeclaration['type']): string | undefined {
  if (type === 'string') return typeof value === 'string' ? value : undefined;
  if (type === 'boolean') return typeof value === 'boolean' ? String(value) : undefined;
  return typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : undefined;
}

/** The `Mcp-Param-*` headers of a call (names lowercased) for its declarations and arguments. */
export function paramHeaders(declarations: readonly ParamDeclaration[], args: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const declaration of declarations) {
    const text = textOf(valueAt(args, declaration.path), declaration.type);
    if (text !== undefined) headers[`${PARAM_HEADER_PREFIX}${declaration.header.toLowerCase()}`] = encodeHeaderValue(text);
  }
  return headers;
}

/** The `Mcp-Param-*` headers of a request, by the name after the prefix lowercased (Node's header map). */
export function receivedParamHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const received: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!lower.startsWith(PARAM_HEADER_PREFIX) || value === undefined) continue;
    received[lower.slice(PARAM_HEADER_PREFIX.length)] = Array.isArray(value) ? value.join(', ') : value;
  }
  return received;
}

/** How a request's header and body disagree: for the HeaderMismatch error's message and data. */
export interface ParamMismatch {
  message: string;
  header: string;
  body: string;
}

/** Whether header text and an argument's text are the same value (integers compared as numbers: `42.0` is 42). */
function sameValue(header: string, body: string, type: ParamDeclaration['type']): boolean {
  if (type !== 'integer') return header === body;
  return /^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(header) && Number(header) === Number(body);
}

/**
 * How the request's `Mcp-Param-*` headers (`received`, see receivedParamHeaders) disagree with the
 * call's arguments: a header missing for an argument the body carries, one present for an argument
 * it does not, one with characters a header value may not hold or malformed Base64, or another
 * value. Undefined when they agree. Headers no declaration names are not looked at.
 */
export function paramHeaderMismatch(declarations: readonly ParamDeclaration[], args: unknown, received: Readonly<Record<string, string>>): ParamMismatch | undefined {
  for (const { header, path, type } of declarations) {
    const name = `Mcp-Param-${header}`;
    const expected = textOf(valueAt(args, path), type);
    const raw = received[header.toLowerCase()]?.replace(/^[ \t]+|[ \t]+$/g, '');
    if (raw === undefined) {
      if (expected === undefined) continue;
      return { message: `the body carries ${where(path)}=${JSON.stringify(expected)} but the required ${name} header is absent`, header: '(missing)', body: expected };
    }
    if (!/^[\t\x20-\x7e]*$/.test(raw)) return { message: `the ${name} header carries characters a header value may not hold`, header: raw, body: expected ?? '(absent)' };
    const decoded = decodeHeaderValue(raw);
    if (decoded === undefined) return { message: `the ${name} header carries an invalid Base64 sentinel value`, header: raw, body: expected ?? '(absent)' };
    if (expected === undefined) return { message: `the ${name} header is present but the body carries no ${type} at ${where(path)}`, header: raw, body: '(absent)' };
    if (!sameValue(decoded, expected, type)) return { message: `the body carries ${where(path)}=${JSON.stringify(expected)} but the ${name} header carries ${JSON.stringify(decoded)}`, header: raw, body: expected };
  }
  return undefined;
}
