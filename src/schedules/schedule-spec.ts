/**
 * A trigger's stored schedule (src/contracts/schedule-bodies.ts) as a Temporal ScheduleSpec.
 */
import type { ScheduleSpec } from '@temporalio/client';
import { durationMs, type ScheduleConfig } from '../contracts/schedule-bodies';

/** The Temporal ScheduleSpec of a stored config. */
export function temporalSpec(config: ScheduleConfig): ScheduleSpec {
  return {
    ...(config.cron ? { cronExpressions: config.cron } : {}),
    ...(config.interval ? { intervals: [{ every: durationMs(config.interval.every)!, ...(config.interval.offset ? { offset: durationMs(config.interval.offset)! } : {}) }] } : {}),
    timezone: config.timeZone,
    ...(config.startAt ? { startAt: new Date(config.startAt) } : {}),
    ...(config.endAt ? { endAt: new Date(config.endAt) } : {}),
    ...(config.jitter ? { jitter: durationMs(config.jitter)! } : {}),
  };
}
