/**
 * The OpenAPI 3.1 document of the HTTP API, served at `GET /api/v1/openapi.json`. It is generated
 * (zod-openapi) from the very zod schemas the routes validate requests with and the response
 * bodies are typed by (src/contracts/): a change to either shows here.
 *
 * One piece (over 300 lines): it is the document itself, route by route; each route's entry is a
 * few lines of data beside the others, with no logic to split out.
 */
import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponsesObject } from 'zod-openapi';
import { CreateAgentSchema, UpdateAgentSchema } from '../registry/agent-records';
import { WorkflowDefinitionSchema } from '../common/definition';
import { peoplePaths, withPermissionRefusals, type DocHelpers } from './openapi-people';
import { JsonRpcMessageSchema } from '../tools/mcp/jsonrpc';
import { AuditPageSchema, AuditQuerySchema } from '../contracts/audit-bodies';
import { ChatSchema, InvokeSchema } from './routes/agents';
import { BudgetBodySchema, BudgetViewSchema } from './routes/budgets';
import { FormSchema } from './routes/approvals';
import { CreateConnectionSchema, ListQuerySchema as ConnectionsQuerySchema } from './routes/connections';
import { FileQuerySchema } from './routes/files';
import { CodecPayloadsSchema } from '../contracts/codec-bodies';
import { CreateFormSchema } from './routes/forms';
import { CALLBACK_URL_HEADER, CallbackUrlSchema } from '../runs/callback-url';
import { ScheduleBodySchema } from '../contracts/schedule-bodies';
import { MAX_LONG_POLL_SECONDS } from './live-status';
import { CreateApiKeySchema, CreateOrgSchema, CreateTriggerSchema, RunsQuerySchema, TriggersQuerySchema } from './routes/management';
import { RerunBodySchema } from './routes/run-management';
import { DecisionBodySchema } from './routes/runs';
import { PauseBodySchema } from './routes/schedules';
import { CallbackQuerySchema, ServerBodySchema } from './routes/servers';
import { IdempotencyKeySchema, WaitHeaderSchema } from './routes/triggers';
import {
  AdminTokenSchema, ApiKeyCreatedSchema, ApiKeyListSchema, CancelAcceptedSchema, DecisionAcceptedSchema, DecisionRecordedSchema, DecisionReportSchema, ErrorBodySchema, HealthSchema,
  JsonRpcResponseSchema, OrgCreatedSchema, PollingHandleSchema, PublishedVersionSchema, RestartedRunSchema, ResultsBodySchema, RunApprovalsSchema,
  RunListSchema, RuntimeTokenSchema, ScheduleListSchema, ScheduleViewSchema, StatusBodySchema, SyncResultBodySchema, TriggerListSchema, TriggerSchema,
  WebhookSecretSchema, WorkflowListSchema, WorkflowSchema,
} from '../contracts/http-bodies';

export const OPENAPI_PATH = '/api/v1/openapi.json';

const ERRORS: Record<number, string> = {
  400: 'bad request: invalid body, query or header',
  401: 'missing or unknown credential',
  403: 'the credential may not do this',
  404: 'no such thing (or not this credential\'s)',
  405: 'method not allowed (see Allow)',
  409: 'conflict with the current state',
  413: 'body too large',
  415: 'unsupported content type',
  422: 'inputs do not match the workflow\'s inputSchema',
  429: 'rate limited (see Retry-After)',
  503: 'Temporal unreachable (see Retry-After)',
};

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });

function errors(...statuses: number[]): ZodOpenApiResponsesObject {
  return Object.fromEntries(statuses.map((status) => [String(status), json(ErrorBodySchema, ERRORS[status] ?? 'error')]));
}

const noContent = { description: 'done; no body' };
/** The create-trigger body: `schedule` is checked by ScheduleBodySchema after the rest (as 400 invalid_schedule). */
const CreateTriggerDocSchema = CreateTriggerSchema.extend({ schedule: ScheduleBodySchema.optional() }).meta({ id: 'CreateTrigger' });
const DefinitionSchema = WorkflowDefinitionSchema.meta({ id: 'WorkflowDefinition', description: 'a workflow definition (its steps and inputSchema)' });
const admin = [{ adminBearer: [] }];
const TriggerFormSchema = z.object({
  id: z.string(), triggerId: z.string(), wait: z.boolean(), createdAt: z.string(), revokedAt: z.string().nullable(),
}).meta({ id: 'TriggerForm' });
const id = (name: string, description: string) => z.object({ [name]: z.string().meta({ description }) });
const DOC_HELPERS: DocHelpers = { json, errors, admin, id };

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

/** The live status of a run (long poll and conditional GET): the same on the polling and admin paths. */
const statusHeaders = z.object({
  Prefer: z.string().optional().meta({ description: `\`wait=N\`: a long poll, answering as soon as the body differs from the caller's (or after N seconds, at most ${MAX_LONG_POLL_SECONDS})` }),
  'If-None-Match': z.string().optional().meta({ description: 'the ETag the caller has: 304 while it is current' }),
});

function statusResponses(...errorStatuses: number[]): ZodOpenApiResponsesObject {
  return {
    '200': {
      ...json(StatusBodySchema, 'the run\'s status'),
      headers: z.object({ ETag: z.string(), 'Preference-Applied': z.string().optional().meta({ description: '`wait=N` as applied' }) }),
    },
    '304': { description: 'unchanged: the If-None-Match ETag is current (after the long poll\'s wait, if any)', headers: z.object({ ETag: z.string() }) },
    ...errors(...errorStatuses),
  };
}

const STREAM_DESCRIPTION = 'Server-Sent Events: `retry: 2000`, then `event: step` (id = the transition\'s sequence number; data `{seq, stepIndex, name, status, at}`) '
  + 'per step status change, `event: gap` (no id; data `{from, to}`: transitions no longer kept), and once the run has ended `event: end` '
  + '(id = last transition + 1; data: the RunStatusBody), after which the stream closes. A comment line every 15 s keeps it open.';

function streamOperation(operationId: string, tags: string[], path: z.ZodObject, security?: { [name: string]: string[] }[]): ZodOpenApiOperationObject {
  return {
    operationId, tags, summary: 'A run\'s step transitions as Server-Sent Events until it ends, resumable with Last-Event-ID', ...(security ? { security } : {}),
    requestParams: {
      path,
      header: z.object({ 'Last-Event-ID': z.string().regex(/^\d{1,9}$/).optional().meta({ description: 'resume after this event: nothing missed, nothing repeated' }) }),
      query: z.object({
        lastEventId: z.string().regex(/^\d{1,9}$/).optional().meta({ description: 'as Last-Event-ID, for clients that cannot set headers' }),
        follow: z.enum(['true', 'false']).optional().meta({ description: '`false`: the transitions so far (and `end` if the run has ended), then the stream closes' }),
      }),
    },
    responses: {
      '200': { description: STREAM_DESCRIPTION, content: { 'text/event-stream': { schema: z.string() } } },
      '204': { description: 'the run had ended and the caller already has its end event (an EventSource stops reconnecting)' },
      ...errors(400, 401, 404, 429, 503),
    },
  };
}

const triggerResponses: ZodOpenApiResponsesObject = {
  '200': {
    description: 'Without a wait: the run started, an empty body with its IDs in X-Pf-Run-Id and X-Pf-Automation-Id. With a wait: the run ended within the window.',
    headers: z.object({ 'X-Pf-Run-Id': z.string(), 'X-Pf-Automation-Id': z.string() }),
    content: { 'application/json': { schema: SyncResultBodySchema } },
  },
  '202': { ...json(PollingHandleSchema, 'the run outlived the wait window: poll statusUrl'), headers: z.object({ 'Retry-After': z.string(), Location: z.string() }) },
  ...errors(400, 401, 404, 405, 409, 413, 415, 422, 429, 503),
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

const pollingParams = z.object({
  apiKey: z.string().meta({ description: 'an API key of the run\'s organization' }),
  automationId: z.string().meta({ description: 'the run\'s workflow' }),
  runId: z.string(),
});

function paths(toolsBasePath: string): ZodOpenApiPathsObject {
  const toolsPath = `${toolsBasePath === '/' ? '' : toolsBasePath.replace(/\/+$/, '')}/{server}`;
  const runId = id('runId', 'a run');
  return withPermissionRefusals({
    ...peoplePaths(DOC_HELPERS),
    '/ext/triggers/{triggerId}': { get: triggerOperation('api', 'get'), post: triggerOperation('api', 'post') },
    '/ext/webhook/{apiKey}/triggers/{triggerId}': { get: triggerOperation('webhook', 'get'), post: triggerOperation('webhook', 'post') },
    '/ext/webhook/{apiKey}/runs/{automationId}/{runId}/status': {
      get: {
        operationId: 'runStatus', tags: ['polling'], summary: 'A run\'s status; a long poll with `Prefer: wait=N`, 304 with a current If-None-Match',
        requestParams: { path: pollingParams, header: statusHeaders },
        responses: statusResponses(401, 404, 429, 503),
      },
    },
    '/ext/webhook/{apiKey}/runs/{automationId}/{runId}/status/stream': {
      get: streamOperation('runStatusStream', ['polling'], pollingParams),
    },
    '/ext/webhook/{apiKey}/runs/{automationId}/{runId}/results': {
      get: {
        operationId: 'runResults', tags: ['polling'], summary: 'A run\'s results as signed file links', requestParams: { path: pollingParams },
        responses: { '200': json(ResultsBodySchema, 'the run\'s results so far'), ...errors(401, 404, 429, 503) },
      },
    },
    '/ext/webhook/{apiKey}/runs/{automationId}/{runId}/approval': {
      post: {
        operationId: 'decideApproval', tags: ['approvals'], summary: 'Approve or reject the approval step the run waits on',
        requestParams: { path: pollingParams }, requestBody: { content: { 'application/json': { schema: DecisionBodySchema } } },
        responses: {
          '200': json(DecisionAcceptedSchema, 'the run took the decision'),
          '202': json(DecisionRecordedSchema, 'the run did not answer in time: the decision is recorded and applied, or refused, when it resumes'),
          ...errors(400, 401, 403, 404, 409, 415, 429, 503),
        },
      },
    },
    '/ext/webhook/{apiKey}/runs/{automationId}/{runId}/approval/{decisionId}': {
      get: {
        operationId: 'approvalDecisionOutcome', tags: ['approvals'], summary: 'What became of a decision this API answered with its ID',
        requestParams: { path: pollingParams.extend({ decisionId: z.string() }) },
        responses: { '200': json(DecisionReportSchema, 'the decision\'s outcome'), ...errors(401, 404, 429, 503) },
      },
    },
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
    '/approvals/{token}': {
      get: {
        operationId: 'approvalPage', tags: ['approvals'], summary: 'An approval link: an HTML page with Approve and Reject',
        requestParams: { path: z.object({ token: z.string() }) },
        responses: { '200': { description: 'the page', content: { 'text/html': { schema: z.string() } } }, '403': { description: 'invalid link (HTML)' }, '409': { description: 'expired or decided (HTML)' } },
      },
      post: {
        operationId: 'approvalDecide', tags: ['approvals'], summary: 'The approval page\'s form: decide for the link\'s approver',
        requestParams: { path: z.object({ token: z.string() }) },
        requestBody: { content: { 'application/x-www-form-urlencoded': { schema: FormSchema } } },
        responses: {
          '200': { description: 'decision applied (HTML)', content: { 'text/html': { schema: z.string() } } },
          '202': { description: 'decision recorded, applied when the run resumes; names the decision (HTML)', content: { 'text/html': { schema: z.string() } } },
          '403': { description: 'invalid link (HTML)' }, '409': { description: 'cannot be decided now (HTML)' },
        },
      },
    },
    '/auth/token': {
      post: {
        operationId: 'runtimeToken', tags: ['tools'], summary: 'A runtime token (60 minutes) for the tool gateway, from an API key', security: [{ apiKey: [] }],
        responses: { '200': json(RuntimeTokenSchema, 'the token'), ...errors(401, 429) },
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
    '/healthz': {
      get: {
        operationId: 'health', tags: ['operations'], summary: 'Liveness of Temporal and the registry',
        responses: { '200': json(HealthSchema, 'all up'), '503': json(HealthSchema, 'something is down') },
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics', tags: ['operations'], summary: 'Prometheus metrics (instance administrator token)', security: admin,
        responses: { '200': { description: 'the Prometheus text format', content: { 'text/plain': { schema: z.string() } } }, ...errors(401, 403) },
      },
    },
    '/codec/decode': {
      post: {
        operationId: 'codecDecode', tags: ['operations'], security: [...admin, { codecSession: [] }],
        summary: 'Decrypt Temporal payloads (the codec endpoint of the Temporal Web UI and CLI; instance administrator token or codec sign-in)',
        requestParams: { header: z.object({ 'X-Namespace': z.string().optional().meta({ description: 'the Temporal namespace; another than flowgate\'s is refused' }) }) },
        requestBody: { content: { 'application/json': { schema: CodecPayloadsSchema } } },
        responses: { '200': json(CodecPayloadsSchema, 'the payloads in clear (those already in clear unchanged)'), ...errors(400, 401, 403, 413, 415), '422': json(ErrorBodySchema, 'a payload sealed with a key this instance does not have, or altered') },
      },
    },
    '/codec/encode': {
      post: {
        operationId: 'codecEncode', tags: ['operations'], security: [...admin, { codecSession: [] }],
        summary: 'Encrypt Temporal payloads with the newest data key (the Web UI sends signals and starts so)',
        requestParams: { header: z.object({ 'X-Namespace': z.string().optional() }) },
        requestBody: { content: { 'application/json': { schema: CodecPayloadsSchema } } },
        responses: { '200': json(CodecPayloadsSchema, 'the payloads sealed (unchanged when FLOWGATE_DATA_ENCRYPTION=off)'), ...errors(400, 401, 403, 413, 415) },
      },
    },
    '/codec/sign-in': {
      get: {
        operationId: 'codecSignInPage', tags: ['operations'], summary: 'The codec sign-in page (a form for the instance administrator token)', security: [],
        responses: { '200': { description: 'an HTML page', content: { 'text/html': { schema: z.string() } } } },
      },
      post: {
        operationId: 'codecSignIn', tags: ['operations'], security: [],
        summary: 'Sign in to the codec endpoint: sets an HttpOnly, SameSite=Strict cookie for an hour',
        requestBody: { content: { 'application/x-www-form-urlencoded': { schema: z.object({ token: z.string() }) } } },
        responses: { '200': { description: 'signed in (an HTML page; Set-Cookie)', content: { 'text/html': { schema: z.string() } } }, '401': { description: 'not the instance administrator token (the form again)', content: { 'text/html': { schema: z.string() } } } },
      },
    },
    '/codec/sign-out': {
      post: {
        operationId: 'codecSignOut', tags: ['operations'], summary: 'End the codec sign-in (clears the cookie)', security: [],
        responses: { '200': { description: 'signed out (an HTML page)', content: { 'text/html': { schema: z.string() } } } },
      },
    },
    [OPENAPI_PATH]: {
      get: {
        operationId: 'openapi', tags: ['operations'], summary: 'This document', security: [],
        responses: { '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } } },
      },
    },
    // ---- management API
    '/api/v1/orgs': {
      post: {
        operationId: 'createOrg', tags: ['management'], summary: 'Create an organization (instance administrator)', security: admin,
        requestBody: { content: { 'application/json': { schema: CreateOrgSchema } } },
        responses: { '201': json(OrgCreatedSchema, 'the organization and its admin token (shown once)'), ...errors(400, 401, 403) },
      },
    },
    '/api/v1/admin-token/rotate': {
      post: {
        operationId: 'rotateAdminToken', tags: ['management'], summary: 'Replace this organization\'s admin token', security: admin,
        responses: { '201': json(AdminTokenSchema, 'the new token; the old one stops working'), ...errors(401, 409) },
      },
    },
    '/api/v1/orgs/{id}/admin-token': {
      post: {
        operationId: 'reissueOrgAdminToken', tags: ['management'], summary: 'Reissue another organization\'s admin token (instance administrator)', security: admin,
        requestParams: { path: id('id', 'an organization') },
        responses: { '201': json(AdminTokenSchema, 'the new token'), ...errors(401, 403, 404) },
      },
    },
    '/api/v1/workflows': {
      get: {
        operationId: 'listWorkflows', tags: ['management'], summary: 'List workflows', security: admin,
        responses: { '200': json(WorkflowListSchema, 'the workflows'), ...errors(401) },
      },
      post: {
        operationId: 'createWorkflow', tags: ['management'], summary: 'Create a workflow (a draft)', security: admin,
        requestBody: { content: { 'application/json': { schema: DefinitionSchema } } },
        responses: { '201': json(WorkflowSchema, 'the workflow'), ...errors(400, 401, 413, 415) },
      },
    },
    '/api/v1/workflows/{id}': {
      get: {
        operationId: 'getWorkflow', tags: ['management'], summary: 'Read a workflow', security: admin, requestParams: { path: id('id', 'a workflow') },
        responses: { '200': json(WorkflowSchema, 'the workflow'), ...errors(401, 404) },
      },
      put: {
        operationId: 'updateWorkflow', tags: ['management'], summary: 'Replace a workflow\'s draft', security: admin, requestParams: { path: id('id', 'a workflow') },
        requestBody: { content: { 'application/json': { schema: DefinitionSchema } } },
        responses: { '200': json(WorkflowSchema, 'the workflow'), ...errors(400, 401, 404, 415) },
      },
      delete: {
        operationId: 'deleteWorkflow', tags: ['management'], summary: 'Delete a workflow', security: admin, requestParams: { path: id('id', 'a workflow') },
        responses: { '204': noContent, ...errors(401, 404) },
      },
    },
    '/api/v1/workflows/{id}/publish': {
      post: {
        operationId: 'publishWorkflow', tags: ['management'], summary: 'Publish the draft as a new version', security: admin, requestParams: { path: id('id', 'a workflow') },
        responses: { '201': json(PublishedVersionSchema, 'the version'), ...errors(401, 404, 409) },
      },
    },
    '/api/v1/triggers': {
      get: {
        operationId: 'listTriggers', tags: ['management'], summary: 'List triggers', security: admin, requestParams: { query: TriggersQuerySchema },
        responses: { '200': json(TriggerListSchema, 'the triggers'), ...errors(400, 401) },
      },
      post: {
        operationId: 'createTrigger', tags: ['management'], summary: 'Create a trigger of a published workflow', security: admin,
        requestBody: { content: { 'application/json': { schema: CreateTriggerDocSchema } } },
        responses: { '201': json(TriggerSchema, 'the trigger'), ...errors(400, 401, 404, 409, 415, 422) },
      },
    },
    '/api/v1/triggers/{id}': {
      get: {
        operationId: 'getTrigger', tags: ['management'], summary: 'Read a trigger, with its schedule\'s live state', security: admin, requestParams: { path: id('id', 'a trigger') },
        responses: { '200': json(TriggerSchema, 'the trigger'), ...errors(401, 404, 503) },
      },
      delete: {
        operationId: 'deleteTrigger', tags: ['management'], summary: 'Delete a trigger', security: admin, requestParams: { path: id('id', 'a trigger') },
        responses: { '204': noContent, ...errors(401, 404) },
      },
    },
    '/api/v1/triggers/{id}/forms': {
      post: {
        operationId: 'createTriggerForm', tags: ['management'], security: admin, requestParams: { path: id('id', 'a trigger') },
        summary: 'Offer the trigger as a hosted form: a new form URL (shown once; only its hash is kept)',
        requestBody: { content: { 'application/json': { schema: CreateFormSchema } } },
        responses: { '201': json(TriggerFormSchema.extend({ url: z.string().meta({ description: 'the form URL; it needs no header' }) }), 'the form and its URL'), ...errors(400, 401, 404) },
      },
      get: {
        operationId: 'listTriggerForms', tags: ['management'], summary: 'The trigger\'s form URLs (without their secret), revoked ones included', security: admin,
        requestParams: { path: id('id', 'a trigger') },
        responses: { '200': json(z.object({ forms: z.array(TriggerFormSchema) }), 'the forms'), ...errors(401, 404) },
      },
    },
    '/api/v1/triggers/{id}/forms/{formId}': {
      delete: {
        operationId: 'revokeTriggerForm', tags: ['management'], summary: 'Revoke a form URL: it answers 404 from now on', security: admin,
        requestParams: { path: z.object({ id: z.string(), formId: z.string() }) },
        responses: { '204': noContent, ...errors(401, 404) },
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
    '/api/v1/triggers/{id}/disable': {
      post: {
        operationId: 'disableTrigger', tags: ['management'], summary: 'Disable a trigger: its calls answer 409 trigger_disabled (its schedule keeps firing into that)', security: admin,
        requestParams: { path: id('id', 'a trigger') }, responses: { '200': json(TriggerSchema, 'the trigger'), ...errors(401, 404) },
      },
    },
    '/api/v1/triggers/{id}/enable': {
      post: {
        operationId: 'enableTrigger', tags: ['management'], summary: 'Enable a disabled trigger', security: admin,
        requestParams: { path: id('id', 'a trigger') }, responses: { '200': json(TriggerSchema, 'the trigger'), ...errors(401, 404) },
      },
    },
    '/api/v1/triggers/{id}/schedule': {
      put: {
        operationId: 'putTriggerSchedule', tags: ['schedules'], summary: 'Set or replace a trigger\'s schedule (a Temporal Schedule)', security: admin,
        requestParams: { path: id('id', 'a trigger') }, requestBody: { content: { 'application/json': { schema: ScheduleBodySchema } } },
        responses: { '200': json(ScheduleViewSchema, 'replaced'), '201': json(ScheduleViewSchema, 'created'), ...errors(400, 401, 404, 415, 422, 503) },
      },
      delete: {
        operationId: 'deleteTriggerSchedule', tags: ['schedules'], summary: 'Remove a trigger\'s schedule (the trigger stays)', security: admin,
        requestParams: { path: id('id', 'a trigger') }, responses: { '204': noContent, ...errors(401, 404, 503) },
      },
    },
    '/api/v1/triggers/{id}/schedule/pause': {
      post: {
        operationId: 'pauseTriggerSchedule', tags: ['schedules'], summary: 'Pause a trigger\'s schedule', security: admin,
        requestParams: { path: id('id', 'a trigger') }, requestBody: { content: { 'application/json': { schema: PauseBodySchema } } },
        responses: { '200': json(ScheduleViewSchema, 'the schedule'), ...errors(400, 401, 404, 415, 503) },
      },
    },
    '/api/v1/triggers/{id}/schedule/resume': {
      post: {
        operationId: 'resumeTriggerSchedule', tags: ['schedules'], summary: 'Resume a paused schedule', security: admin,
        requestParams: { path: id('id', 'a trigger') }, requestBody: { content: { 'application/json': { schema: PauseBodySchema } } },
        responses: { '200': json(ScheduleViewSchema, 'the schedule'), ...errors(400, 401, 404, 415, 503) },
      },
    },
    '/api/v1/schedules': {
      get: {
        operationId: 'listSchedules', tags: ['schedules'], summary: 'The organization\'s schedules with their live state', security: admin,
        responses: { '200': json(ScheduleListSchema, 'the schedules'), ...errors(401, 503) },
      },
    },
    '/api/v1/webhook-secret': {
      get: {
        operationId: 'getWebhookSecret', tags: ['callbacks'], summary: 'The organization\'s completion-callback signing secret (created on first use)', security: admin,
        responses: { '200': json(WebhookSecretSchema, 'the secret'), ...errors(401) },
      },
    },
    '/api/v1/webhook-secret/rotate': {
      post: {
        operationId: 'rotateWebhookSecret', tags: ['callbacks'], summary: 'A new signing secret; the previous one signs beside it for 24 hours', security: admin,
        responses: { '201': json(WebhookSecretSchema, 'the new secret'), ...errors(401) },
      },
    },
    '/api/v1/api-keys': {
      get: {
        operationId: 'listApiKeys', tags: ['management'], summary: 'List API keys (never the keys themselves)', security: admin,
        responses: { '200': json(ApiKeyListSchema, 'the keys'), ...errors(401) },
      },
      post: {
        operationId: 'createApiKey', tags: ['management'], summary: 'Create an API key', security: admin,
        requestBody: { content: { 'application/json': { schema: CreateApiKeySchema } } },
        responses: { '201': json(ApiKeyCreatedSchema, 'the key (shown once)'), ...errors(400, 401, 415) },
      },
    },
    '/api/v1/api-keys/{id}': {
      delete: {
        operationId: 'revokeApiKey', tags: ['management'], summary: 'Revoke an API key', security: admin, requestParams: { path: id('id', 'an API key') },
        responses: { '204': noContent, ...errors(401, 404) },
      },
    },
    '/api/v1/audit': {
      get: {
        operationId: 'listAudit', tags: ['management'], summary: 'The organization\'s audit trail, newest first (docs/audit.md)', security: admin,
        requestParams: { query: AuditQuerySchema },
        responses: { '200': json(AuditPageSchema, 'a page of records'), ...errors(400, 401) },
      },
    },
    '/api/v1/runs': {
      get: {
        operationId: 'listRuns', tags: ['management'], summary: 'List the organization\'s runs, newest first', security: admin, requestParams: { query: RunsQuerySchema },
        responses: { '200': json(RunListSchema, 'the runs'), ...errors(400, 401, 503) },
      },
    },
    '/api/v1/runs/{runId}': {
      get: {
        operationId: 'getRun', tags: ['management'], summary: 'A run\'s status (without an API key); a long poll with `Prefer: wait=N`', security: admin,
        requestParams: { path: runId, header: statusHeaders },
        responses: statusResponses(401, 404, 503),
      },
    },
    '/api/v1/runs/{runId}/stream': {
      get: streamOperation('getRunStream', ['management'], runId, admin),
    },
    '/api/v1/runs/{runId}/rerun': {
      post: {
        operationId: 'rerunRun', tags: ['management'], summary: 'A new run with the same inputs, on the latest (default) or the same version', security: admin,
        requestParams: { path: runId }, requestBody: { content: { 'application/json': { schema: RerunBodySchema } } },
        responses: { '201': json(RestartedRunSchema, 'the new run'), ...errors(400, 401, 404, 409, 415, 422, 503) },
      },
    },
    '/api/v1/runs/{runId}/resume': {
      post: {
        operationId: 'resumeRun', tags: ['management'], summary: 'A new run of a FAILED or TIMEOUT run from its first step that did not complete, reusing the earlier outcomes',
        security: admin, requestParams: { path: runId },
        responses: { '201': json(RestartedRunSchema, 'the new run'), ...errors(401, 404, 409, 422, 503) },
      },
    },
    '/api/v1/runs/{runId}/results': {
      get: {
        operationId: 'getRunResults', tags: ['management'], summary: 'A run\'s results (without an API key)', security: admin, requestParams: { path: runId },
        responses: { '200': json(ResultsBodySchema, 'the results'), ...errors(401, 404, 503) },
      },
    },
    '/api/v1/runs/{runId}/cancel': {
      post: {
        operationId: 'cancelRun', tags: ['management'], summary: 'Cancel a run (Temporal cancellation)', security: admin, requestParams: { path: runId },
        responses: { '202': json(CancelAcceptedSchema, 'cancellation requested'), ...errors(401, 404, 409, 503) },
      },
    },
    '/api/v1/runs/{runId}/approvals': {
      get: {
        operationId: 'getRunApprovals', tags: ['approvals'], summary: 'The approval a run waits on, with each undecided approver\'s link', security: admin,
        requestParams: { path: runId },
        responses: { '200': json(RunApprovalsSchema, 'the approvals'), ...errors(401, 404, 503) },
      },
    },
    '/api/v1/runs/{runId}/approval/{decisionId}': {
      get: {
        operationId: 'getRunDecisionOutcome', tags: ['approvals'], summary: 'What became of a decision this API answered with its ID', security: admin,
        requestParams: { path: runId.extend({ decisionId: z.string() }) },
        responses: { '200': json(DecisionReportSchema, 'the decision\'s outcome'), ...errors(401, 404, 503) },
      },
    },
    '/api/v1/connections': {
      get: {
        operationId: 'listConnections', tags: ['connections'], summary: 'List application connections (never their credentials)', security: admin,
        requestParams: { query: ConnectionsQuerySchema }, responses: { '200': json(z.looseObject({ connections: z.array(z.looseObject({ id: z.string() })) }), 'the connections'), ...errors(400, 401) },
      },
      post: {
        operationId: 'createConnection', tags: ['connections'], summary: 'Store an application connection (credentials encrypted)', security: admin,
        requestBody: { content: { 'application/json': { schema: CreateConnectionSchema } } },
        responses: { '201': json(z.looseObject({ id: z.string() }), 'the connection; `id` is the PCID'), ...errors(400, 401, 415) },
      },
    },
    '/api/v1/connections/{id}': {
      get: {
        operationId: 'getConnection', tags: ['connections'], summary: 'Read a connection', security: admin, requestParams: { path: id('id', 'a PCID') },
        responses: { '200': json(z.looseObject({ id: z.string() }), 'the connection'), ...errors(401, 404) },
      },
      delete: {
        operationId: 'deleteConnection', tags: ['connections'], summary: 'Delete a connection', security: admin, requestParams: { path: id('id', 'a PCID') },
        responses: { '204': noContent, ...errors(401, 404) },
      },
    },
    '/api/v1/connections/{id}/test': {
      post: {
        operationId: 'testConnection', tags: ['connections'], summary: 'Call a custom connection\'s test endpoint', security: admin, requestParams: { path: id('id', 'a PCID') },
        responses: { '200': json(z.looseObject({}), 'the test\'s outcome'), ...errors(401, 404, 409) },
      },
    },
    '/api/v1/connections/{id}/oauth/authorize': {
      get: {
        operationId: 'authorizeConnection', tags: ['connections'], summary: 'Redirect to the OAuth provider\'s consent page', security: admin, requestParams: { path: id('id', 'a PCID') },
        responses: { '302': { description: 'to the provider' }, ...errors(401, 404, 409) },
      },
    },
    '/api/v1/oauth/callback': {
      get: {
        operationId: 'oauthCallback', tags: ['connections'], summary: 'Where the OAuth provider sends the user back', security: [], requestParams: { query: CallbackQuerySchema },
        responses: { '200': { description: 'an HTML page saying whether the connection is ready', content: { 'text/html': { schema: z.string() } } } },
      },
    },
    '/api/v1/servers': {
      get: {
        operationId: 'listServers', tags: ['servers'], summary: 'List custom tool servers', security: admin,
        responses: { '200': json(z.looseObject({ servers: z.array(z.looseObject({ id: z.string() })) }), 'the servers'), ...errors(401) },
      },
      post: {
        operationId: 'createServer', tags: ['servers'], summary: 'Register a custom tool server (an OpenAPI document, or a remote MCP server)', security: admin,
        requestBody: { content: { 'application/json': { schema: ServerBodySchema } } },
        responses: { '201': json(z.looseObject({ id: z.string() }), 'the server'), ...errors(400, 401, 409, 413, 415) },
      },
    },
    '/api/v1/servers/{id}': {
      get: {
        operationId: 'getServer', tags: ['servers'], summary: 'Read a custom tool server', security: admin, requestParams: { path: id('id', 'a server') },
        responses: { '200': json(z.looseObject({ id: z.string() }), 'the server'), ...errors(401, 404) },
      },
      put: {
        operationId: 'replaceServer', tags: ['servers'], summary: 'Replace a custom tool server', security: admin, requestParams: { path: id('id', 'a server') },
        requestBody: { content: { 'application/json': { schema: ServerBodySchema } } },
        responses: { '200': json(z.looseObject({ id: z.string() }), 'the server'), ...errors(400, 401, 404, 415) },
      },
      delete: {
        operationId: 'deleteServer', tags: ['servers'], summary: 'Delete a custom tool server', security: admin, requestParams: { path: id('id', 'a server') },
        responses: { '204': noContent, ...errors(401, 404) },
      },
    },
    '/api/v1/agents': {
      get: {
        operationId: 'listAgents', tags: ['agents'], summary: 'List agents', security: admin,
        responses: { '200': json(z.looseObject({ agents: z.array(z.looseObject({ id: z.string() })) }), 'the agents'), ...errors(401) },
      },
      post: {
        operationId: 'createAgent', tags: ['agents'], summary: 'Create an agent', security: admin,
        requestBody: { content: { 'application/json': { schema: CreateAgentSchema } } },
        responses: { '201': json(z.looseObject({ id: z.string() }), 'the agent'), ...errors(400, 401, 415) },
      },
    },
    '/api/v1/agents/{id}': {
      get: {
        operationId: 'getAgent', tags: ['agents'], summary: 'Read an agent', security: admin, requestParams: { path: id('id', 'an agent') },
        responses: { '200': json(z.looseObject({ id: z.string() }), 'the agent'), ...errors(401, 404) },
      },
      patch: {
        operationId: 'updateAgent', tags: ['agents'], summary: 'Update an agent', security: admin, requestParams: { path: id('id', 'an agent') },
        requestBody: { content: { 'application/json': { schema: UpdateAgentSchema } } },
        responses: { '200': json(z.looseObject({ id: z.string() }), 'the agent'), ...errors(400, 401, 404, 415) },
      },
      delete: {
        operationId: 'deleteAgent', tags: ['agents'], summary: 'Delete an agent', security: admin, requestParams: { path: id('id', 'an agent') },
        responses: { '204': noContent, ...errors(401, 404) },
      },
    },
    '/api/v1/agents/{id}/invoke': {
      post: {
        operationId: 'invokeAgent', tags: ['agents'], summary: 'Invoke an agent; waits up to waitSeconds for its answer', security: admin,
        requestParams: { path: id('id', 'an agent') }, requestBody: { content: { 'application/json': { schema: InvokeSchema } } },
        responses: {
          '200': json(z.looseObject({ status: z.string() }), 'the invocation ended'), '202': json(z.looseObject({ status: z.string() }), 'still running'),
          ...errors(400, 401, 404, 503), '429': json(ErrorBodySchema, 'budget_exhausted: the organization\'s monthly budget is used up (Retry-After: the next month, UTC)'),
        },
      },
    },
    '/api/v1/budget': {
      get: {
        operationId: 'getBudget', tags: ['agents'], summary: 'This organization\'s monthly budget of agent usage and this month\'s usage', security: admin,
        responses: { '200': json(BudgetViewSchema, 'the budget'), ...errors(401) },
      },
    },
    '/api/v1/orgs/{id}/budget': {
      get: {
        operationId: 'getOrgBudget', tags: ['agents'], summary: 'An organization\'s monthly budget and usage (instance administrator)', security: admin,
        requestParams: { path: id('id', 'an organization') }, responses: { '200': json(BudgetViewSchema, 'the budget'), ...errors(401, 403, 404) },
      },
      put: {
        operationId: 'setOrgBudget', tags: ['agents'], summary: 'Set an organization\'s monthly budget of agent usage (instance administrator)', security: admin,
        requestParams: { path: id('id', 'an organization') }, requestBody: { content: { 'application/json': { schema: BudgetBodySchema } } },
        responses: { '200': json(BudgetViewSchema, 'the budget as set'), ...errors(400, 401, 403, 404) },
      },
    },
    '/api/v1/agents/{id}/chats': {
      get: {
        operationId: 'listChats', tags: ['agents'], summary: 'An agent\'s chats', security: admin, requestParams: { path: id('id', 'an agent') },
        responses: { '200': json(z.looseObject({ chats: z.array(z.looseObject({})) }), 'the chats'), ...errors(401, 404) },
      },
      post: {
        operationId: 'createChat', tags: ['agents'], summary: 'Start a chat with an agent', security: admin, requestParams: { path: id('id', 'an agent') },
        requestBody: { content: { 'application/json': { schema: ChatSchema } } },
        responses: { '201': json(z.looseObject({}), 'the chat'), ...errors(400, 401, 404) },
      },
    },
    '/api/v1/agents/invocations/{invocationId}': {
      get: {
        operationId: 'getInvocation', tags: ['agents'], summary: 'An agent invocation\'s status', security: admin, requestParams: { path: id('invocationId', 'an invocation') },
        responses: { '200': json(z.looseObject({ status: z.string() }), 'ended'), '202': json(z.looseObject({ status: z.string() }), 'still running'), ...errors(401, 404) },
      },
    },
    '/api/v1/agents/chats/{chatId}': {
      get: {
        operationId: 'getChat', tags: ['agents'], summary: 'A chat and its messages', security: admin, requestParams: { path: id('chatId', 'a chat') },
        responses: { '200': json(z.looseObject({}), 'the chat'), ...errors(401, 404) },
      },
    },
    '/api/v1/agents/chats/{chatId}/reset': {
      post: {
        operationId: 'resetChat', tags: ['agents'], summary: 'Forget a chat\'s history', security: admin, requestParams: { path: id('chatId', 'a chat') },
        responses: { '200': json(z.looseObject({ reset: z.literal(true) }), 'reset'), ...errors(401, 404) },
      },
    },
    '/api/v1/agents/chats/{chatId}/artifacts': {
      get: {
        operationId: 'chatArtifacts', tags: ['agents'], summary: 'Files an agent produced in a chat', security: admin, requestParams: { path: id('chatId', 'a chat') },
        responses: { '200': json(z.looseObject({ artifacts: z.array(z.looseObject({})) }), 'the artifacts'), ...errors(401, 404) },
      },
    },
  }, DOC_HELPERS);
}

/** The document for a gateway whose tool gateway lives under `toolsBasePath`. */
export function openApiDocument(options: { toolsBasePath: string; version: string; serverUrl?: string }): ReturnType<typeof createDocument> {
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
    paths: paths(options.toolsBasePath),
  });
}
