/**
 * Schedules of triggers (management API, admin bearer token; TriggerAdmin, src/management/, writes
 * them and ScheduleService keeps the Temporal schedules in line with what is stored):
 *
 *   GET    /api/v1/triggers/{id}                  the trigger, with its schedule and the schedule's live state
 *   PUT    /api/v1/triggers/{id}/schedule         set (or replace) the trigger's schedule
 *   DELETE /api/v1/triggers/{id}/schedule         remove it (the trigger stays)
 *   POST   /api/v1/triggers/{id}/schedule/pause   {note?}
 *   POST   /api/v1/triggers/{id}/schedule/resume  {note?}
 *   GET    /api/v1/schedules                      the organization's schedules, with their live state
 *
 * Another organization's trigger is a 404 like a missing one.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { jsonBody } from '../middleware/json-body';
import { settled } from '../management-status';
import { adminOf as admin, type GatewayRouter, type GatewayState } from '../state';
import { bodyOf as body, parseInput as parse } from '../validate';
import { callTemporal } from '../temporal-errors';

export const PauseBodySchema = z.object({ note: z.string().max(500).optional() }).strict();

export function scheduleRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1' });
  router.use(requireAdmin(deps), jsonBody());
  // (every call may reach Temporal: unreachable is a 503, callTemporal)
  const { triggers } = deps.management;

  router.get('/triggers/:id', async (ctx) => {
    ctx.body = settled(await callTemporal(() => triggers.view(admin(ctx).orgId, ctx.params.id ?? '')));
  });

  router.put('/triggers/:id/schedule', async (ctx) => {
    const put = settled(await callTemporal(() => triggers.putSchedule(admin(ctx).orgId, ctx.params.id ?? '', body(ctx))));
    ctx.status = put.created ? 201 : 200;
    ctx.body = put.schedule;
  });

  router.delete('/triggers/:id/schedule', async (ctx) => {
    settled(await callTemporal(() => triggers.deleteSchedule(admin(ctx).orgId, ctx.params.id ?? '')));
    ctx.status = 204;
  });

  for (const [action, paused] of [['pause', true], ['resume', false]] as const) {
    router.post(`/triggers/:id/schedule/${action}`, async (ctx) => {
      const { orgId } = admin(ctx);
      // (an unknown trigger or schedule is told before a malformed body)
      const record = settled(await triggers.ownSchedule(orgId, ctx.params.id ?? ''));
      const { note } = parse(PauseBodySchema, body(ctx));
      const changed = settled(await callTemporal(() => triggers.setPaused(orgId, record.triggerId, paused, note ?? null)));
      ctx.body = await callTemporal(() => triggers.withState(changed));
    });
  }

  router.get('/schedules', async (ctx) => {
    ctx.body = { schedules: await callTemporal(() => triggers.schedules(admin(ctx).orgId)) };
  });

  return router;
}
