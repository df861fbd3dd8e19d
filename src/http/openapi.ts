/**
 * The OpenAPI 3.1 document of the HTTP API, served at `GET /api/v1/openapi.json`. It is generated
 * (zod-openapi) from the very zod schemas the routes validate requests with and the response
 * bodies are typed by (src/contracts/): a change to either shows here. Most routes describe
 * themselves (their operations, src/http/operations.ts); the entries written here are those not
 * mounted from an operation yet: the triggers (one handler for GET and POST, a 405 for the rest),
 * files (a RegExp route), hosted forms, the tool gateway (its path follows the configuration) and
 * this document itself (its route module serves the document, so it cannot be in the catalog).
 */
import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponsesObject } from 'zod-openapi';
import { errors, id, json } from './openapi-kit';
import { OPERATIONS, pathsOf } from './operations';
import type { Operations } from './operation';
import { JsonRpcMessageSchema } from '../tools/mcp/jsonrpc';
import { FileQuerySchema } from './routes/files';
import { CALLBACK_URL_HEADER, CallbackUrlSchema } from '../runs/callback-url';
import { IdempotencyKeySchema, WaitHeaderSchema } from './routes/triggers';
import { ErrorBodySchema, JsonRpcResponseSchema, PollingHandleSchema, SyncResultBodySchema } from '../contracts/http-bodies';
import { ShapedEventAcceptedSchema, VerifiedRunAcceptedSchema, WebhookAnsweredSchema } from './webhook-delivery';

export const OPENAPI_PATH = '/api/v1/openapi.json';

/** Trigger inputs: any JSON object (its fields are the run's inputs); query parameters merge in. */
const TriggerInputsSchema = z.record(z.string(), z.unknown()).meta({
  id: 'TriggerInputs', description: 'the run\'s inputs, checked against the workflow\'s inputSchema; query parameters are merged in',
});

const triggerHeaders = z.object({
  'x-api-wait': WaitHeaderSchema.meta({ description: '"true": wait for the run up to FLOWGATE_SYNC_WAIT_SECONDS ("true" and "false" in any case)' }),
  Prefer: z.string().optional().meta({ description: '`wait=N`: wait up to N seconds (RFC 7240)' }),
  'Idempotency-Key': IdempotencyKeySchema.meta({ description: 'a retried call with the same key answers for the first run' }),
  [CALLBACK_URL_HEADER]: CallbackUrlSchema.optional().meta({ description: 'POST the run\'s final status here when it ends (Standard Webhooks signature); wins over the trigger\'s callbackUrl' }),
});

const triggerResponses: ZodOpenApiResponsesObject = {
  '200': {
    description: 'Without a wait: the run started, an empty body with its IDs in X-Pf-Run-Id and X-Pf-Automation-Id. With a wait: the run ended within the window. '
      + 'A verified call (docs/webhooks.md) answered without a run: a GitHub ping, an event the trigger does not take, a Slack url_verification (WebhookAnswered).',
    headers: z.object({ 'X-Pf-Run-Id': z.string().optional(), 'X-Pf-Automation-Id': z.string().optional() }),
    content: { 'application/json': { schema: z.union([SyncResultBodySchema, WebhookAnsweredSchema]) } },
  },
  '202': {
    ...json(z.union([PollingHandleSchema, VerifiedRunAcceptedSchema, ShapedEventAcceptedSchema]),
      'the run outlived the wait window: poll statusUrl (PollingHandle); a verified call started its run, or a redelivery named the first one\'s (VerifiedRunAccepted); '
      + 'a call to a debounced or batched trigger joined its window (ShapedEventAccepted)'),
    headers: z.object({
      'Retry-After': z.string().optional().meta({ description: 'PollingHandle' }),
      Location: z.string().optional().meta({ description: 'PollingHandle' }),
      'X-Pf-Run-Id': z.string().optional().meta({ description: 'PollingHandle, VerifiedRunAccepted' }),
      'Idempotent-Replayed': z.literal('true').optional().meta({ description: 'VerifiedRunAccepted of a redelivery' }),
      'X-Pf-Event-Id': z.string().optional().meta({ description: 'ShapedEventAccepted' }),
    }),
  },
  '401': json(ErrorBodySchema, 'missing or unknown API key; for a verified trigger called without one, `signature_refused` naming the check that failed (never the expected value)'),
  '501': json(ErrorBodySchema, '`not_available`: a debounced or batched trigger called on a gateway that cannot queue shaped calls'),
  ...errors(400, 404, 405, 409, 413, 415, 422, 429, 503),
};

function triggerOperation(kind: 'api' | 'webhook', method: 'get' | 'post'): ZodOpenApiOperationObject {
  const path = kind === 'api'
    ? id('triggerId', 'the trigger')
    : z.object({ apiKey: z.string().meta({ description: 'an API key of the organization' }), triggerId: z.string().meta({ description: 'the trigger' }) });
  const content: Record<string, { schema: z.ZodType }> = {
    'application/json': { schema: TriggerInputsSchema },
    'application/x-www-form-urlencoded': { schema: TriggerInputsSchema },
  };
  if (kind === 'api') {
    content['multipart/form-data'] = { schema: z.record(z.string(), z.unknown()).meta({ description: 'fields are inputs; file parts are stored and passed as file references' }) };
  }
  return {
    operationId: `${kind}Trigger${method === 'get' ? 'Get' : 'Post'}`,
    tags: ['triggers'],
    summary: `${kind === 'api' ? 'API' : 'Webhook'} trigger (${method.toUpperCase()}): start a run, asynchronously or waiting for its result`,
    security: kind === 'api' ? [{ apiKey: [] }] : [],
    requestParams: { path, header: triggerHeaders },
    // free-form query parameters: each one is an input (OpenAPI's form-exploded object)
    parameters: [{
      in: 'query', name: 'inputs', style: 'form', explode: true, required: false,
      schema: { type: 'object', additionalProperties: true },
      description: method === 'get' ? 'each query parameter is an input' : 'query parameters merge into the body\'s inputs',
    }],
    ...(method === 'post' ? { requestBody: { content } } : {}),
    responses: triggerResponses,
  };
}

function paths(toolsBasePath: string, operations: Operations): ZodOpenApiPathsObject {
  const toolsPath = `${toolsBasePath === '/' ? '' : toolsBasePath.replace(/\/+$/, '')}/{server}`;
  return withOperations({
    '/ext/triggers/{triggerId}': { get: triggerOperation('api', 'get'), post: triggerOperation('api', 'post') },
    '/ext/webhook/{apiKey}/triggers/{triggerId}': { get: triggerOperation('webhook', 'get'), post: triggerOperation('webhook', 'post') },
    '/files/{key}': {
      get: {
        operationId: 'downloadFile', tags: ['files'], summary: 'Download a file through a signed link (the link alone authorizes it)',
        requestParams: { path: z.object({ key: z.string() }), query: FileQuerySchema },
        responses: {
          '200': { description: 'the file', content: { 'application/octet-stream': { schema: z.string().meta({ format: 'binary' }) } } },
          ...errors(403, 404),
        },
      },
    },
    [toolsPath]: {
      post: {
        operationId: 'toolGateway', tags: ['tools'], security: [{ runtimeBearer: [] }],
        summary: 'The tool gateway: JSON-RPC 2.0 (MCP: initialize, ping, tools/list, tools/call, tasks/*), one request or a batch',
        requestParams: {
          path: z.object({ server: z.string().meta({ description: 'a tool server path: a built-in, a custom server or `workflows`' }) }),
          header: z.object({
            'Idempotency-Key': IdempotencyKeySchema.meta({
              description: 'the idempotency key of the call (of each entry of a batch: `<key>:<index>`), unless its `params._meta.idempotencyKey` gives one; '
                + 'generated servers send it on as Idempotency-Key, remote servers get it in `_meta` as `io.flowgate/idempotencyKey`',
            }),
          }),
        },
        requestBody: { content: { 'application/json': { schema: z.union([JsonRpcMessageSchema, z.array(JsonRpcMessageSchema)]).meta({ id: 'JsonRpcRequest' }) } } },
        responses: {
          '200': json(z.union([JsonRpcResponseSchema, z.array(JsonRpcResponseSchema)]), 'the JSON-RPC answer (errors too are JSON-RPC error objects)'),
          '202': { description: 'notifications only: nothing to answer' },
          '400': json(JsonRpcResponseSchema, 'not JSON, not a JSON-RPC request, nested too deep, or a bad Idempotency-Key (a JSON-RPC error)'),
          '401': json(JsonRpcResponseSchema, 'missing or invalid runtime token (a JSON-RPC error)'),
          '413': json(JsonRpcResponseSchema, 'a body over the server\'s limit (4 MiB; codeagent about 110 MiB), or over 4 MiB outside its strings (a JSON-RPC error)'),
          '429': json(JsonRpcResponseSchema, 'rate limited (a JSON-RPC error)'),
          '503': json(JsonRpcResponseSchema, 'no room left for another large body (FLOWGATE_TOOLS_LARGE_BODIES_MB); see Retry-After (a JSON-RPC error)'),
        },
      },
    },
    [OPENAPI_PATH]: {
      get: {
        operationId: 'openapi', tags: ['operations'], summary: 'This document', security: [],
        responses: { '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } } },
      },
    },
    '/forms/{token}': {
      get: {
        operationId: 'hostedForm', tags: ['forms'], summary: 'A hosted form: an HTML page generated from the workflow\'s input schema (the URL alone authorizes it)',
        requestParams: { path: z.object({ token: z.string() }) },
        responses: { '200': { description: 'the form', content: { 'text/html': { schema: z.string() } } }, '404': { description: 'unknown or revoked form (HTML)' }, '409': { description: 'the trigger takes no runs now (HTML)' } },
      },
      post: {
        operationId: 'hostedFormSubmit', tags: ['forms'], summary: 'Submit a hosted form: fields and files, checked as an API trigger call; a confirmation page, or the result for a form that waits',
        requestParams: { path: z.object({ token: z.string() }) },
        requestBody: { content: { 'multipart/form-data': { schema: TriggerInputsSchema }, 'application/x-www-form-urlencoded': { schema: TriggerInputsSchema } } },
        responses: {
          '200': { description: 'confirmation or result (HTML)', content: { 'text/html': { schema: z.string() } } },
          '404': { description: 'unknown or revoked form (HTML)' }, '409': { description: 'the trigger takes no runs now (HTML)' },
          '413': { description: 'a file or the body is over the limits (HTML, the form again)' }, '415': { description: 'a refused file type (HTML, the form again)' },
          '422': { description: 'the inputs do not fit the schema (HTML, the form again)' },
        },
      },
    },
  }, pathsOf(operations));
}

/** The hand-written paths with the routes' own operations added (method by method: a path may hold both, a method only one description). */
function withOperations(written: ZodOpenApiPathsObject, generated: ZodOpenApiPathsObject): ZodOpenApiPathsObject {
  const paths = { ...written };
  for (const [path, item] of Object.entries(generated)) {
    const twice = Object.keys(item).filter((method) => method in (written[path] ?? {}));
    if (twice.length > 0) throw new Error(`${twice.join(', ').toUpperCase()} ${path} is described by hand and by its operation`);
    paths[path] = { ...paths[path], ...item };
  }
  return paths;
}

/** The document for a gateway whose tool gateway lives under `toolsBasePath` (of the routes' operations, or of `operations`). */
export function openApiDocument(options: { toolsBasePath: string; version: string; serverUrl?: string; operations?: Operations }): ReturnType<typeof createDocument> {
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'flowgate',
      version: options.version,
      description: 'Durable workflows on Temporal: triggers, polling, files, approvals, the management API and the JSON-RPC tool gateway. Errors outside the tool gateway are `{error, message}`.',
    },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY', description: 'an API key (POST /api/v1/api-keys)' },
        adminBearer: { type: 'http', scheme: 'bearer', description: 'an organization\'s admin token, or a member\'s personal access token (fgp_…; its role\'s permissions, docs/people-and-roles.md)' },
        runtimeBearer: { type: 'http', scheme: 'bearer', description: 'a runtime token from POST /auth/token' },
        codecSession: { type: 'apiKey', in: 'cookie', name: 'flowgate_codec_session', description: 'the codec sign-in (POST /codec/sign-in with the instance administrator token)' },
      },
    },
    paths: paths(options.toolsBasePath, options.operations ?? OPERATIONS),
  });
}
