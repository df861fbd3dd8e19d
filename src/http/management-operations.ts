/**
 * The operations of routes/management.ts (organizations, workflows, triggers, API keys, runs),
 * beside it for their length, with the schemas of their query strings and bodies.
 */
import { z } from 'zod';
import { WorkflowDefinitionSchema } from '../../activities/steps';
import {
  AdminTokenSchema, ApiKeyCreatedSchema, ApiKeyListSchema, CancelAcceptedSchema, OrgCreatedSchema, PublishedVersionSchema, ResultsBodySchema, RunApprovalsSchema,
  RunListSchema, TriggerListSchema, TriggerSchema, WorkflowListSchema, WorkflowSchema,
} from '../contracts/http-bodies';
import { ScheduleBodySchema } from '../contracts/schedule-bodies';
import { creates, on, type Operations } from './operation';
import { admin as security, errors, id, json, jsonRequest, noContent } from './openapi-kit';
import { statusHeaders, statusResponses, streamOperation } from './openapi-status';
import { CreateApiKeySchema, CreateOrgSchema, CreateTriggerSchema, UpdateTriggerSchema } from '../management/schemas';

export const TriggersQuerySchema = z.object({ workflowId: z.string().min(1).max(100).optional() });
export const RunsQuerySchema = z.object({
  workflowId: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be a workflow ID').optional(),
  status: z.enum(['RUNNING', 'COMPLETE', 'FAILED', 'TIMEOUT']).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/** The create-trigger body: `schedule` is checked by ScheduleBodySchema after the rest (as 400 invalid_schedule). */
const CreateTriggerDocSchema = CreateTriggerSchema.extend({ schedule: ScheduleBodySchema.optional() }).meta({ id: 'CreateTrigger' });
const DefinitionSchema = WorkflowDefinitionSchema.meta({ id: 'WorkflowDefinition', description: 'a workflow definition (its steps and inputSchema)' });

const workflow = id('id', 'a workflow');
const runId = id('runId', 'a run');

export const MANAGEMENT_OPERATIONS = {
  // `adminTokenId`: the minted token's name (`adm_…`), so that its later records lead back to who minted it
  createOrg: {
    method: 'post', path: '/api/v1/orgs', permission: 'org.manage', audit: creates('org.created', 'org', ['name', 'adminTokenId']),
    tags: ['management'], summary: 'Create an organization (instance administrator)', security, requestBody: jsonRequest(CreateOrgSchema),
    responses: { '201': json(OrgCreatedSchema, 'the organization and its admin token (shown once)'), ...errors(400, 401, 403) },
  },
  rotateAdminToken: {
    method: 'post', path: '/api/v1/admin-token/rotate', permission: 'org.manage',
    audit: { action: 'admin_token.rotated', target: { type: 'org', id: { org: true } }, answerFields: ['adminTokenId'] },
    tags: ['management'], summary: 'Replace this organization\'s admin token', security,
    responses: { '201': json(AdminTokenSchema, 'the new token; the old one stops working'), ...errors(401, 409) },
  },
  reissueOrgAdminToken: {
    method: 'post', path: '/api/v1/orgs/:id/admin-token', permission: 'org.manage', audit: on('admin_token.reissued', 'org', 'id', ['adminTokenId']),
    tags: ['management'], summary: 'Reissue another organization\'s admin token (instance administrator)', security, requestParams: { path: id('id', 'an organization') },
    responses: { '201': json(AdminTokenSchema, 'the new token'), ...errors(401, 403, 404) },
  },
  listWorkflows: {
    method: 'get', path: '/api/v1/workflows', permission: 'read',
    tags: ['management'], summary: 'List workflows', security, responses: { '200': json(WorkflowListSchema, 'the workflows'), ...errors(401) },
  },
  createWorkflow: {
    method: 'post', path: '/api/v1/workflows', permission: 'workflows.write', audit: creates('workflow.created', 'workflow', ['name']),
    tags: ['management'], summary: 'Create a workflow (a draft)', security, requestBody: jsonRequest(DefinitionSchema),
    responses: { '201': json(WorkflowSchema, 'the workflow'), ...errors(400, 401, 413, 415) },
  },
  getWorkflow: {
    method: 'get', path: '/api/v1/workflows/:id', permission: 'read',
    tags: ['management'], summary: 'Read a workflow', security, requestParams: { path: workflow },
    responses: { '200': json(WorkflowSchema, 'the workflow'), ...errors(401, 404) },
  },
  updateWorkflow: {
    method: 'put', path: '/api/v1/workflows/:id', permission: 'workflows.write', audit: on('workflow.updated', 'workflow', 'id'),
    tags: ['management'], summary: 'Replace a workflow\'s draft', security, requestParams: { path: workflow }, requestBody: jsonRequest(DefinitionSchema),
    responses: { '200': json(WorkflowSchema, 'the workflow'), ...errors(400, 401, 404, 415) },
  },
  deleteWorkflow: {
    method: 'delete', path: '/api/v1/workflows/:id', permission: 'workflows.write', audit: on('workflow.deleted', 'workflow', 'id'),
    tags: ['management'], summary: 'Delete a workflow', security, requestParams: { path: workflow }, responses: { '204': noContent, ...errors(401, 404) },
  },
  publishWorkflow: {
    method: 'post', path: '/api/v1/workflows/:id/publish', permission: 'workflows.write', audit: on('workflow.published', 'workflow', 'id', ['version']),
    tags: ['management'], summary: 'Publish the draft as a new version', security, requestParams: { path: workflow },
    responses: { '201': json(PublishedVersionSchema, 'the version'), ...errors(401, 404, 409) },
  },
  listTriggers: {
    method: 'get', path: '/api/v1/triggers', permission: 'read',
    tags: ['management'], summary: 'List triggers', security, requestParams: { query: TriggersQuerySchema },
    responses: { '200': json(TriggerListSchema, 'the triggers'), ...errors(400, 401) },
  },
  createTrigger: {
    method: 'post', path: '/api/v1/triggers', permission: 'triggers.write', audit: creates('trigger.created', 'trigger', ['workflowId']),
    tags: ['management'], summary: 'Create a trigger of a published workflow', security, requestBody: jsonRequest(CreateTriggerDocSchema),
    responses: { '201': json(TriggerSchema, 'the trigger'), ...errors(400, 401, 404, 409, 415, 422, 501) },
  },
  updateTrigger: {
    method: 'patch', path: '/api/v1/triggers/:id', permission: 'triggers.write', audit: on('trigger.updated', 'trigger', 'id'),
    tags: ['management'], summary: 'Change a trigger in place (same ID, URL and keys)', security, requestParams: { path: id('id', 'a trigger') },
    requestBody: jsonRequest(UpdateTriggerSchema), responses: { '200': json(TriggerSchema, 'the trigger'), ...errors(400, 401, 404, 409, 415, 422, 501) },
  },
  deleteTrigger: {
    method: 'delete', path: '/api/v1/triggers/:id', permission: 'triggers.write', audit: on('trigger.deleted', 'trigger', 'id'),
    tags: ['management'], summary: 'Delete a trigger', security, requestParams: { path: id('id', 'a trigger') }, responses: { '204': noContent, ...errors(401, 404) },
  },
  listApiKeys: {
    method: 'get', path: '/api/v1/api-keys', permission: 'api_keys.manage',
    tags: ['management'], summary: 'List API keys (never the keys themselves)', security, responses: { '200': json(ApiKeyListSchema, 'the keys'), ...errors(401) },
  },
  createApiKey: {
    method: 'post', path: '/api/v1/api-keys', permission: 'api_keys.manage', audit: creates('api_key.created', 'api_key', ['name']),
    tags: ['management'], summary: 'Create an API key', security, requestBody: jsonRequest(CreateApiKeySchema),
    responses: { '201': json(ApiKeyCreatedSchema, 'the key (shown once)'), ...errors(400, 401, 415) },
  },
  revokeApiKey: {
    method: 'delete', path: '/api/v1/api-keys/:id', permission: 'api_keys.manage', audit: on('api_key.revoked', 'api_key', 'id'),
    tags: ['management'], summary: 'Revoke an API key', security, requestParams: { path: id('id', 'an API key') }, responses: { '204': noContent, ...errors(401, 404) },
  },
  listRuns: {
    method: 'get', path: '/api/v1/runs', permission: 'read',
    tags: ['management'], summary: 'List the organization\'s runs, newest first', security, requestParams: { query: RunsQuerySchema },
    responses: { '200': json(RunListSchema, 'the runs'), ...errors(400, 401, 503) },
  },
  getRun: {
    method: 'get', path: '/api/v1/runs/:runId', permission: 'read',
    tags: ['management'], summary: 'A run\'s status (without an API key); a long poll with `Prefer: wait=N`', security,
    requestParams: { path: runId, header: statusHeaders }, responses: statusResponses(401, 404, 503),
  },
  getRunStream: { method: 'get', path: '/api/v1/runs/:runId/stream', permission: 'read', ...streamOperation(['management'], runId, security) },
  getRunResults: {
    method: 'get', path: '/api/v1/runs/:runId/results', permission: 'read',
    tags: ['management'], summary: 'A run\'s results (without an API key)', security, requestParams: { path: runId },
    responses: { '200': json(ResultsBodySchema, 'the results'), ...errors(401, 404, 503) },
  },
  cancelRun: {
    method: 'post', path: '/api/v1/runs/:runId/cancel', permission: 'runs.operate', audit: on('run.cancelled', 'run', 'runId'),
    tags: ['management'], summary: 'Cancel a run (Temporal cancellation)', security, requestParams: { path: runId },
    responses: { '202': json(CancelAcceptedSchema, 'cancellation requested'), ...errors(401, 404, 409, 503) },
  },
  getRunApprovals: {
    method: 'get', path: '/api/v1/runs/:runId/approvals', permission: 'approvals.links',
    tags: ['approvals'], summary: 'The approval a run waits on, with each undecided approver\'s link', security, requestParams: { path: runId },
    responses: { '200': json(RunApprovalsSchema, 'the approvals'), ...errors(401, 404, 503) },
  },
} satisfies Operations;
