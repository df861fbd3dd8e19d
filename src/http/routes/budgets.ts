/**
 * Organizations' monthly budgets of agent usage (issue 36), with an admin bearer token:
 * `GET /api/v1/budget` (the token's organization: its budget and this month's usage), and
 * `GET`, `PUT /api/v1/orgs/:id/budget` (the instance administrator, for any organization). A
 * budget reached refuses the next agent invocation of the organization until the month ends (UTC).
 */
import Router from '@koa/router';
import { z } from 'zod';
import { formatUsd, monthOf, usdToNano } from '../../common/agent-usage';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { forbidden, notFound } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { adminOf, type GatewayRouter, type GatewayState } from '../state';
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
  const store = deps.registry.agentUsage;
  router.use(requireAdmin(deps), jsonBody());

  const view = async (orgId: string): Promise<z.infer<typeof BudgetViewSchema>> => {
    const month = monthOf(new Date());
    const [budget, used] = await Promise.all([store.budget(orgId), store.month(orgId, month)]);
    return {
      orgId, monthlyMaxTokens: budget.monthlyMaxTokens,
      monthlyMaxCostUsd: budget.monthlyMaxCostNanoUsd === null ? null : formatUsd(budget.monthlyMaxCostNanoUsd),
      month, used: { tokens: used.tokens, costUsd: formatUsd(used.costNanoUsd) }, updatedAt: budget.updatedAt,
    };
  };
  const otherOrg = async (id: string | undefined, instanceAdmin: boolean): Promise<string> => {
    if (!instanceAdmin) throw forbidden('only the instance administrator may read or set an organization\'s budget by id; an organization reads its own at /api/v1/budget');
    const org = await deps.registry.orgs.get(id ?? '');
    if (!org) throw notFound('unknown_org', `no organization ${id}`);
    return org.id;
  };

  mount(router, BUDGET_OPERATIONS.getBudget, async (ctx) => {
    ctx.body = await view(adminOf(ctx).orgId);
  });
  mount(router, BUDGET_OPERATIONS.getOrgBudget, async (ctx) => {
    ctx.body = await view(await otherOrg(ctx.params.id, adminOf(ctx).instanceAdmin));
  });
  /** Fields given change (null removes that limit); fields left out keep their value. */
  mount(router, BUDGET_OPERATIONS.setOrgBudget, async (ctx) => {
    const orgId = await otherOrg(ctx.params.id, adminOf(ctx).instanceAdmin);
    const patch = parse(BudgetBodySchema, body(ctx));
    const current = await store.budget(orgId);
    await store.setBudget(orgId, {
      monthlyMaxTokens: patch.monthlyMaxTokens === undefined ? current.monthlyMaxTokens : patch.monthlyMaxTokens,
      monthlyMaxCostNanoUsd: patch.monthlyMaxCostUsd === undefined ? current.monthlyMaxCostNanoUsd
        : patch.monthlyMaxCostUsd === null ? null : usdToNano(patch.monthlyMaxCostUsd),
    });
    ctx.body = await view(orgId);
  });
  return router;
}
