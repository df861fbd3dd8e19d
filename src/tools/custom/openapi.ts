/**
 * Tools from an OpenAPI 3.0 or 3.1 document: one per operation. The document is parsed (JSON or
 * YAML), validated and dereferenced by swagger-parser with external references turned off (a
 * `$ref` to a URL would be an outbound request on a customer's behalf); cycles left by recursive
 * schemas are cut where a schema would contain itself. Arguments: the path, query and header
 * parameters by name, and the JSON request body as `body`.
 *
 * One piece (over 300 lines): parsing, the bounds on what $refs make of a document, and turning
 * operations into tools are one pass over one dereferenced document; split, each part would re-walk it.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { z } from 'zod';
import { DocumentTextError, parseDocumentText, tooDeepText, type DocumentTextLimits } from '../../documents/text';
import { MAX_JSON_DEPTH } from '../../common/json-depth';
import { jsonShapeProblem } from '../../documents/json-shape';
import type { JsonSchemaObject } from '../server';
import { MAX_COMPILED_SCHEMA_DEPTH, resolvedProblem } from '../../documents/resolved-shape';
import { fieldOf, isRecord } from '../../common/narrow';

export const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;
/**
 * A document nests as deep as a JSON body may (text or object alike), holds at most as many
 * values as its largest text has bytes, and is stored as JSON of at most four times that, however
 * often YAML aliases repeat a part of it.
 */
const DOCUMENT_LIMITS: DocumentTextLimits = { maxDepth: MAX_JSON_DEPTH, maxValues: MAX_DOCUMENT_BYTES, maxChars: 4 * MAX_DOCUMENT_BYTES, maxAliasCount: 100 };
/**
 * What swagger-parser may make of it by following `$ref`s (src/tools/custom/resolved-shape.ts):
 * its dereferencer recurses once per level (a chain of 600 schemas each referring to the next
 * overflowed the stack), and its validator walks the resolved tree.
 */
const RESOLVED_LIMITS = { maxDepth: 400, maxValues: 2 * MAX_DOCUMENT_BYTES };
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const TOOL_NAME_MAX = 64;

export type ParameterLocation = 'path' | 'query' | 'header';

export interface OperationParameter {
  /** the argument's name in the tool's input */
  argument: string;
  /** the parameter's name on the wire */
  name: string;
  in: ParameterLocation;
  /** query only: form-style arrays repeat the name (explode, the default) or join with commas */
  explode: boolean;
  required: boolean;
}

export interface GeneratedOperation {
  toolName: string;
  description: string;
  method: string;
  /** the path template, e.g. `/pet/{petId}` */
  path: string;
  parameters: OperationParameter[];
  /** the media type a body is sent as, when the operation takes one */
  bodyType?: 'json' | 'form';
  bodyRequired: boolean;
  /** without PCID (the server adds it) */
  inputSchema: JsonSchemaObject;
}

export interface GeneratedApi {
  title: string;
  description: string;
  /** the document as JSON text, which is what is stored */
  source: string;
  operations: GeneratedOperation[];
}

/** A document that cannot become a server; the message is meant for the person who sent it. */
export class OpenApiDocumentError extends Error {
  override readonly name = 'OpenApiDocumentError';
}

const ParameterSchema = z.object({
  name: z.string().min(1),
  in: z.string(),
  required: z.boolean().optional(),
  description: z.string().optional(),
  explode: z.boolean().optional(),
  style: z.string().optional(),
  schema: z.record(z.string(), z.unknown()).optional(),
  deprecated: z.boolean().optional(),
});

const OperationSchema = z.object({
  operationId: z.string().optional(),
  summary: z.string().optional(),
  description: z.string().optional(),
  parameters: z.array(z.unknown()).optional(),
  requestBody: z.object({
    required: z.boolean().optional(),
    description: z.string().optional(),
    content: z.record(z.string(), z.object({ schema: z.record(z.string(), z.unknown()).optional() }).loose()).optional(),
  }).loose().optional(),
}).loose();

const DocumentHeadSchema = z.object({
  openapi: z.string().optional(),
  swagger: z.string().optional(),
  info: z.object({ title: z.string().optional(), description: z.string().optional() }).loose().optional(),
}).loose();

/** The document as an object: a JSON or YAML text, or an already parsed JSON value. */
export function readDocument(input: unknown): Record<string, unknown> {
  let value = input;
  if (typeof input === 'string') {
    if (Buffer.byteLength(input) > MAX_DOCUMENT_BYTES) throw new OpenApiDocumentError(`the document is larger than ${MAX_DOCUMENT_BYTES} bytes`);
    try {
      value = parseDocumentText(input, DOCUMENT_LIMITS);
    } catch (error) {
      if (error instanceof DocumentTextError) throw new OpenApiDocumentError(error.message);
      throw error;
    }
  } else {
    const problem = jsonShapeProblem(value, DOCUMENT_LIMITS);
    if (problem === 'depth') throw new OpenApiDocumentError(tooDeepText(DOCUMENT_LIMITS.maxDepth));
    if (problem === 'size') throw new OpenApiDocumentError(`the document holds more than ${DOCUMENT_LIMITS.maxValues} values or ${DOCUMENT_LIMITS.maxChars} characters of JSON`);
  }
  if (!isRecord(value)) throw new OpenApiDocumentError('the document must be an OpenAPI object');
  return value;
}

/** What swagger-parser's validate() takes: typed as a document already valid. */
type SwaggerDocument = NonNullable<Parameters<SwaggerParser.ApiCallback>[1]>;

/**
 * A document that says which OpenAPI it is (the head checked by DocumentHeadSchema): enough to be
 * handed to validate(), whose whole purpose is to check the rest.
 */
function saysOpenApi(value: unknown): value is SwaggerDocument {
  return typeof fieldOf(value, 'openapi') === 'string';
}

/** zod's issues as one line for the sender: `info.title: Invalid input: expected string, received number` */
function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || 'document'}: ${issue.message}`).join('; ');
}

export async function generateApi(input: unknown): Promise<GeneratedApi> {
  const document = readDocument(input);
  const parsedHead = DocumentHeadSchema.safeParse(document);
  if (!parsedHead.success) throw new OpenApiDocumentError(`the document is not a valid OpenAPI document: ${describeIssues(parsedHead.error)}`);
  const head = parsedHead.data;
  if (head.swagger !== undefined) {
    throw new OpenApiDocumentError(`Swagger ${head.swagger} documents are not accepted: convert it to OpenAPI 3 first (for example with swagger2openapi, or the converter at converter.swagger.io)`);
  }
  if (head.openapi === undefined || !/^3\.[01]\.\d+$/.test(head.openapi)) {
    throw new OpenApiDocumentError(`only OpenAPI 3.0 and 3.1 documents are accepted (the document says openapi: ${head.openapi ?? 'nothing'})`);
  }
  const resolved = resolvedProblem(document, RESOLVED_LIMITS);
  if (resolved === 'depth') {
    throw new OpenApiDocumentError(`the document nests deeper than ${RESOLVED_LIMITS.maxDepth} levels once its $refs are followed (a long chain of schemas each referring to the next, or $refs pointing at each other)`);
  }
  if (resolved === 'size') {
    throw new OpenApiDocumentError(`the document grows past ${RESOLVED_LIMITS.maxValues} values once its $refs are resolved (schemas referring several times to schemas that do the same)`);
  }
  const source = JSON.stringify(document);
  let api: Record<string, unknown>;
  try {
    // validate() parses a copy, checks it against the OpenAPI schema and dereferences it
    const copy = structuredClone(document);
    if (!saysOpenApi(copy)) throw new Error('the document names no openapi version');
    const validated: unknown = await SwaggerParser.validate(copy, {
      resolve: { external: false, http: false, file: false },
      dereference: { circular: true },
    });
    if (!isRecord(validated)) throw new Error('validation answered no document');
    api = validated;
  } catch (error) {
    throw new OpenApiDocumentError(`the document is not a valid OpenAPI document: ${error instanceof Error ? error.message : String(error)}`);
  }
  const operations = listOperations(api, { values: TOOL_SCHEMA_LIMITS.maxValues });
  return { title: head.info?.title ?? 'API', description: head.info?.description ?? '', source, operations };
}

function listOperations(api: Record<string, unknown>, budget: SchemaBudget): GeneratedOperation[] {
  const paths = z.record(z.string(), z.record(z.string(), z.unknown())).catch({}).parse(api.paths ?? {});
  const operations: GeneratedOperation[] = [];
  const taken = new Set<string>();
  for (const [path, item] of Object.entries(paths)) {
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of METHODS) {
      const parsed = OperationSchema.safeParse(item[method]);
      if (item[method] === undefined || !parsed.success) continue;
      const operation = parsed.data;
      const toolName = uniqueName(toolNameOf(operation.operationId, method, path), taken);
      operations.push(buildOperation(toolName, method, path, operation, [...shared, ...(operation.parameters ?? [])], budget));
    }
  }
  return operations;
}

function buildOperation(toolName: string, method: string, path: string, operation: z.infer<typeof OperationSchema>, rawParameters: unknown[], budget: SchemaBudget): GeneratedOperation {
  // an operation's own parameter replaces a path-level one with the same name and location
  const byKey = new Map<string, z.infer<typeof ParameterSchema>>();
  for (const raw of rawParameters) {
    const parameter = ParameterSchema.safeParse(raw);
    if (parameter.success) byKey.set(`${parameter.data.in}:${parameter.data.name}`, parameter.data);
  }
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const parameters: OperationParameter[] = [];
  for (const p of byKey.values()) {
    if (p.in !== 'path' && p.in !== 'query' && p.in !== 'header') continue; // cookies are the connection's business
    let argument = p.name;
    // own properties only: a parameter named `constructor` or `__proto__` is a name like any other
    if (Object.hasOwn(properties, argument) || argument === 'body' || argument === 'PCID') argument = `${p.in}_${p.name}`;
    const schema = { ...acyclic(p.schema ?? {}, budget) };
    if (p.description && typeof schema.description !== 'string') schema.description = p.description;
    Object.defineProperty(properties, argument, { value: schema, enumerable: true, writable: true, configurable: true });
    const isRequired = p.in === 'path' || p.required === true;
    if (isRequired) required.push(argument);
    parameters.push({ argument, name: p.name, in: p.in, explode: p.explode ?? (p.style === undefined || p.style === 'form'), required: isRequired });
  }
  let bodyType: GeneratedOperation['bodyType'];
  const content = operation.requestBody?.content ?? {};
  const jsonType = Object.keys(content).find((type) => /^application\/(.+\+)?json\b/i.test(type));
  const formType = Object.keys(content).find((type) => /^application\/x-www-form-urlencoded\b/i.test(type));
  const bodyMedia = jsonType ?? formType;
  if (bodyMedia !== undefined) {
    bodyType = jsonType ? 'json' : 'form';
    const schema = { ...acyclic(content[bodyMedia]?.schema ?? {}, budget) };
    if (operation.requestBody?.description && typeof schema.description !== 'string') schema.description = operation.requestBody.description;
    properties.body = schema;
    if (operation.requestBody?.required) required.push('body');
  }
  const description = [operation.summary, operation.description].filter((s): s is string => Boolean(s && s.trim())).join('\n\n')
    || `${method.toUpperCase()} ${path}`;
  return {
    toolName, description, method: method.toUpperCase(), path, parameters, bodyType, bodyRequired: required.includes('body'),
    inputSchema: { type: 'object', properties, required, additionalProperties: false },
  };
}

/** `operationId` when it makes a valid tool name, else `<method>_<path>`; letters, digits, `_` and `-`. */
export function toolNameOf(operationId: string | undefined, method: string, path: string): string {
  const clean = (text: string): string => text.replace(/[{}]/g, '').replace(/[^A-Za-z0-9_-]+/g, '_').replace(/_+/g, '_').replace(/^_|_$/g, '');
  const fromId = operationId === undefined ? '' : clean(operationId);
  const name = fromId !== '' ? fromId : clean(`${method}_${path}`) || method;
  return name.slice(0, TOOL_NAME_MAX);
}

function uniqueName(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let i = 2; taken.has(candidate); i++) candidate = `${name.slice(0, TOOL_NAME_MAX - String(i).length - 1)}_${i}`;
  taken.add(candidate);
  return candidate;
}

/**
 * What the tools' input schemas may add up to once `$ref`s are resolved and cycles cut: ajv
 * compiles each tool's schema when the server is registered (and again when a gateway loads it),
 * and compiling costs far more than reading, so the total is bounded. The depth bound keeps ajv's
 * recursive compiler far from the end of the stack.
 */
export const TOOL_SCHEMA_LIMITS = { maxDepth: MAX_COMPILED_SCHEMA_DEPTH, maxValues: 100_000 };

/** What is left of TOOL_SCHEMA_LIMITS.maxValues while one document's tools are built. */
export interface SchemaBudget {
  values: number;
}

/**
 * A copy of a dereferenced schema without object cycles: where a schema would contain itself (a
 * tree node's `children`), the inner one becomes an unconstrained schema that says so. The JSON
 * Schema of a tool must be plain JSON, and callers gain little from more depth. Copied without
 * recursion, at most TOOL_SCHEMA_LIMITS.maxDepth deep, spending `budget` one value at a time: a
 * schema that shares its parts (twenty schemas each referring twice to the next) would otherwise
 * copy into millions of values.
 */
export function acyclic(schema: Record<string, unknown>, budget: SchemaBudget = { values: TOOL_SCHEMA_LIMITS.maxValues }): Record<string, unknown> {
  interface Frame { source: object; copy: Record<string, unknown> | unknown[]; entries: [string, unknown][]; next: number }
  const ancestors = new Set<object>();
  const spend = (): void => {
    if (--budget.values < 0) {
      throw new OpenApiDocumentError(`the tools' input schemas hold more than ${TOOL_SCHEMA_LIMITS.maxValues} values once $refs are resolved (schemas shared by many operations count once per use)`);
    }
  };
  const open = (value: object): Frame => {
    ancestors.add(value);
    const entries: [string, unknown][] = Array.isArray(value) ? value.map((item, i) => [String(i), item]) : Object.entries(value);
    return { source: value, copy: Array.isArray(value) ? [] : {}, entries, next: 0 };
  };
  spend();
  const root = open(schema);
  const stack: Frame[] = [root];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    if (frame.next === frame.entries.length) {
      stack.pop();
      ancestors.delete(frame.source);
      continue;
    }
    const [name, value] = frame.entries[frame.next++]!;
    const key = Array.isArray(frame.source) ? undefined : name;
    spend();
    let copied: unknown = value;
    if (typeof value === 'object' && value !== null) {
      if (ancestors.has(value)) {
        // the dereferencer may share a map of schemas (`properties`) rather than the schema itself
        const title = fieldOf(value, 'title');
        copied = key !== undefined && SCHEMA_MAPS.has(key) ? {} : { description: `recursive: the same shape as its enclosing ${typeof title === 'string' ? title : 'schema'}` };
      } else {
        if (stack.length >= TOOL_SCHEMA_LIMITS.maxDepth) {
          throw new OpenApiDocumentError(`a tool's input schema nests deeper than ${TOOL_SCHEMA_LIMITS.maxDepth} levels once $refs are resolved`);
        }
        const child = open(value);
        stack.push(child);
        copied = child.copy;
      }
    }
    if (Array.isArray(frame.copy)) frame.copy.push(copied);
    else Object.defineProperty(frame.copy, name, { value: copied, enumerable: true, writable: true, configurable: true });
  }
  return Array.isArray(root.copy) ? {} : root.copy;
}

/** keywords whose value is a map of names to schemas, not a schema */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions']);
