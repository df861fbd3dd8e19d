/**
 * Organizations' monthly budgets of agent usage (issue 36), with an admin bearer token:
 * `GET /api/v1/budget` (the token's organization: its budget and this month's usage), and
 * `GET`, `PUT /api/v1/orgs/:id/budget` (the instance administrator, for any organization). A
 * budget reached refuses the next agent invocation of the organization until the month ends (UTC).
 */
import Router from '@koa/router';
import { z } from 'zod';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { actorOf, settled } from '../management-status';
import { jsonBody } from '../middleware/json-body';
import { adminOf, type GatewayRouter, type GatewayRouterContext, type GatewayState } from '../state';
import { bodyOf as body, parseInput as parse } from '../validate';
import { mount, type Operations } from '../operation';
import { admin as security, errors, id, json, jsonRequest } from '../openapi-kit';

export const BudgetBodySchema = z.object({
  monthlyMaxTokens: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).nullable().optional()
    .meta({ description: 'tokens (prompt + completion) the organization\'s agents may use per calendar month (UTC); null: no limit' }),
  monthlyMaxCostUsd: z.number().gt(0).max(1_000_000_000).nullable().optional()
    .meta({ description: 'USD (at FLOWGATE_MODEL_PRICES) the organization\'s agents may spend per calendar month (UTC); null: no limit' }),
}).strict().meta({ id: 'OrgBudgetUpdate' });

export const BudgetViewSchema = z.looseObject({
  orgId: z.string(),
  monthlyMaxTokens: z.number().int().nullable(),
  monthlyMaxCostUsd: z.string().nullable().meta({ description: 'USD as a decimal string' }),
  month: z.string().meta({ description: 'the current calendar month (UTC), YYYY-MM' }),
  used: z.looseObject({ tokens: z.number().int(), costUsd: z.string() }),
  updatedAt: z.string().nullable(),
}).meta({ id: 'OrgBudget' });

const org = id('id', 'an organization');

export const BUDGET_OPERATIONS = {
  getBudget: {
    method: 'get', path: '/api/v1/budget', permission: 'read',
    tags: ['agents'], summary: 'This organization\'s monthly budget of agent usage and this month\'s usage', security,
    responses: { '200': json(BudgetViewSchema, 'the budget'), ...errors(401) },
  },
  getOrgBudget: {
    method: 'get', path: '/api/v1/orgs/:id/budget', permission: 'read',
    tags: ['agents'], summary: 'An organization\'s monthly budget and usage (instance administrator)', security,
    requestParams: { path: org }, responses: { '200': json(BudgetViewSchema, 'the budget'), ...errors(401, 403, 404) },
  },
  setOrgBudget: {
    method: 'put', path: '/api/v1/orgs/:id/budget', permission: 'org.manage', audit: { action: 'budget.set', target: { type: 'org', id: { param: 'id' } } },
    tags: ['agents'], summary: 'Set an organization\'s monthly budget of agent usage (instance administrator)', security,
    requestParams: { path: org }, requestBody: jsonRequest(BudgetBodySchema),
    responses: { '200': json(BudgetViewSchema, 'the budget as set'), ...errors(400, 401, 403, 404) },
  },
} satisfies Operations;

export function budgetRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1' });
  const { budgets } = deps.management;
  router.use(requireAdmin(deps), jsonBody());
  const otherOrg = async (ctx: GatewayRouterContext): Promise<string> => settled(await budgets.otherOrg(actorOf(adminOf(ctx)), ctx.params.id ?? ''));

  mount(router, BUDGET_OPERATIONS.getBudget, async (ctx) => {
    ctx.body = await budgets.view(adminOf(ctx).orgId);
  });
  mount(router, BUDGET_OPERATIONS.getOrgBudget, async (ctx) => {
    ctx.body = await budgets.view(await otherOrg(ctx));
  });
  /** Fields given change (null removes that limit); fields left out keep their value. */
  mount(router, BUDGET_OPERATIONS.setOrgBudget, async (ctx) => {
    const orgId = await otherOrg(ctx);
    ctx.body = await budgets.set(orgId, parse(BudgetBodySchema, body(ctx)));
  });
  return router;
}
