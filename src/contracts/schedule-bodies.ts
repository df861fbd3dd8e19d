/**
 * The `schedule` of a trigger as the management API takes it and the registry stores it (its
 * translation into a Temporal ScheduleSpec is src/schedules/schedule-spec.ts). It sits here, below
 * the stores, so that the registry never imports the schedule service. Cron syntax is Temporal's
 * own (5 to 7 fields, `@daily`…): the Temporal server is the authority on it and refuses a bad
 * expression when the schedule is created, which the API reports as 400 invalid_schedule
 * (src/schedules/schedule-service.ts). Everything checkable here is checked here.
 */
import type { ScheduleOverlapPolicy } from '@temporalio/client';
import { z } from 'zod';

/** How Temporal resolves two actions that would run at once; Temporal's own names. */
export const OVERLAP_POLICIES = ['SKIP', 'BUFFER_ONE', 'BUFFER_ALL', 'CANCEL_OTHER', 'TERMINATE_OTHER', 'ALLOW_ALL'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number] & ScheduleOverlapPolicy;

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d{1,9})(ms|s|m|h|d)$/;

function isUnit(unit: string): unit is keyof typeof UNIT_MS {
  return Object.prototype.hasOwnProperty.call(UNIT_MS, unit);
}

/** "90s" → 90000; undefined when not a duration. */
export function durationMs(text: string): number | undefined {
  const match = DURATION.exec(text);
  const unit = match?.[2];
  if (!match || unit === undefined || !isUnit(unit)) return undefined;
  return Number(match[1]) * UNIT_MS[unit];
}

const DurationSchema = z.string().refine((v) => durationMs(v) !== undefined, 'must be a whole number with a unit ms, s, m, h or d, such as "30s" or "15m"');
const TimestampSchema = z.string().datetime({ offset: true, message: 'must be an ISO 8601 timestamp with a zone, such as "2027-01-01T09:00:00Z"' });
const CronSchema = z.string().trim().min(1).max(200)
  .refine((v) => !/^(CRON_)?TZ=/i.test(v), 'give the time zone in `timeZone`, not in the expression');

const MIN_INTERVAL_MS = 1000;
const MAX_INPUTS_BYTES = 256 * 1024;

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The fields of a stored schedule: when to run and with what. */
const scheduleConfigShape = {
  /** one or more cron expressions (Temporal syntax); their times and the interval's are united */
  cron: z.union([CronSchema.transform((v) => [v]), z.array(CronSchema).min(1).max(20)]).optional()
    .meta({ description: 'one or more cron expressions (Temporal syntax: 5 to 7 fields, `@daily`…)' }),
  interval: z.object({ every: DurationSchema, offset: DurationSchema.optional() }).strict().optional()
    .meta({ description: 'a fixed interval such as `{"every": "15m"}`' }),
  /** IANA time zone of the cron expressions */
  timeZone: z.string().min(1).max(100).default('UTC').meta({ description: 'IANA time zone of the cron expressions' }),
  startAt: TimestampSchema.optional(),
  endAt: TimestampSchema.optional(),
  jitter: DurationSchema.optional(),
  overlap: z.enum(OVERLAP_POLICIES).default('SKIP'),
  catchupWindow: DurationSchema.refine((v) => (durationMs(v) ?? 0) >= 10_000, 'must be at least 10s').optional(),
  /** the inputs every scheduled run gets; checked against the workflow's inputSchema */
  inputs: z.record(z.string(), z.unknown()).optional().meta({ description: 'the inputs of every scheduled run, checked against the workflow\'s inputSchema' }),
};

function checkConfig(value: ScheduleConfig, ctx: z.RefinementCtx): void {
  if (!value.cron && !value.interval) ctx.addIssue({ code: 'custom', message: 'give `cron` or `interval` (or both)' });
  if (!isTimeZone(value.timeZone)) ctx.addIssue({ code: 'custom', path: ['timeZone'], message: `unknown time zone ${JSON.stringify(value.timeZone)} (an IANA name such as "Europe/Berlin")` });
  if (value.interval) {
    const every = durationMs(value.interval.every) ?? 0;
    if (every < MIN_INTERVAL_MS) ctx.addIssue({ code: 'custom', path: ['interval', 'every'], message: 'must be at least 1s' });
    if (value.interval.offset && (durationMs(value.interval.offset) ?? 0) >= every) {
      ctx.addIssue({ code: 'custom', path: ['interval', 'offset'], message: 'must be shorter than `every`' });
    }
  }
  if (value.startAt && value.endAt && Date.parse(value.endAt) <= Date.parse(value.startAt)) {
    ctx.addIssue({ code: 'custom', path: ['endAt'], message: 'must be after startAt' });
  }
  if (value.inputs && Buffer.byteLength(JSON.stringify(value.inputs)) > MAX_INPUTS_BYTES) {
    ctx.addIssue({ code: 'custom', path: ['inputs'], message: `must be at most ${MAX_INPUTS_BYTES} bytes of JSON` });
  }
}

/** The stored schedule: when to run and with what; pause state lives apart (it changes without a revision). */
const ScheduleConfigObject = z.object(scheduleConfigShape).strict();
export const ScheduleConfigSchema = ScheduleConfigObject.superRefine(checkConfig);
export type ScheduleConfig = z.infer<typeof ScheduleConfigObject>;

/**
 * The `schedule` field of a create or update call: the config plus its initial pause state (the
 * OpenAPI document shows it as `Schedule`).
 */
export const ScheduleBodySchema = z.object({
  ...scheduleConfigShape,
  paused: z.boolean().default(false),
  note: z.string().max(500).optional(),
}).strict().superRefine(checkConfig).transform(({ paused, note, ...config }) => ({ config, paused, note: note ?? null }))
  .meta({ id: 'Schedule', description: 'A trigger\'s schedule: `cron` and/or `interval`, the inputs of its runs, and whether it starts paused' });
export type ScheduleBody = z.infer<typeof ScheduleBodySchema>;
