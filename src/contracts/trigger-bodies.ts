/**
 * The bodies of triggers and their schedules (schemas/bodies.ts: Trigger, ScheduleView), shared by
 * the management, run-management and schedule routes so that every answer about a trigger has
 * the same shape.
 */
import type { TriggerRecord, TriggerScheduleRecord } from '../registry';
import { scheduleIdFor, type ScheduleState } from '../schedules/schedule-service';

/** The schedule as stored (what the API was given), without live state. */
export function scheduleConfigBody(record: TriggerScheduleRecord) {
  return { scheduleId: scheduleIdFor(record.triggerId), revision: record.revision, ...record.config, updatedAt: record.updatedAt };
}

/** The schedule with Temporal's live state of it. */
export function scheduleBody(record: TriggerScheduleRecord, state: ScheduleState) {
  const { scheduleId: _id, ...live } = state;
  return { ...scheduleConfigBody(record), state: live };
}

/** A trigger; `schedule` is its stored schedule, or one already rendered (with live state), or none. */
export function triggerBody(t: TriggerRecord, schedule?: TriggerScheduleRecord | ReturnType<typeof scheduleBody>) {
  return {
    id: t.id, workflowId: t.workflowId, name: t.name, designatedOutput: t.designatedOutput, tool: t.tool, createdAt: t.createdAt,
    enabled: t.disabledAt === null, disabledAt: t.disabledAt, callbackUrl: t.callbackUrl, priority: t.priority, concurrency: t.concurrency,
    // the preset and its options; the secrets are never shown again (docs/webhooks.md)
    verify: t.verify,
    debounce: t.shaping && 'debounce' in t.shaping ? t.shaping.debounce : null,
    batch: t.shaping && 'batch' in t.shaping ? t.shaping.batch : null,
    schedule: schedule === undefined ? null : 'state' in schedule ? schedule : scheduleConfigBody(schedule),
  };
}
