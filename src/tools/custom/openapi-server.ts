/**
 * A generated server: the tools of an OpenAPI document, called on the customer's API with the
 * server's custom connection. Arguments are checked against the generated JSON Schema with ajv
 * (the schema is the customer's, not ours, so zod has nothing to say about it). A call builds
 * the request from the operation (path templating, query arrays, headers, a JSON or form body)
 * and answers the response: JSON as structured content, text as text, anything else as a blob.
 * The call's idempotency key, when it has one, is sent as `Idempotency-Key`.
 */
import { randomUUID } from 'node:crypto';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { lenientLinearRegExp } from '../../documents/linear-regexp';
import type { BufferedResponse } from '../../net/http-client';
import { pcidSchema, jsonSchemaOf } from '../define-tool';
import { ToolCallError, ToolFailure, type CallContext, type JsonSchemaObject, type ToolConnection, type ToolEntry, type ToolOutput, type ToolServer } from '../server';
import { parseBody, type CustomAuth } from './auth';
import { CUSTOM_APPLICATION, CustomCredentialsSchema, underBase } from './credentials';
import { sendToCustomerApi } from './customer-api';
import { outboundFailure } from './errors';
import type { GeneratedApi, GeneratedOperation } from './openapi';
import { fieldOf, isRecord } from '../../common/narrow';

const FILE_LINK_TTL_SECONDS = 24 * 3600;
/** header parameters a document may declare but the HTTP client owns */
const TRANSPORT_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect']);
/** how much of a failed answer's body a tool error carries */
const ERROR_BODY_CHARS = 4000;

export interface OpenApiServerSpec {
  id: string;
  description: string;
  connectionId: string;
  api: GeneratedApi;
  auth: CustomAuth;
  /** how a call's `PCID` is opened (kept briefly: registry-reads.ts); absent, the dispatcher reads it */
  openConnection?(orgId: string, pcid: string): Promise<ToolConnection | undefined>;
}

/**
 * A connection's credentials checked as a custom connection's, once per opened connection: a kept
 * connection (registry-reads.ts) is the same object for every call within its bound.
 */
const checkedCredentials = new WeakMap<object, ReturnType<typeof CustomCredentialsSchema.safeParse>>();

function customCredentialsOf(connection: ToolConnection): ReturnType<typeof CustomCredentialsSchema.safeParse> {
  let checked = checkedCredentials.get(connection.credentials);
  if (checked === undefined) {
    checked = CustomCredentialsSchema.safeParse(connection.credentials);
    checkedCredentials.set(connection.credentials, checked);
  }
  return checked;
}

interface Compiled {
  operation: GeneratedOperation;
  entry: ToolEntry;
  validate: ValidateFunction;
}

export function openApiServer(spec: OpenApiServerSpec): ToolServer {
  // the document's patterns run on RE2; one RE2 cannot run is left to the API (src/documents/linear-regexp.ts)
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false, validateFormats: true, code: { regExp: lenientLinearRegExp } });
  addFormats(ajv);
  const pcid = jsonSchemaOf(pcidSchema(CUSTOM_APPLICATION)).properties;
  const tools = new Map<string, Compiled>();
  for (const operation of spec.api.operations) {
    // the connection argument leads, as on every application server
    const inputSchema: JsonSchemaObject = {
      ...operation.inputSchema,
      properties: { PCID: { ...pcidFor(pcid), description: `the custom connection to call with: ${spec.connectionId}` }, ...operation.inputSchema.properties },
      required: ['PCID', ...operation.inputSchema.required],
    };
    tools.set(operation.toolName, { operation, entry: { name: operation.toolName, description: operation.description, inputSchema }, validate: ajv.compile(inputSchema) });
  }
  const entries = [...tools.values()].map((t) => t.entry);
  return {
    name: spec.id,
    description: spec.description,
    embedded: false,
    application: CUSTOM_APPLICATION,
    ...(spec.openConnection ? { openConnection: spec.openConnection } : {}),
    listTools: async () => entries,
    async callTool(name, args, context) {
      const tool = tools.get(name);
      if (!tool) throw new ToolCallError('UNKNOWN_TOOL', `server /${spec.id} has no tool ${name}`);
      if (!tool.validate(args)) throw new ToolCallError('INVALID_ARGUMENTS', `invalid arguments for ${name}: ${describeAjv(tool.validate.errors ?? [])}`);
      const connection = context.connection;
      if (!connection || connection.id !== spec.connectionId) {
        throw new ToolCallError('CONNECTION_REFUSED', `/${spec.id} calls its API with connection ${spec.connectionId}; PCID must name it`);
      }
      const credentials = customCredentialsOf(connection);
      if (!credentials.success) throw new ToolCallError('CONNECTION_REFUSED', `connection ${connection.id} is not a valid custom connection`);
      const ref = { orgId: context.orgId, id: connection.id, credentials: credentials.data };
      const request = buildRequest(tool.operation, credentials.data.baseUrl, args);
      // A call is at least once (a worker killed mid-call repeats it): every attempt carries the
      // call's one key, so an API that honours Idempotency-Key drops the repeat. A header argument
      // of that name the document declares wins: the caller set it on purpose.
      if (context.idempotencyKey !== undefined && request.headers['idempotency-key'] === undefined) request.headers['idempotency-key'] = context.idempotencyKey;
      let response: BufferedResponse;
      try {
        response = await sendToCustomerApi(spec.auth, ref, request, {
          timeoutMs: Math.max(1, context.deadline - Date.now()), signal: context.signal, allowPrivateNetwork: context.services.allowPrivateNetwork,
        });
      } catch (error) {
        throw outboundFailure(error, `${request.method} ${tool.operation.path}`);
      }
      return answer(response, tool.operation, spec.id, context);
    },
  };
}

/** A `Retry-After` header in seconds (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterSeconds(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

function pcidFor(properties: Record<string, unknown>): Record<string, unknown> {
  const schema = properties.PCID;
  return typeof schema === 'object' && schema !== null ? { ...schema } : { type: 'string' };
}

export function describeAjv(errors: readonly ErrorObject[]): string {
  return errors.map((e) => {
    const where = ['arguments', ...e.instancePath.split('/').filter(Boolean)].join('.');
    const extra = e.keyword === 'additionalProperties' ? ` (${String(fieldOf(e.params, 'additionalProperty'))})` : '';
    return `${where}: ${e.message ?? e.keyword}${extra}`;
  }).join('; ');
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
}

export function buildRequest(operation: GeneratedOperation, baseUrl: string, args: Record<string, unknown>): { method: string; url: URL; headers: Record<string, string>; body?: string } {
  let path = operation.path;
  const query = new URLSearchParams();
  const headers: Record<string, string> = { accept: 'application/json, */*;q=0.8' };
  for (const p of operation.parameters) {
    const value = args[p.argument];
    if (value === undefined || value === null) continue;
    if (p.in === 'path') {
      const segment = Array.isArray(value) ? value.map(text).join(',') : text(value);
      path = path.split(`{${p.name}}`).join(encodeURIComponent(segment));
    } else if (p.in === 'query') {
      if (Array.isArray(value)) {
        if (p.explode) for (const item of value) query.append(p.name, text(item));
        else query.append(p.name, value.map(text).join(','));
      } else if (typeof value === 'object') {
        // form style objects: exploded as their own name=value pairs, else name=k,v,k,v
        const pairs = Object.entries(value);
        if (p.explode) for (const [k, v] of pairs) query.append(k, text(v));
        else query.append(p.name, pairs.flatMap(([k, v]) => [k, text(v)]).join(','));
      } else query.append(p.name, text(value));
    } else if (!TRANSPORT_HEADERS.has(p.name.toLowerCase())) {
      headers[p.name.toLowerCase()] = Array.isArray(value) ? value.map(text).join(',') : text(value);
    }
  }
  const url = underBase(baseUrl, path);
  for (const [name, value] of query) url.searchParams.append(name, value);
  let body: string | undefined;
  if (operation.bodyType !== undefined && args.body !== undefined) {
    if (operation.bodyType === 'json') {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(args.body);
    } else {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      const form = new URLSearchParams();
      if (typeof args.body === 'object' && args.body !== null) for (const [k, v] of Object.entries(args.body)) form.append(k, text(v));
      body = form.toString();
    }
  }
  return { method: operation.method, url, headers, body };
}

async function answer(response: BufferedResponse, operation: GeneratedOperation, serverId: string, context: CallContext): Promise<ToolOutput> {
  const type = String(response.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (response.status < 200 || response.status >= 300) {
    const body = parseBody(response);
    const retryAfter = retryAfterSeconds(response.headers['retry-after']);
    throw new ToolFailure(`${operation.method} ${operation.path} answered ${response.status}`, {
      status: response.status, body: typeof body === 'string' ? body.slice(0, ERROR_BODY_CHARS) : body,
      // a durable call's next attempt waits for it (activities/durable-tool-call.ts)
      ...(retryAfter === undefined ? {} : { retryAfter }),
    });
  }
  if (response.body.length === 0) return { value: { status: response.status } };
  if (/^application\/(.+\+)?json$/.test(type) || type === '') {
    const parsed = parseBody(response);
    if (isRecord(parsed)) return { value: parsed };
    if (typeof parsed !== 'string' || type !== '') return { value: { result: parsed } };
  }
  if (type.startsWith('text/') || /^application\/(.+\+)?xml$/.test(type) || type === '' || type === 'application/x-www-form-urlencoded') {
    const textBody = response.body.toString('utf8');
    return { value: { status: response.status, contentType: type || 'text/plain', text: textBody }, content: [{ type: 'text', text: textBody }] };
  }
  const key = `tool-files/${context.orgId}/${serverId}/${randomUUID()}`;
  await context.services.blobs.put(key, response.body);
  const url = context.services.signer.sign(key, FILE_LINK_TTL_SECONDS, { type });
  return { value: { status: response.status, contentType: type, size: response.body.length, file: { key, url, mimeType: type } } };
}
