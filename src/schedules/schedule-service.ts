/**
 * Triggers' schedules as Temporal Schedules. The registry row (trigger_schedules) is the truth;
 * each Temporal schedule is brought in line with it by converge(), which every write calls after
 * committing the row, and which the reconciler calls for every row now and then:
 *
 *   row, no schedule       create it (with the row's pause state)
 *   row, older schedule    update spec, policies and action (the action's memo carries the row's
 *                          revision and the version it runs; a newer publish is a change too)
 *   schedule, no row       delete it (an orphan: its trigger, or its schedule, was deleted)
 *
 * Writes go registry first, Temporal second, so a gateway that dies between the two leaves a row
 * without its schedule (the reconciler creates it) or, for a delete, a schedule without its row
 * (the reconciler deletes it): never a schedule that outlives its trigger for longer than one
 * reconcile period. A schedule belongs to the flowgate whose task queue its action names: two
 * installations sharing a namespace leave each other's schedules alone.
 *
 * The scheduled action starts the generic workflow (runAutomation) with the schedule's input, the
 * latest published version at the time of the last converge; Temporal names each run
 * `<triggerId>-<scheduled time>` and the run takes its ID from there (workflows/run/scheduled-run.ts).
 * The pause state is Temporal's (operators may pause from the Web UI or CLI); the row keeps the
 * state to recreate a lost schedule with.
 *
 * One piece (over 300 lines): the row-then-schedule write order and converge() are one protocol;
 * every write and the reconciler share its comparison of a row with its schedule.
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError, type Client, type ScheduleDescription, type ScheduleOptionsStartWorkflowAction, type ScheduleHandle } from '@temporalio/client';
import type { Priority } from '@temporalio/common';
import { decodeMapFromPayloads } from '@temporalio/common/lib/internal-non-workflow';
import { startPriority } from '../common/priority';
import { buildRunMemo, type RunMemo } from '../common/run-memo';
import { ENGINE_LEVEL, type RunInput } from '../common/run-types';
import { runDetailsText, runSummaryText } from '../common/run-labels';
import { runExecutionTimeoutMs } from '../common/run-time-limit';
import { nameAttribute, SEARCH_ATTRIBUTES } from '../common/search-attributes';
import { WORKFLOW_TYPES, type RunAutomationWorkflow } from '../common/workflow-contracts';
import type { Logger } from '../observability/logger';
import type { Registry, TriggerRecord, TriggerScheduleRecord, WorkflowVersion } from '../registry';
import { checkInputs } from '../runs/input-schema';
import { runInputFor } from '../runs/run-input';
import { durationMs } from '../contracts/schedule-bodies';
import { temporalSpec } from './schedule-spec';
import { fieldOf, isRecord } from '../common/narrow';

/** The Temporal schedule ID of a trigger's schedule. */
const SCHEDULE_ID_PREFIX = 'flowgate-';

export function scheduleIdFor(triggerId: string): string {
  return `${SCHEDULE_ID_PREFIX}${triggerId}`;
}

/** The schedule-level memo: whose schedule this is (it never changes: Temporal cannot update it). */
/** A memo field flowgate wrote, seen when listing all of the namespace's schedules (other writers' too). */
function isScheduleMarker(value: unknown): value is ScheduleMarker {
  return isRecord(value) && typeof value.taskQueue === 'string' && typeof value.triggerId === 'string';
}

interface ScheduleMarker {
  taskQueue: string;
  orgId: string;
  triggerId: string;
  workflowId: string;
}

/** Temporal refused the schedule (a cron expression it cannot parse, a time zone it does not know). */
export class ScheduleRejectedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ScheduleRejectedError';
  }
}

export type ConvergeOutcome = 'created' | 'updated' | 'unchanged' | 'deleted' | 'absent';

export interface ScheduleState {
  scheduleId: string;
  paused: boolean;
  note: string | null;
  /** the workflow version the scheduled runs start with */
  automationVersion: number | null;
  /** ISO 8601 UTC, the next few */
  nextFireTimes: string[];
  /** the latest runs the schedule started, oldest first */
  recentRuns: { runId: string; scheduledAt: string; startedAt: string }[];
  runningRuns: string[];
  actionsTaken: number;
  actionsSkippedOverlap: number;
}

export interface ScheduleServiceDeps {
  client: Client;
  registry: Registry;
  taskQueue: string;
  log: Pick<Logger, 'info' | 'warn'>;
}

/** The action a schedule row asks for, and whether its inputs still fit the version it runs. */
interface DesiredAction {
  /** `priority`: the SDK sends it (schedule-helpers.js) though its options type leaves it out */
  action: ScheduleOptionsStartWorkflowAction<RunAutomationWorkflow> & { priority?: Priority };
  version: number;
  inputsProblem?: string;
}

const STALE = Symbol('stale');
const RECONCILE_PAGE = 200;

export class ScheduleService {
  constructor(private readonly deps: ScheduleServiceDeps) {}

  private handle(triggerId: string): ScheduleHandle {
    return this.deps.client.schedule.getHandle(scheduleIdFor(triggerId));
  }

  /**
   * Brings the Temporal schedule of `triggerId` in line with the registry. Throws
   * ScheduleRejectedError when Temporal refuses the spec.
   */
  async converge(triggerId: string, attempt = 1): Promise<ConvergeOutcome> {
    const record = await this.deps.registry.schedules.getAny(triggerId);
    const trigger = record && await this.deps.registry.triggers.get(triggerId);
    const version = trigger && await this.latestVersion(trigger.workflowId);
    if (!record || !trigger || !version) return (await this.deleteSchedule(triggerId)) ? 'deleted' : 'absent';
    const desired = this.desiredAction(trigger, record, version);
    const options = this.scheduleOptions(record, desired);
    const handle = this.handle(triggerId);
    let description: ScheduleDescription | undefined;
    try {
      description = await handle.describe();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
    if (!description) {
      try {
        await rejectedAs(() => this.deps.client.schedule.create({
          scheduleId: scheduleIdFor(triggerId),
          ...options,
          memo: { flowgate: { taskQueue: this.deps.taskQueue, orgId: record.orgId, triggerId, workflowId: trigger.workflowId } satisfies ScheduleMarker },
          state: { paused: record.paused || Boolean(desired.inputsProblem), note: desired.inputsProblem ?? record.note ?? undefined },
        }));
      } catch (err) {
        // Created meanwhile (by another converge): compare with that one, once.
        if (!(err instanceof ScheduleAlreadyRunning) || attempt > 1) throw err;
        return this.converge(triggerId, attempt + 1);
      }
      // A delete that ran while this created must not leave the schedule behind.
      if (!(await this.deps.registry.schedules.getAny(triggerId))) {
        await this.deleteSchedule(triggerId);
        return 'deleted';
      }
      return 'created';
    }
    const actual = actionMemo(description);
    // A schedule made before runs carried their organization's fairness key is brought in line once.
    if (actual?.scheduleRevision === record.revision && actual.automationVersion === desired.version
      && samePriority(description.action.priority, desired.action.priority)) return 'unchanged';
    try {
      await rejectedAs(() => handle.update((previous) => {
        const previousRevision = actionMemo(previous)?.scheduleRevision ?? 0;
        if (previousRevision > record.revision) throw STALE;
        const paused = previous.state.paused || Boolean(desired.inputsProblem);
        return {
          ...options,
          state: { paused, note: desired.inputsProblem ?? previous.state.note, remainingActions: previous.state.remainingActions },
        };
      }));
    } catch (err) {
      if (err === STALE) return 'unchanged';
      throw err;
    }
    return 'updated';
  }

  /**
   * The second half of a write: converges the schedule whose row was just written. When that
   * fails, `undo` restores what was stored before, so that the caller's error means "not done"
   * (a converge then puts Temporal back, or the reconciler does), and the error is thrown on:
   * ScheduleRejectedError when Temporal refused the schedule, Temporal's own when unreachable.
   */
  async convergeOrUndo(triggerId: string, undo: () => Promise<void>): Promise<void> {
    try {
      await this.converge(triggerId);
    } catch (err) {
      await undo();
      await this.converge(triggerId).catch((cleanup: unknown) => this.deps.log.warn('could not put a schedule back after a failed change; the reconciler will', { triggerId, error: cleanup }));
      throw err;
    }
  }

  /**
   * After the registry row is gone: a Temporal schedule that cannot be deleted now is an orphan
   * the reconciler deletes; the caller's delete has happened either way.
   */
  async deleteLogged(triggerId: string): Promise<void> {
    await this.deleteSchedule(triggerId).catch((err: unknown) => {
      this.deps.log.warn('could not delete the Temporal schedule of a deleted trigger; the reconciler will', { triggerId, error: err });
    });
  }

  /** Deletes the Temporal schedule; false when there was none. */
  async deleteSchedule(triggerId: string): Promise<boolean> {
    try {
      await this.handle(triggerId).delete();
      return true;
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) return false;
      throw err;
    }
  }

  /** Pauses or resumes the schedule (recorded in the registry first, for a schedule that must be recreated). */
  async setPaused(record: TriggerScheduleRecord, paused: boolean, note: string | null): Promise<void> {
    await this.deps.registry.schedules.setPaused(record.orgId, record.triggerId, paused, note);
    const handle = this.handle(record.triggerId);
    try {
      if (paused) await handle.pause(note ?? 'paused through flowgate');
      else await handle.unpause(note ?? 'resumed through flowgate');
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
      await this.converge(record.triggerId); // lost: recreated with the state just recorded
    }
  }

  /** The live state of the schedule; a schedule missing in Temporal is recreated first. */
  async state(triggerId: string): Promise<ScheduleState> {
    let description: ScheduleDescription;
    try {
      description = await this.handle(triggerId).describe();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
      await this.converge(triggerId);
      description = await this.handle(triggerId).describe();
    }
    return {
      scheduleId: description.scheduleId,
      paused: description.state.paused,
      note: description.state.note ?? null,
      automationVersion: actionMemo(description)?.automationVersion ?? null,
      nextFireTimes: description.info.nextActionTimes.map((t) => t.toISOString()),
      recentRuns: description.info.recentActions.map((a) => ({
        runId: a.action.workflow.workflowId, scheduledAt: a.scheduledAt.toISOString(), startedAt: a.takenAt.toISOString(),
      })),
      runningRuns: description.info.runningActions.map((a) => a.workflow.workflowId),
      actionsTaken: description.info.numActionsTaken,
      actionsSkippedOverlap: description.info.numActionsSkippedOverlap,
    };
  }

  /** Converges the schedules of one workflow's triggers (after a publish); failures are logged, the reconciler retries. */
  async convergeWorkflow(orgId: string, workflowId: string): Promise<void> {
    for (const record of await this.deps.registry.schedules.list(orgId, workflowId)) {
      await this.convergeLogged(record.triggerId);
    }
  }

  /**
   * One pass over everything: every row converged, every schedule of this installation without a
   * row deleted. Returns what it did, for the log and tests.
   */
  async reconcile(): Promise<Record<ConvergeOutcome | 'failed', number>> {
    const counts = { created: 0, updated: 0, unchanged: 0, deleted: 0, absent: 0, failed: 0 };
    for (let after = ''; ;) {
      const ids = await this.deps.registry.schedules.triggerIds(after, RECONCILE_PAGE);
      for (const id of ids) counts[await this.convergeLogged(id)]++;
      if (ids.length < RECONCILE_PAGE) break;
      after = ids[ids.length - 1]!;
    }
    for await (const summary of this.flowgateSchedules()) {
      const marker = fieldOf(summary.memo, 'flowgate');
      if (!isScheduleMarker(marker) || marker.taskQueue !== this.deps.taskQueue || summary.scheduleId !== scheduleIdFor(marker.triggerId)) continue;
      // Read after the schedule was seen: a schedule is created only once its row is committed.
      if (await this.deps.registry.schedules.getAny(marker.triggerId)) continue;
      this.deps.log.info('deleting a schedule whose trigger schedule is gone', { scheduleId: summary.scheduleId });
      if (await this.deleteSchedule(marker.triggerId)) counts.deleted++;
    }
    return counts;
  }

  /**
   * The namespace's schedules named like flowgate's, with their memos opened. Listed raw and opened
   * one by one: a schedule sealed under a data key this process lacks (another deployment on the
   * namespace, a key dropped from the ring) is passed over, not allowed to fail the whole pass, as
   * the run list does (src/runs/run-list.ts).
   */
  private async *flowgateSchedules(): AsyncIterable<{ scheduleId: string; memo: Record<string, unknown> | undefined }> {
    const { client } = this.deps;
    const converter = client.workflow.options.loadedDataConverter;
    let page: Uint8Array | undefined;
    for (;;) {
      const response = await client.workflowService.listSchedules({ namespace: client.options.namespace, maximumPageSize: RECONCILE_PAGE, nextPageToken: page });
      for (const entry of response.schedules ?? []) {
        const scheduleId = entry.scheduleId ?? '';
        if (!scheduleId.startsWith(SCHEDULE_ID_PREFIX)) continue;
        let memo: Record<string, unknown> | undefined;
        try {
          memo = await decodeMapFromPayloads(converter, entry.memo?.fields);
        } catch (err) {
          this.deps.log.warn('passing over a schedule whose memo this process cannot open', { scheduleId, error: err });
          continue;
        }
        yield { scheduleId, memo };
      }
      if (!response.nextPageToken || response.nextPageToken.length === 0) return;
      page = response.nextPageToken;
    }
  }

  private async convergeLogged(triggerId: string): Promise<ConvergeOutcome | 'failed'> {
    try {
      return await this.converge(triggerId);
    } catch (err) {
      this.deps.log.warn('could not bring a schedule in line with its trigger; the next reconcile retries', { triggerId, error: err });
      return 'failed';
    }
  }

  private async latestVersion(workflowId: string): Promise<WorkflowVersion | undefined> {
    const latest = await this.deps.registry.workflows.publishedVersionNumber(workflowId);
    return latest ? this.deps.registry.workflows.getVersion(workflowId, latest) : undefined;
  }

  private desiredAction(trigger: TriggerRecord, record: TriggerScheduleRecord, version: WorkflowVersion): DesiredAction {
    const inputs = record.config.inputs ?? '';
    const problem = checkInputs({ cacheKey: `${version.workflowId}@${version.version}`, schema: version.definition.inputSchema, coerce: false },
      inputs === '' ? {} : inputs);
    const input: Omit<RunInput, 'runId'> = {
      ...runInputFor({ orgId: trigger.orgId, version, triggerId: trigger.id, startedBy: scheduleIdFor(trigger.id), inputs, priority: trigger.priority }),
      type: 'SCHEDULE',
      engine: ENGINE_LEVEL,
    };
    const memo: RunMemo = { ...buildRunMemo(input), scheduleRevision: record.revision };
    return {
      version: version.version,
      ...(problem ? { inputsProblem: `paused by flowgate: the schedule's inputs do not fit version ${version.version}'s inputSchema (${problem.message}); update the schedule's inputs, then resume it` } : {}),
      action: {
        type: 'startWorkflow',
        workflowType: WORKFLOW_TYPES.runAutomation,
        taskQueue: this.deps.taskQueue,
        // Temporal appends the scheduled time: runs are `<triggerId>-2026-11-23T14:30:00Z`.
        workflowId: trigger.id,
        args: [{ ...input, runId: trigger.id } satisfies RunInput],
        workflowExecutionTimeout: runExecutionTimeoutMs(version.definition.timeoutSeconds),
        memo,
        typedSearchAttributes: [
          { key: SEARCH_ATTRIBUTES.orgId, value: trigger.orgId },
          { key: SEARCH_ATTRIBUTES.automationId, value: trigger.workflowId },
          { key: SEARCH_ATTRIBUTES.triggerId, value: trigger.id },
          { key: SEARCH_ATTRIBUTES.workflowName, value: nameAttribute(input.automationName) },
        ],
        // what the Temporal Web UI shows of the schedule and of each run it starts (src/common/run-labels.ts)
        staticSummary: runSummaryText(input),
        staticDetails: runDetailsText(input),
        // the organization as fairness key, the trigger's priority (src/common/priority.ts)
        priority: startPriority(trigger.orgId, trigger.priority),
      },
    };
  }

  private scheduleOptions(record: TriggerScheduleRecord, desired: DesiredAction) {
    const { config } = record;
    return {
      spec: temporalSpec(config),
      action: desired.action,
      policies: { overlap: config.overlap, ...(config.catchupWindow ? { catchupWindow: durationMs(config.catchupWindow)! } : {}) },
      typedSearchAttributes: [
        { key: SEARCH_ATTRIBUTES.orgId, value: record.orgId },
        { key: SEARCH_ATTRIBUTES.triggerId, value: record.triggerId },
      ],
    };
  }
}

function samePriority(actual: Priority | undefined, desired: Priority | undefined): boolean {
  return (actual?.fairnessKey || '') === (desired?.fairnessKey || '') && (actual?.priorityKey || 0) === (desired?.priorityKey || 0);
}

/** The run memo the schedule's action carries (the revision and version it was built from). */
function actionMemo(description: ScheduleDescription): Partial<Pick<RunMemo, 'scheduleRevision' | 'automationVersion'>> {
  const { memo } = description.action;
  const scheduleRevision = fieldOf(memo, 'scheduleRevision');
  const automationVersion = fieldOf(memo, 'automationVersion');
  return {
    scheduleRevision: typeof scheduleRevision === 'number' ? scheduleRevision : undefined,
    automationVersion: typeof automationVersion === 'number' ? automationVersion : undefined,
  };
}

/** Temporal refuses a spec it cannot compile with INVALID_ARGUMENT, which the SDK raises as a TypeError. */
async function rejectedAs<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof TypeError) throw new ScheduleRejectedError(err.message, { cause: err });
    throw err;
  }
}
