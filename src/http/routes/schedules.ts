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
import { ScheduleListSchema, ScheduleViewSchema, TriggerSchema } from '../../contracts/http-bodies';
import { ScheduleBodySchema } from '../../contracts/schedule-bodies';
import { mount, on, type Operations } from '../operation';
import { admin as security, errors, id, json, jsonRequest, noContent } from '../openapi-kit';

export const PauseBodySchema = z.object({ note: z.string().max(500).optional() }).strict();

const trigger = id('id', 'a trigger');

export const SCHEDULE_OPERATIONS = {
  getTrigger: {
    method: 'get', path: '/api/v1/triggers/:id', permission: 'read',
    tags: ['management'], summary: 'Read a trigger, with its schedule\'s live state', security, requestParams: { path: trigger },
    responses: { '200': json(TriggerSchema, 'the trigger'), ...errors(401, 404, 503) },
  },
  putTriggerSchedule: {
    method: 'put', path: '/api/v1/triggers/:id/schedule', permission: 'triggers.write', audit: on('schedule.set', 'trigger', 'id'),
    tags: ['schedules'], summary: 'Set or replace a trigger\'s schedule (a Temporal Schedule)', security,
    requestParams: { path: trigger }, requestBody: jsonRequest(ScheduleBodySchema),
    responses: { '200': json(ScheduleViewSchema, 'replaced'), '201': json(ScheduleViewSchema, 'created'), ...errors(400, 401, 404, 415, 422, 503) },
  },
  deleteTriggerSchedule: {
    method: 'delete', path: '/api/v1/triggers/:id/schedule', permission: 'triggers.write', audit: on('schedule.deleted', 'trigger', 'id'),
    tags: ['schedules'], summary: 'Remove a trigger\'s schedule (the trigger stays)', security,
    requestParams: { path: trigger }, responses: { '204': noContent, ...errors(401, 404, 503) },
  },
  pauseTriggerSchedule: {
    method: 'post', path: '/api/v1/triggers/:id/schedule/pause', permission: 'triggers.write', audit: on('schedule.paused', 'trigger', 'id'),
    tags: ['schedules'], summary: 'Pause a trigger\'s schedule', security, requestParams: { path: trigger }, requestBody: jsonRequest(PauseBodySchema),
    responses: { '200': json(ScheduleViewSchema, 'the schedule'), ...errors(400, 401, 404, 415, 503) },
  },
  resumeTriggerSchedule: {
    method: 'post', path: '/api/v1/triggers/:id/schedule/resume', permission: 'triggers.write', audit: on('schedule.resumed', 'trigger', 'id'),
    tags: ['schedules'], summary: 'Resume a paused schedule', security, requestParams: { path: trigger }, requestBody: jsonRequest(PauseBodySchema),
    responses: { '200': json(ScheduleViewSchema, 'the schedule'), ...errors(400, 401, 404, 415, 503) },
  },
  listSchedules: {
    method: 'get', path: '/api/v1/schedules', permission: 'read',
    tags: ['schedules'], summary: 'The organization\'s schedules with their live state', security,
    responses: { '200': json(ScheduleListSchema, 'the schedules'), ...errors(401, 503) },
  },
} satisfies Operations;
const OPS = SCHEDULE_OPERATIONS;

export function scheduleRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1' });
  router.use(requireAdmin(deps), jsonBody());
  // (every call may reach Temporal: unreachable is a 503, callTemporal)
  const { triggers } = deps.management;

  mount(router, OPS.getTrigger, async (ctx) => {
    ctx.body = settled(await callTemporal(() => triggers.view(admin(ctx).orgId, ctx.params.id ?? '')));
  });

  mount(router, OPS.putTriggerSchedule, async (ctx) => {
    const put = settled(await callTemporal(() => triggers.putSchedule(admin(ctx).orgId, ctx.params.id ?? '', body(ctx))));
    ctx.status = put.created ? 201 : 200;
    ctx.body = put.schedule;
  });

  mount(router, OPS.deleteTriggerSchedule, async (ctx) => {
    settled(await callTemporal(() => triggers.deleteSchedule(admin(ctx).orgId, ctx.params.id ?? '')));
    ctx.status = 204;
  });

  for (const [op, paused] of [[OPS.pauseTriggerSchedule, true], [OPS.resumeTriggerSchedule, false]] as const) {
    mount(router, op, async (ctx) => {
      const { orgId } = admin(ctx);
      // (an unknown trigger or schedule is told before a malformed body)
      const record = settled(await triggers.ownSchedule(orgId, ctx.params.id ?? ''));
      const { note } = parse(PauseBodySchema, body(ctx));
      const changed = settled(await callTemporal(() => triggers.setPaused(orgId, record.triggerId, paused, note ?? null)));
      ctx.body = await callTemporal(() => triggers.withState(changed));
    });
  }

  mount(router, OPS.listSchedules, async (ctx) => {
    ctx.body = { schedules: await callTemporal(() => triggers.schedules(admin(ctx).orgId)) };
  });

  return router;
}
