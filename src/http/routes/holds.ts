/**
 * Pausing a whole workflow or trigger (issue 54; src/runs/run-holds.ts): its new runs are started
 * as usual (the caller gets the run ID) and wait PENDING before their first step until it is
 * unpaused; runs already started are not affected. `POST /api/v1/workflows/:id/pause|unpause`,
 * `POST /api/v1/triggers/:id/pause|unpause` (`runs.operate`, audited) and `GET /api/v1/holds`.
 */
import Router from '@koa/router';
import { z } from 'zod';
import type { HoldScope } from '../../common/run-holds';
import { HoldAnswerSchema, RunHoldListSchema } from '../../contracts/operator-bodies';
import type { OperatorHoldRecord } from '../../registry';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { notFound, temporalUnavailable } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { mount, on, type Operations } from '../operation';
import { admin as security, errors, id, json, jsonRequest } from '../openapi-kit';
import { operatorOf } from '../run-access';
import { adminOf, type GatewayRouterContext, type GatewayState } from '../state';
import { callTemporal } from '../temporal-errors';
import { bodyOf, parseInput } from '../validate';

export const HoldBodySchema = z.object({ reason: z.string().max(500).optional() }).strict().meta({ id: 'HoldBody' });

const workflow = id('id', 'a workflow');
const trigger = id('id', 'a trigger');
const pauseResponses = { '200': json(HoldAnswerSchema, 'paused: new runs wait PENDING'), ...errors(400, 401, 404, 415) };
const unpauseResponses = { '200': json(HoldAnswerSchema, 'unpaused: new runs start at once, and the runs held meanwhile are being released'), ...errors(401, 404, 503) };

export const HOLD_OPERATIONS = {
  listHolds: {
    method: 'get', path: '/api/v1/holds', permission: 'read',
    tags: ['management'], summary: 'The organization\'s paused workflows and triggers', security,
    responses: { '200': json(RunHoldListSchema, 'the holds, oldest first'), ...errors(401) },
  },
  pauseWorkflow: {
    method: 'post', path: '/api/v1/workflows/:id/pause', permission: 'runs.operate', audit: on('workflow.paused', 'workflow', 'id'),
    tags: ['management'], summary: 'Pause a workflow: its new runs wait PENDING before their first step until it is unpaused (runs already started go on)',
    security, requestParams: { path: workflow }, requestBody: jsonRequest(HoldBodySchema), responses: pauseResponses,
  },
  unpauseWorkflow: {
    method: 'post', path: '/api/v1/workflows/:id/unpause', permission: 'runs.operate', audit: on('workflow.unpaused', 'workflow', 'id', ['releaseId']),
    tags: ['management'], summary: 'Unpause a workflow: the runs it held start their first step', security, requestParams: { path: workflow }, responses: unpauseResponses,
  },
  pauseTrigger: {
    method: 'post', path: '/api/v1/triggers/:id/pause', permission: 'runs.operate', audit: on('trigger.paused', 'trigger', 'id'),
    tags: ['management'], summary: 'Pause a trigger: the runs it starts wait PENDING before their first step until it is unpaused (its calls are still answered)',
    security, requestParams: { path: trigger }, requestBody: jsonRequest(HoldBodySchema), responses: pauseResponses,
  },
  unpauseTrigger: {
    method: 'post', path: '/api/v1/triggers/:id/unpause', permission: 'runs.operate', audit: on('trigger.unpaused', 'trigger', 'id', ['releaseId']),
    tags: ['management'], summary: 'Unpause a trigger: the runs it held start their first step', security, requestParams: { path: trigger }, responses: unpauseResponses,
  },
} satisfies Operations;
const OPS = HOLD_OPERATIONS;

const holdBody = (hold: OperatorHoldRecord) => ({ scope: hold.scope, id: hold.targetId, by: hold.by, at: hold.at, ...(hold.reason ? { reason: hold.reason } : {}) });

export function holdRoutes(deps: GatewayDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/api/v1' });
  router.use(requireAdmin(deps), jsonBody());

  /** The workflow or trigger of the path, if it is the caller's organization's (else 404, as for a missing one). */
  const target = async (ctx: GatewayRouterContext, scope: HoldScope): Promise<string> => {
    const { orgId } = adminOf(ctx);
    const targetId = ctx.params.id ?? '';
    if (scope === 'workflow') {
      if (!(await deps.registry.workflows.get(orgId, targetId))) throw notFound('unknown_workflow', `no workflow ${targetId}`);
    } else {
      const found = await deps.registry.triggers.get(targetId);
      if (!found || found.orgId !== orgId) throw notFound('unknown_trigger', `no trigger ${targetId}`);
    }
    return targetId;
  };
  const holdsOf = () => {
    if (!deps.holds) throw temporalUnavailable();
    return deps.holds;
  };

  mount(router, OPS.listHolds, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { holds: (await holdsOf().list(adminOf(ctx).orgId)).map(holdBody) };
  });
  const pause = (scope: HoldScope) => async (ctx: GatewayRouterContext): Promise<void> => {
    const { reason } = parseInput(HoldBodySchema, bodyOf(ctx));
    const targetId = await target(ctx, scope);
    const hold = await holdsOf().pause(adminOf(ctx).orgId, scope, targetId, operatorOf(ctx), reason);
    ctx.body = { scope, id: targetId, paused: true, hold: holdBody(hold) };
  };
  const unpause = (scope: HoldScope) => async (ctx: GatewayRouterContext): Promise<void> => {
    const targetId = await target(ctx, scope);
    const holds = holdsOf();
    const outcome = await callTemporal(() => holds.unpause(adminOf(ctx).orgId, scope, targetId, operatorOf(ctx)));
    ctx.body = { scope, id: targetId, paused: false, ...(outcome.lifted ? { hold: holdBody(outcome.lifted) } : {}), releaseId: outcome.releaseId };
  };
  mount(router, OPS.pauseWorkflow, pause('workflow'));
  mount(router, OPS.unpauseWorkflow, unpause('workflow'));
  mount(router, OPS.pauseTrigger, pause('trigger'));
  mount(router, OPS.unpauseTrigger, unpause('trigger'));
  return router;
}
