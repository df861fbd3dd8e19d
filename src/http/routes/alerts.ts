/**
 * Alert rules on run outcomes (issue 54; docs/operations.md "Alerts"), admins only:
 * `GET`, `POST /api/v1/alerts` and `GET`, `PUT`, `DELETE /api/v1/alerts/:id`. The operations are
 * the management room's (src/management/alerts.ts); the evaluation and the deliveries happen on
 * Temporal (workflows/alert-evaluator.ts).
 */
import Router from '@koa/router';
import { z } from 'zod';
import { AlertRuleBodySchema, AlertRuleViewSchema } from '../../contracts/alert-bodies';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { settled } from '../management-status';
import { jsonBody } from '../middleware/json-body';
import { adminOf, type GatewayRouter, type GatewayState } from '../state';
import { bodyOf, parseInput } from '../validate';
import { creates, mount, on, type Operations } from '../operation';
import { admin as security, errors, id, json, jsonRequest, noContent } from '../openapi-kit';

const AlertRuleListSchema = z.object({ alerts: z.array(AlertRuleViewSchema) }).meta({ id: 'AlertRuleList' });
const rule = id('id', 'an alert rule');

export const ALERT_OPERATIONS = {
  listAlertRules: {
    method: 'get', path: '/api/v1/alerts', permission: 'org.manage',
    tags: ['alerts'], summary: 'The organization\'s alert rules (admins)', security,
    responses: { '200': json(AlertRuleListSchema, 'the rules, oldest first'), ...errors(401) },
  },
  createAlertRule: {
    method: 'post', path: '/api/v1/alerts', permission: 'org.manage', audit: creates('alert_rule.created', 'alert_rule', ['name', 'kind']),
    tags: ['alerts'], summary: 'Create an alert rule on run outcomes (admins)', security, requestBody: jsonRequest(AlertRuleBodySchema),
    responses: { '201': json(AlertRuleViewSchema, 'the rule'), ...errors(400, 401, 404, 415) },
  },
  getAlertRule: {
    method: 'get', path: '/api/v1/alerts/:id', permission: 'org.manage',
    tags: ['alerts'], summary: 'Read an alert rule (admins)', security, requestParams: { path: rule },
    responses: { '200': json(AlertRuleViewSchema, 'the rule'), ...errors(401, 404) },
  },
  replaceAlertRule: {
    method: 'put', path: '/api/v1/alerts/:id', permission: 'org.manage', audit: on('alert_rule.updated', 'alert_rule', 'id', ['name', 'kind', 'enabled']),
    tags: ['alerts'], summary: 'Replace an alert rule (admins)', security, requestParams: { path: rule }, requestBody: jsonRequest(AlertRuleBodySchema),
    responses: { '200': json(AlertRuleViewSchema, 'the rule'), ...errors(400, 401, 404, 415) },
  },
  deleteAlertRule: {
    method: 'delete', path: '/api/v1/alerts/:id', permission: 'org.manage', audit: on('alert_rule.deleted', 'alert_rule', 'id'),
    tags: ['alerts'], summary: 'Delete an alert rule (admins)', security, requestParams: { path: rule },
    responses: { '204': noContent, ...errors(401, 404) },
  },
} satisfies Operations;
const OPS = ALERT_OPERATIONS;

export function alertRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1' });
  const { alerts } = deps.management;
  router.use(requireAdmin(deps), jsonBody());
  mount(router, OPS.listAlertRules, async (ctx) => {
    ctx.body = { alerts: await alerts.list(adminOf(ctx).orgId) };
  });
  mount(router, OPS.createAlertRule, async (ctx) => {
    const body = parseInput(AlertRuleBodySchema, bodyOf(ctx));
    ctx.body = settled(await alerts.create(adminOf(ctx).orgId, body));
    ctx.status = 201;
  });
  mount(router, OPS.getAlertRule, async (ctx) => {
    ctx.body = settled(await alerts.get(adminOf(ctx).orgId, ctx.params.id ?? ''));
  });
  mount(router, OPS.replaceAlertRule, async (ctx) => {
    const body = parseInput(AlertRuleBodySchema, bodyOf(ctx));
    ctx.body = settled(await alerts.replace(adminOf(ctx).orgId, ctx.params.id ?? '', body));
  });
  mount(router, OPS.deleteAlertRule, async (ctx) => {
    settled(await alerts.remove(adminOf(ctx).orgId, ctx.params.id ?? ''));
    ctx.status = 204;
  });
  return router;
}
