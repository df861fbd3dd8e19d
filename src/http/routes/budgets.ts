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

export function budgetRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1' });
  const { budgets } = deps.management;
  router.use(requireAdmin(deps), jsonBody());
  const otherOrg = async (ctx: GatewayRouterContext): Promise<string> => settled(await budgets.otherOrg(actorOf(adminOf(ctx)), ctx.params.id ?? ''));

  router.get('/budget', async (ctx) => {
    ctx.body = await budgets.view(adminOf(ctx).orgId);
  });
  router.get('/orgs/:id/budget', async (ctx) => {
    ctx.body = await budgets.view(await otherOrg(ctx));
  });
  /** Fields given change (null removes that limit); fields left out keep their value. */
  router.put('/orgs/:id/budget', async (ctx) => {
    const orgId = await otherOrg(ctx);
    ctx.body = await budgets.set(orgId, parse(BudgetBodySchema, body(ctx)));
  });
  return router;
}
