/**
 * Schedules of triggers (management API, admin bearer token; ScheduleService keeps the Temporal
 * schedules in line with what is stored here):
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
import type { TriggerRecord, TriggerScheduleRecord } from '../../registry';
import { checkInputs } from '../../runs/input-schema';
import { ScheduleRejectedError } from '../../schedules/schedule-service';
import { ScheduleBodySchema, type ScheduleBody } from '../../contracts/schedule-bodies';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { badRequest, notFound, unprocessable } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { adminOf as admin, type GatewayRouter, type GatewayRouterContext, type GatewayState } from '../state';
import { bodyOf as body, parseInput as parse } from '../validate';
import { fieldOf } from '../../common/narrow';
import { callTemporal } from '../temporal-errors';
import { scheduleBody, triggerBody } from '../../contracts/trigger-bodies';
import { ScheduleListSchema, ScheduleViewSchema, TriggerSchema } from '../../contracts/http-bodies';
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

/** A `schedule` field of a request body, with the `schedule.` prefix on each problem. */
export function parseScheduleBody(value: unknown): ScheduleBody {
  const parsed = ScheduleBodySchema.safeParse(value ?? {});
  if (!parsed.success) {
    throw badRequest('invalid_schedule', parsed.error.issues.map((i) => `${['schedule', ...i.path].join('.')}: ${i.message}`).join('; '));
  }
  return parsed.data;
}

/**
 * The inputs a schedule runs with must fit the workflow's latest version (422 invalid_inputs,
 * as a trigger call's would).
 */
export async function checkScheduleInputs(deps: GatewayDeps, workflowId: string, body: ScheduleBody): Promise<void> {
  const latest = await deps.registry.workflows.publishedVersionNumber(workflowId);
  const version = latest ? await deps.registry.workflows.getVersion(workflowId, latest) : undefined;
  if (!version) return; // the trigger store refuses an unpublished workflow with its own message
  const inputs = body.config.inputs;
  const problem = checkInputs({ cacheKey: `${workflowId}@${version.version}`, schema: version.definition.inputSchema, coerce: false }, inputs ?? {});
  if (problem) throw unprocessable(problem.code, `schedule.inputs: ${problem.message}`);
}

/**
 * Converges a schedule just written. When that fails, `undo` restores what was stored before, so
 * that the caller's error means "not done" (a converge then puts Temporal back, or the reconciler
 * does): 400 invalid_schedule naming Temporal's reason when Temporal refused the schedule, 503
 * when it was unreachable.
 */
export async function convergeOrUndo(deps: GatewayDeps, triggerId: string, undo: () => Promise<void>): Promise<void> {
  try {
    await callTemporal(() => deps.schedules.converge(triggerId));
  } catch (err) {
    await undo();
    await deps.schedules.converge(triggerId).catch((cleanup: unknown) => deps.log.warn('could not put a schedule back after a failed change; the reconciler will', { triggerId, error: cleanup }));
    if (err instanceof ScheduleRejectedError) throw badRequest('invalid_schedule', `schedule: the workflow service refused it: ${err.message}`);
    throw err;
  }
}

export function scheduleRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1' });
  router.use(requireAdmin(deps), jsonBody());

  const ownTrigger = async (ctx: GatewayRouterContext): Promise<TriggerRecord> => {
    const trigger = await deps.registry.triggers.get(ctx.params.id ?? '');
    if (!trigger || trigger.orgId !== admin(ctx).orgId) throw notFound('unknown_trigger', `no trigger ${ctx.params.id}`);
    return trigger;
  };
  const ownSchedule = async (ctx: GatewayRouterContext): Promise<TriggerScheduleRecord> => {
    const trigger = await ownTrigger(ctx);
    const record = await deps.registry.schedules.get(trigger.orgId, trigger.id);
    if (!record) throw notFound('no_schedule', `trigger ${trigger.id} has no schedule`);
    return record;
  };
  const withState = async (record: TriggerScheduleRecord) => scheduleBody(record, await callTemporal(() => deps.schedules.state(record.triggerId)));

  mount(router, OPS.getTrigger, async (ctx) => {
    const trigger = await ownTrigger(ctx);
    const record = await deps.registry.schedules.get(trigger.orgId, trigger.id);
    ctx.body = triggerBody(trigger, record ? await withState(record) : undefined);
  });

  mount(router, OPS.putTriggerSchedule, async (ctx) => {
    const trigger = await ownTrigger(ctx);
    const schedule = parseScheduleBody(body(ctx));
    await checkScheduleInputs(deps, trigger.workflowId, schedule);
    const previous = await deps.registry.schedules.get(trigger.orgId, trigger.id);
    const pausedGiven = fieldOf(body(ctx), 'paused') !== undefined;
    const record = await deps.registry.schedules.put(trigger.orgId, trigger.id, {
      ...schedule, paused: pausedGiven || !previous ? schedule.paused : previous.paused, note: pausedGiven || !previous ? schedule.note : previous.note,
    });
    if (!record) throw notFound('unknown_trigger', `no trigger ${trigger.id}`);
    await convergeOrUndo(deps, trigger.id, async () => {
      if (previous) await deps.registry.schedules.put(trigger.orgId, trigger.id, { config: previous.config, paused: previous.paused, note: previous.note });
      else await deps.registry.schedules.delete(trigger.orgId, trigger.id);
    });
    // An update keeps the live pause state; `paused` in the body says so explicitly when given.
    if (previous && pausedGiven) {
      await callTemporal(() => deps.schedules.setPaused(record, schedule.paused, schedule.note));
    }
    ctx.status = previous ? 200 : 201;
    ctx.body = await withState((await deps.registry.schedules.get(trigger.orgId, trigger.id)) ?? record);
  });

  mount(router, OPS.deleteTriggerSchedule, async (ctx) => {
    const record = await ownSchedule(ctx);
    // Registry first: a crash before the Temporal delete leaves an orphan the reconciler removes.
    await deps.registry.schedules.delete(record.orgId, record.triggerId);
    await callTemporal(() => deps.schedules.deleteSchedule(record.triggerId));
    ctx.status = 204;
  });

  for (const [op, paused] of [[OPS.pauseTriggerSchedule, true], [OPS.resumeTriggerSchedule, false]] as const) {
    mount(router, op, async (ctx) => {
      const record = await ownSchedule(ctx);
      const { note } = parse(PauseBodySchema, body(ctx));
      await callTemporal(() => deps.schedules.setPaused(record, paused, note ?? null));
      ctx.body = await withState((await deps.registry.schedules.get(record.orgId, record.triggerId)) ?? record);
    });
  }

  mount(router, OPS.listSchedules, async (ctx) => {
    const records = await deps.registry.schedules.list(admin(ctx).orgId);
    const triggers = new Map((await deps.registry.triggers.list(admin(ctx).orgId)).map((t) => [t.id, t]));
    const schedules = [];
    for (const record of records) {
      schedules.push({ triggerId: record.triggerId, workflowId: triggers.get(record.triggerId)?.workflowId ?? null, ...(await withState(record)) });
    }
    ctx.body = { schedules };
  });

  return router;
}
