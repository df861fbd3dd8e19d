/**
 * Trigger administration, the one sequence behind the management API and the console: creating
 * a trigger (with its schedule), deleting it, disabling and enabling it, and its schedule's
 * writes (set, remove, pause, resume). Each schedule write goes row first, Temporal second
 * (ScheduleService.convergeOrUndo), so that a refusal from Temporal leaves what was stored before.
 * Another organization's trigger is refused like a missing one.
 *
 * A fault of Temporal (unreachable) is thrown as Temporal's error; the door words it.
 */
import { RegistryError, type Registry, type TriggerChange, type TriggerRecord, type TriggerScheduleRecord } from '../registry';
import { fieldOf } from '../common/narrow';
import { scheduleBody, triggerBody } from '../contracts/trigger-bodies';
import { checkInputs } from '../runs/input-schema';
import { ScheduleRejectedError, type ScheduleService, type ScheduleState } from '../schedules/schedule-service';
import { ScheduleBodySchema, type ScheduleBody } from '../contracts/schedule-bodies';
import { done, refused, type ManagementRefusal, type Outcome } from './outcome';
import type { CreateTriggerInput, UpdateTriggerInput } from './schemas';
import type { TriggerWebhookParts, WebhookReceiver } from '../triggers/webhooks/receiver';

export type TriggerBody = ReturnType<typeof triggerBody>;
export type ScheduleView = ReturnType<typeof scheduleBody>;

export interface TriggerAdminDeps {
  registry: Registry;
  schedules: ScheduleService;
  /** verified and shaped triggers (docs/webhooks.md); without it they are refused */
  webhooks?: WebhookReceiver;
}

type WebhookFields = ReturnType<WebhookReceiver['triggerFields']>;

export class TriggerAdmin {
  constructor(private readonly deps: TriggerAdminDeps) {}

  /** A new trigger of the organization's workflow, with its schedule converged; its body as the API answers it. */
  async create(orgId: string, parsed: CreateTriggerInput): Promise<Outcome<TriggerBody>> {
    const { schedule: scheduleField, verify, debounce, batch, ...input } = parsed;
    const schedule = scheduleField === undefined ? undefined : scheduleOf(scheduleField);
    if (schedule && !schedule.ok) return schedule;
    const webhook = this.webhookFields({ verify, debounce, batch });
    if (webhook && !webhook.ok) return webhook;
    if (schedule && await this.deps.registry.workflows.get(orgId, input.workflowId)) {
      const problem = await this.inputsProblem(input.workflowId, schedule.value);
      if (problem) return problem;
    }
    const { registry } = this.deps;
    let trigger: TriggerRecord;
    try {
      trigger = await registry.triggers.create(orgId, { ...input, ...webhook?.value, schedule: schedule?.value });
    } catch (err) {
      if (!(err instanceof RegistryError)) throw err;
      if (err.code === 'NOT_FOUND') return refused('UNKNOWN_WORKFLOW', `no workflow ${input.workflowId}`);
      if (err.code === 'NOT_PUBLISHED') return refused('NOT_PUBLISHED', `workflow ${input.workflowId} has no published version: publish it first`);
      if (err.code === 'CONFLICT') return refused('TOOL_NAME_TAKEN', err.message);
      return refused('INVALID_DESIGNATED_OUTPUT', err.message);
    }
    // The row (with its schedule) is committed first: see ScheduleService for why.
    if (schedule) {
      const failed = await this.converged(trigger.id, async () => { await registry.triggers.delete(orgId, trigger.id); });
      if (failed) return failed;
    }
    return done(triggerBody(trigger, schedule && await registry.schedules.get(orgId, trigger.id)));
  }

  /**
   * A verified or shaped trigger's fields (docs/webhooks.md), none for an ordinary one: its ID is
   * drawn here, before the row, because its secrets are sealed against it.
   */
  private webhookFields(parts: TriggerWebhookParts): Outcome<WebhookFields> | undefined {
    if (parts.verify === undefined && parts.debounce === undefined && parts.batch === undefined) return undefined;
    // checked here, not by a refinement of the schema: the OpenAPI document extends it, which a refined one cannot be
    if (parts.debounce && parts.batch) return refused('INVALID_SHAPING', 'batch: a trigger debounces or batches, not both');
    if (!this.deps.webhooks) return refused('WEBHOOKS_UNAVAILABLE', 'this gateway offers no verified or shaped triggers');
    return done(this.deps.webhooks.triggerFields(parts));
  }

  /**
   * Changes the organization's trigger in place: the same ID, so its URL, API keys, forms, schedule
   * and secrets stay (`verify.secrets`, when given, replaces them). The gateways see the change at
   * their next call of it (TriggerStore.liveState's revision). A schedule follows a new workflow or
   * priority at once.
   */
  async update(orgId: string, triggerId: string, input: UpdateTriggerInput): Promise<Outcome<TriggerBody>> {
    const own = await this.own(orgId, triggerId);
    if (!own.ok) return own;
    const was = own.value;
    const { verify, debounce, batch, ...fields } = input;
    if (debounce && batch) return refused('INVALID_SHAPING', 'batch: a trigger debounces or batches, not both');
    const { webhooks } = this.deps;
    if ((verify || debounce || batch) && !webhooks) return refused('WEBHOOKS_UNAVAILABLE', 'this gateway offers no verified or shaped triggers');
    const change: TriggerChange = { ...fields };
    if (verify === null) change.verify = null;
    if (verify && webhooks) {
      if (!verify.secrets && !was.verify) return refused('INVALID_VERIFY', 'verify.secrets: an API key trigger made verified needs its signing secret');
      Object.assign(change, webhooks.changeFields(triggerId, verify));
    }
    if (debounce) change.shaping = { debounce };
    else if (batch) change.shaping = { batch };
    else if ((debounce === null && was.shaping && 'debounce' in was.shaping) || (batch === null && was.shaping && 'batch' in was.shaping)) change.shaping = null;
    let trigger: TriggerRecord | undefined;
    try {
      trigger = await this.deps.registry.triggers.update(orgId, triggerId, change);
    } catch (err) {
      if (!(err instanceof RegistryError)) throw err;
      if (err.code === 'NOT_FOUND') return refused('UNKNOWN_WORKFLOW', `no workflow ${input.workflowId ?? was.workflowId}`);
      if (err.code === 'NOT_PUBLISHED') return refused('NOT_PUBLISHED', `workflow ${input.workflowId ?? was.workflowId} has no published version: publish it first`);
      if (err.code === 'CONFLICT') return refused('TOOL_NAME_TAKEN', err.message);
      return refused('INVALID_DESIGNATED_OUTPUT', err.message);
    }
    if (!trigger) return unknownTrigger(triggerId);
    const schedule = await this.deps.registry.schedules.get(orgId, triggerId);
    if (schedule && (trigger.workflowId !== was.workflowId || trigger.priority !== was.priority)) {
      // a new revision of the schedule, so that its Temporal schedule is brought to the trigger's new workflow
      await this.deps.registry.schedules.put(orgId, triggerId, { config: schedule.config, paused: schedule.paused, note: schedule.note });
      const failed = await this.converged(triggerId, async () => undefined);
      if (failed) return failed;
    }
    return done(triggerBody(trigger, await this.deps.registry.schedules.get(orgId, triggerId)));
  }

  /** Deletes the organization's trigger and its schedule. */
  async delete(orgId: string, triggerId: string): Promise<Outcome<void>> {
    const scheduled = await this.deps.registry.schedules.get(orgId, triggerId);
    if (!(await this.deps.registry.triggers.delete(orgId, triggerId))) return unknownTrigger(triggerId);
    if (scheduled) await this.deps.schedules.deleteLogged(scheduled.triggerId);
    return done(undefined);
  }

  async setDisabled(orgId: string, triggerId: string, disabled: boolean): Promise<Outcome<TriggerBody>> {
    const trigger = await this.deps.registry.triggers.setDisabled(orgId, triggerId, disabled);
    if (!trigger) return unknownTrigger(triggerId);
    return done(triggerBody(trigger, await this.deps.registry.schedules.get(trigger.orgId, trigger.id)));
  }

  /** The organization's trigger. */
  async own(orgId: string, triggerId: string): Promise<Outcome<TriggerRecord>> {
    const trigger = await this.deps.registry.triggers.get(triggerId);
    return trigger && trigger.orgId === orgId ? done(trigger) : unknownTrigger(triggerId);
  }

  /** The trigger with its schedule and the schedule's live state. */
  async view(orgId: string, triggerId: string): Promise<Outcome<TriggerBody>> {
    const trigger = await this.own(orgId, triggerId);
    if (!trigger.ok) return trigger;
    const record = await this.deps.registry.schedules.get(orgId, triggerId);
    return done(triggerBody(trigger.value, record ? await this.withState(record) : undefined));
  }

  /** The stored schedule with Temporal's live state of it (a schedule lost in Temporal is recreated first). */
  async withState(record: TriggerScheduleRecord): Promise<ScheduleView> {
    return scheduleBody(record, await this.deps.schedules.state(record.triggerId));
  }

  /** Temporal's live state of the trigger's schedule. */
  async liveState(triggerId: string): Promise<ScheduleState> {
    return this.deps.schedules.state(triggerId);
  }

  /** The organization's schedules with their live state, each with its trigger's workflow. */
  async schedules(orgId: string): Promise<(ScheduleView & { triggerId: string; workflowId: string | null })[]> {
    const records = await this.deps.registry.schedules.list(orgId);
    const triggers = new Map((await this.deps.registry.triggers.list(orgId)).map((t) => [t.id, t]));
    const schedules = [];
    for (const record of records) {
      schedules.push({ triggerId: record.triggerId, workflowId: triggers.get(record.triggerId)?.workflowId ?? null, ...(await this.withState(record)) });
    }
    return schedules;
  }

  /**
   * Sets (or replaces) the trigger's schedule from a request body. An update keeps the live
   * pause state; `paused` in the body says so explicitly when given. `created`: there was none.
   */
  async putSchedule(orgId: string, triggerId: string, value: unknown): Promise<Outcome<{ created: boolean; schedule: ScheduleView }>> {
    const trigger = await this.own(orgId, triggerId);
    if (!trigger.ok) return trigger;
    const parsed = scheduleOf(value);
    if (!parsed.ok) return parsed;
    const schedule = parsed.value;
    const problem = await this.inputsProblem(trigger.value.workflowId, schedule);
    if (problem) return problem;
    const { registry } = this.deps;
    const previous = await registry.schedules.get(orgId, triggerId);
    const pausedGiven = fieldOf(value, 'paused') !== undefined;
    const record = await registry.schedules.put(orgId, triggerId, {
      ...schedule, paused: pausedGiven || !previous ? schedule.paused : previous.paused, note: pausedGiven || !previous ? schedule.note : previous.note,
    });
    if (!record) return unknownTrigger(triggerId);
    const failed = await this.converged(triggerId, async () => {
      if (previous) await registry.schedules.put(orgId, triggerId, { config: previous.config, paused: previous.paused, note: previous.note });
      else await registry.schedules.delete(orgId, triggerId);
    });
    if (failed) return failed;
    if (previous && pausedGiven) await this.deps.schedules.setPaused(record, schedule.paused, schedule.note);
    return done({ created: !previous, schedule: await this.withState((await registry.schedules.get(orgId, triggerId)) ?? record) });
  }

  /**
   * Replaces the inputs of the trigger's schedule, its timing kept (the console's edit): the same
   * write as putSchedule with the stored config and these inputs (checked against the latest
   * version, a new revision, the Temporal schedule's action converged to start runs with them, the
   * pause state kept). Empty inputs: the runs get none.
   */
  async putScheduleInputs(orgId: string, triggerId: string, inputs: Record<string, unknown>): Promise<Outcome<ScheduleView>> {
    const record = await this.ownSchedule(orgId, triggerId);
    if (!record.ok) return record;
    const { inputs: _previous, ...config } = record.value.config;
    const put = await this.putSchedule(orgId, triggerId, { ...config, ...(Object.keys(inputs).length > 0 ? { inputs } : {}) });
    return put.ok ? done(put.value.schedule) : put;
  }

  /** Removes the trigger's schedule (the trigger stays): registry first, so a crash before the Temporal delete leaves an orphan the reconciler removes. */
  async deleteSchedule(orgId: string, triggerId: string): Promise<Outcome<void>> {
    const record = await this.ownSchedule(orgId, triggerId);
    if (!record.ok) return record;
    await this.deps.registry.schedules.delete(orgId, triggerId);
    await this.deps.schedules.deleteSchedule(triggerId);
    return done(undefined);
  }

  /** Pauses or resumes the trigger's schedule; the stored schedule after the change. */
  async setPaused(orgId: string, triggerId: string, paused: boolean, note: string | null): Promise<Outcome<TriggerScheduleRecord>> {
    const record = await this.ownSchedule(orgId, triggerId);
    if (!record.ok) return record;
    await this.deps.schedules.setPaused(record.value, paused, note);
    return done((await this.deps.registry.schedules.get(orgId, triggerId)) ?? record.value);
  }

  /** The organization's trigger's stored schedule. */
  async ownSchedule(orgId: string, triggerId: string): Promise<Outcome<TriggerScheduleRecord>> {
    const trigger = await this.own(orgId, triggerId);
    if (!trigger.ok) return trigger;
    const record = await this.deps.registry.schedules.get(orgId, triggerId);
    return record ? done(record) : refused('NO_SCHEDULE', `trigger ${triggerId} has no schedule`);
  }

  /** The inputs a schedule runs with must fit the workflow's latest version, as a trigger call's would. */
  private async inputsProblem(workflowId: string, body: ScheduleBody): Promise<ManagementRefusal | undefined> {
    const latest = await this.deps.registry.workflows.publishedVersionNumber(workflowId);
    const version = latest ? await this.deps.registry.workflows.getVersion(workflowId, latest) : undefined;
    if (!version) return undefined; // the trigger store refuses an unpublished workflow with its own message
    const problem = checkInputs({ cacheKey: `${workflowId}@${version.version}`, schema: version.definition.inputSchema, coerce: false }, body.config.inputs ?? {});
    if (!problem) return undefined;
    // each input that does not fit, under the schedule's `inputs` (the console puts it beside its field)
    const issues = problem.issues?.map((i) => ({ path: ['inputs', ...i.path], message: i.message }));
    return refused(problem.code === 'invalid_inputs' ? 'INVALID_INPUTS' : 'INVALID_INPUT_SCHEMA', `schedule.inputs: ${problem.message}`, issues);
  }

  /** Converges the schedule just written, undone on failure; Temporal's refusal as a value, its other faults thrown. */
  private async converged(triggerId: string, undo: () => Promise<void>): Promise<ManagementRefusal | undefined> {
    try {
      await this.deps.schedules.convergeOrUndo(triggerId, undo);
      return undefined;
    } catch (err) {
      if (err instanceof ScheduleRejectedError) return refused('INVALID_SCHEDULE', `schedule: the workflow service refused it: ${err.message}`);
      throw err;
    }
  }
}

function unknownTrigger(triggerId: string): ManagementRefusal {
  return refused('UNKNOWN_TRIGGER', `no trigger ${triggerId}`);
}

/** A `schedule` field of a request body, with the `schedule.` prefix on each problem. */
function scheduleOf(value: unknown): Outcome<ScheduleBody> {
  const parsed = ScheduleBodySchema.safeParse(value ?? {});
  if (parsed.success) return done(parsed.data);
  return refused('INVALID_SCHEDULE', parsed.error.issues.map((i) => `${['schedule', ...i.path].join('.')}: ${i.message}`).join('; '));
}
