/**
 * Definitions as code (docs/definitions-as-code.md), with an admin bearer token:
 * `POST /api/v1/apply/plan` (what apply would do, with each change's diff and the drift since the
 * last apply), `POST /api/v1/apply` (all of it, or nothing: a write refused is rolled back), `GET
 * /api/v1/apply/export` (the organization as files of the format) and `GET /api/v1/apply/schema`
 * (the JSON Schema of a file, for editors). The operation is the management room's
 * (src/management/definitions/); the routes parse, call and answer.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { ApplyRequestSchema, ExportSchema, PlanSchema } from '../../management';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { settled } from '../management-status';
import { jsonBody } from '../middleware/json-body';
import { adminOf, type GatewayRouter, type GatewayState } from '../state';
import { bodyOf as body, parseInput as parse } from '../validate';
import { mount, type Operations } from '../operation';
import { admin as security, errors, json, jsonRequest } from '../openapi-kit';

/** a folder with OpenAPI documents inline */
const APPLY_BODY_LIMIT = '8mb';

const applied = { type: 'org', id: { org: true } } as const;
const recorded = ['source', 'commit', 'created', 'changed', 'deleted', 'drifted', 'applied'];

export const APPLY_OPERATIONS = {
  planDefinitions: {
    method: 'post', path: '/api/v1/apply/plan', permission: 'read', audit: { action: 'definitions.planned', target: applied, answerFields: recorded },
    tags: ['definitions'], summary: 'What applying a folder of definitions would create, change and delete, with the drift since the last apply', security,
    requestBody: jsonRequest(ApplyRequestSchema), responses: { '200': json(PlanSchema, 'the plan; `valid: false` lists every error by file and path'), ...errors(400, 401, 413, 415) },
  },
  applyDefinitions: {
    method: 'post', path: '/api/v1/apply', permission: 'workflows.write',
    // a write refused after the checks is rolled back and recorded as its own event, with what failed and how the rollback went
    audit: { action: 'definitions.applied', target: applied, answerFields: recorded, failures: { apply_failed: 'definitions.apply_failed' } },
    tags: ['definitions'], summary: 'Apply a folder of definitions: all of it, or nothing (an invalid file changes nothing; a write refused after the checks is rolled back) (members need members.manage, connections connections.write)', security,
    requestBody: jsonRequest(ApplyRequestSchema), responses: { '200': json(PlanSchema, 'what was done'), ...errors(400, 401, 403, 409, 413, 415) },
  },
  exportDefinitions: {
    method: 'get', path: '/api/v1/apply/export', permission: 'read',
    tags: ['definitions'], summary: 'The organization\'s workflows, triggers, custom servers and agents as files of the definitions format', security,
    responses: { '200': json(ExportSchema, 'the files'), ...errors(401) },
  },
  getDefinitionsSchema: {
    method: 'get', path: '/api/v1/apply/schema', permission: 'read',
    tags: ['definitions'], summary: 'The JSON Schema of a definitions file (with this instance\'s step kinds)', security,
    responses: { '200': json(z.looseObject({ oneOf: z.array(z.unknown()) }), 'the JSON Schema'), ...errors(401) },
  },
} satisfies Operations;

export function applyRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1/apply' });
  const { definitions } = deps.management;
  router.use(requireAdmin(deps), jsonBody({ limit: APPLY_BODY_LIMIT }));

  mount(router, APPLY_OPERATIONS.planDefinitions, async (ctx) => {
    ctx.body = await definitions.plan(adminOf(ctx).orgId, parse(ApplyRequestSchema, body(ctx)));
  });
  mount(router, APPLY_OPERATIONS.applyDefinitions, async (ctx) => {
    const caller = adminOf(ctx);
    ctx.body = settled(await definitions.apply(caller.orgId, parse(ApplyRequestSchema, body(ctx)), caller.role));
  });
  mount(router, APPLY_OPERATIONS.exportDefinitions, async (ctx) => {
    ctx.body = await definitions.export(adminOf(ctx).orgId);
  });
  mount(router, APPLY_OPERATIONS.getDefinitionsSchema, (ctx) => {
    ctx.body = definitions.jsonSchema();
  });
  return router;
}
