/** Triggers: the published entry points of a workflow, optionally naming a designated output step. */
import type { Kysely, Selectable } from 'kysely';
import { newId } from '../crypto/secrets';
import type { TriggerShaping } from '../common/shaping';
import type { TriggerVerify } from '../triggers/webhooks/config';
import type { Database, TriggersTable } from './db';
import { fromJson, nowIso, RegistryError } from './store-support';
import type { ScheduleWrite } from './trigger-schedules';
import { latestVersion } from './workflows';


export interface DesignatedOutput {
  stepIndex: number;
  fileName?: string;
}

/** A trigger offered as a tool of its organization's `workflows` server. */
export interface TriggerTool {
  name: string;
  description: string;
}

/** At most `limit` runs of the trigger in progress; `newest-wins` (limit 1): a new run supersedes the others. */
export interface TriggerConcurrency {
  limit: number;
  mode?: 'queue' | 'newest-wins';
}

export interface TriggerRecord {
  id: string;
  orgId: string;
  workflowId: string;
  name: string | null;
  designatedOutput: DesignatedOutput | null;
  tool: TriggerTool | null;
  createdAt: string;
  /** ISO time it was disabled; null while enabled. Mutable: read it fresh (`disabledAt()`), never from a cache */
  disabledAt: string | null;
  /** completion callback URL of the runs it starts (a call may name its own) */
  callbackUrl: string | null;
  /** Temporal priority key (1 first .. 5 last) of the runs it starts; null: the default (src/common/priority.ts) */
  priority: number | null;
  /** the limit on its runs in progress; null: none (but the organization's) */
  concurrency: TriggerConcurrency | null;
  /** verified by a signature preset instead of an API key (its secrets: TriggerSecretStore); null: an API key trigger */
  verify: TriggerVerify | null;
  /** debounce or batch its calls into runs; null: a run per call */
  shaping: TriggerShaping | null;
  /** 1, one more at each change in place (TriggerStore.update); read fresh with liveState() */
  revision: number;
}

export interface CreateTriggerInput {
  /** the new trigger's ID, when the caller needed it first (to seal its secrets under it); else one is drawn */
  id?: string;
  workflowId: string;
  name?: string | null;
  designatedOutput?: DesignatedOutput | null;
  tool?: TriggerTool | null;
  callbackUrl?: string | null;
  priority?: number | null;
  concurrency?: TriggerConcurrency | null;
  verify?: TriggerVerify | null;
  /** sealed signing secrets of a verified trigger, written in the same transaction */
  sealedSecrets?: string[];
  shaping?: TriggerShaping | null;
  /** written with the trigger, in the same transaction */
  schedule?: ScheduleWrite;
}

/**
 * What a change in place may set: a creation's fields but the ID and the schedule (undefined: kept;
 * null: removed). `sealedSecrets`: new sealed signing secrets of a verified trigger (else it keeps its
 * own; without `verify` they go).
 */
export type TriggerChange = Partial<Omit<CreateTriggerInput, 'id' | 'schedule'>>;

export function newTriggerId(): string {
  return newId('trg');
}

export class TriggerStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * NOT_FOUND for another org's or a missing workflow, NOT_PUBLISHED, INVALID for an output step
   * out of range, or CONFLICT for a tool name another trigger of the organization has.
   */
  async create(orgId: string, input: CreateTriggerInput): Promise<TriggerRecord> {
    const output = input.designatedOutput ?? null;
    await this.usableVersion(orgId, input.workflowId, output);
    const tool = input.tool ?? null;
    // Checked first for a clear message; the unique index still settles two creates racing.
    if (tool && await this.toolTrigger(orgId, tool.name)) {
      throw new RegistryError('CONFLICT', `another trigger of this organization is already the tool ${tool.name}`);
    }
    const trigger: TriggerRecord = {
      id: input.id ?? newTriggerId(), orgId, workflowId: input.workflowId, name: input.name ?? null, designatedOutput: output, tool, createdAt: nowIso(),
      disabledAt: null, callbackUrl: input.callbackUrl ?? null, priority: input.priority ?? null, concurrency: input.concurrency ?? null,
      verify: input.verify ?? null, shaping: input.shaping ?? null, revision: 1,
    };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('triggers').values({
        id: trigger.id, org_id: orgId, workflow_id: trigger.workflowId, name: trigger.name,
        designated_output: output && JSON.stringify(output), created_at: trigger.createdAt,
        tool_name: tool?.name ?? null, tool_description: tool?.description ?? null, disabled_at: null, callback_url: trigger.callbackUrl,
        priority: trigger.priority,
        concurrency: trigger.concurrency && JSON.stringify(trigger.concurrency),
        verify: trigger.verify && JSON.stringify(trigger.verify), shaping: trigger.shaping && JSON.stringify(trigger.shaping), revision: 1,
      }).execute();
      if (input.sealedSecrets) {
        await trx.insertInto('trigger_secrets').values({
          trigger_id: trigger.id, org_id: orgId, secrets: JSON.stringify(input.sealedSecrets), updated_at: trigger.createdAt,
        }).execute();
      }
      if (input.schedule) {
        await trx.insertInto('trigger_schedules').values({
          trigger_id: trigger.id, org_id: orgId, spec: JSON.stringify(input.schedule.config), paused: input.schedule.paused ? 1 : 0,
          note: input.schedule.note, revision: 1, created_at: trigger.createdAt, updated_at: trigger.createdAt,
        }).execute();
      }
    });
    return trigger;
  }

  /** The organization's triggers offered as tools, by tool name. */
  async listTools(orgId: string): Promise<TriggerRecord[]> {
    const rows = await this.db.selectFrom('triggers').selectAll()
      .where('org_id', '=', orgId)
      .where('tool_name', 'is not', null)
      .orderBy('tool_name')
      .execute();
    return rows.map(toTriggerRecord);
  }

  /** The organization's trigger offered as tool `toolName`. */
  async toolTrigger(orgId: string, toolName: string): Promise<TriggerRecord | undefined> {
    const row = await this.db.selectFrom('triggers').selectAll()
      .where('org_id', '=', orgId)
      .where('tool_name', '=', toolName)
      .executeTakeFirst();
    return row && toTriggerRecord(row);
  }

  /** The organization's triggers (of one workflow when given), newest first. */
  async list(orgId: string, workflowId?: string): Promise<TriggerRecord[]> {
    let query = this.db.selectFrom('triggers').selectAll().where('org_id', '=', orgId);
    if (workflowId) query = query.where('workflow_id', '=', workflowId);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'asc').execute();
    return rows.map(toTriggerRecord);
  }

  /** False when the trigger is not in that org. */
  async delete(orgId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('trigger_schedules').where('trigger_id', '=', id).where('org_id', '=', orgId).execute();
      await trx.deleteFrom('trigger_secrets').where('trigger_id', '=', id).where('org_id', '=', orgId).execute();
      await trx.deleteFrom('trigger_deliveries').where('trigger_id', '=', id).where('org_id', '=', orgId).execute();
      const result = await trx.deleteFrom('triggers').where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    });
  }

  /** Disables (or enables) the org's trigger; the record as it is now, undefined when not in that org. Disabling twice keeps the first time. */
  async setDisabled(orgId: string, id: string, disabled: boolean): Promise<TriggerRecord | undefined> {
    let update = this.db.updateTable('triggers').set({ disabled_at: disabled ? nowIso() : null }).where('id', '=', id).where('org_id', '=', orgId);
    if (disabled) update = update.where('disabled_at', 'is', null);
    await update.execute();
    const row = await this.db.selectFrom('triggers').selectAll().where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return row && toTriggerRecord(row);
  }

  /**
   * Changes the org's trigger in place (same ID) with the checks of create(), and one more
   * revision; the record as it is now, undefined when not in that org. See trigger-update.ts.
   */
  async update(orgId: string, id: string, change: TriggerChange): Promise<TriggerRecord | undefined> {
    const row = await this.db.selectFrom('triggers').selectAll().where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    if (!row) return undefined;
    const was = toTriggerRecord(row);
    const workflowId = change.workflowId ?? was.workflowId;
    const output = change.designatedOutput === undefined ? was.designatedOutput : change.designatedOutput;
    if (workflowId !== was.workflowId || (output && change.designatedOutput !== undefined)) {
      await this.usableVersion(orgId, workflowId, output);
    }
    const tool = change.tool === undefined ? was.tool : change.tool;
    const other = tool && await this.toolTrigger(orgId, tool.name);
    if (other && other.id !== id) throw new RegistryError('CONFLICT', `another trigger of this organization is already the tool ${tool.name}`);
    const pick = <K extends keyof TriggerChange>(key: K, now: TriggerRecord[K & keyof TriggerRecord]) => (change[key] === undefined ? now : change[key]);
    const verify = pick('verify', was.verify);
    const shaping = pick('shaping', was.shaping);
    const concurrency = pick('concurrency', was.concurrency);
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('triggers').set({
        workflow_id: workflowId, name: pick('name', was.name), designated_output: output && JSON.stringify(output),
        tool_name: tool?.name ?? null, tool_description: tool?.description ?? null, callback_url: pick('callbackUrl', was.callbackUrl),
        priority: pick('priority', was.priority), concurrency: concurrency && JSON.stringify(concurrency),
        verify: verify && JSON.stringify(verify), shaping: shaping && JSON.stringify(shaping), revision: was.revision + 1,
      }).where('id', '=', id).where('org_id', '=', orgId).execute();
      if (!verify || change.sealedSecrets) await trx.deleteFrom('trigger_secrets').where('trigger_id', '=', id).where('org_id', '=', orgId).execute();
      if (verify && change.sealedSecrets) {
        await trx.insertInto('trigger_secrets').values({ trigger_id: id, org_id: orgId, secrets: JSON.stringify(change.sealedSecrets), updated_at: nowIso() }).execute();
      }
    });
    return this.get(id);
  }

  /** NOT_FOUND, NOT_PUBLISHED, or INVALID for a designated output step out of range of the workflow's latest version. */
  private async usableVersion(orgId: string, workflowId: string, output: DesignatedOutput | null): Promise<void> {
    const workflow = await this.db.selectFrom('workflows').select('id').where('id', '=', workflowId).where('org_id', '=', orgId).executeTakeFirst();
    if (!workflow) throw new RegistryError('NOT_FOUND', `workflow ${workflowId} not found`);
    const latest = await latestVersion(this.db, workflowId);
    if (!latest) throw new RegistryError('NOT_PUBLISHED', `workflow ${workflowId} has no published version`);
    const steps = latest.definition.steps.length;
    if (output && (!Number.isInteger(output.stepIndex) || output.stepIndex < 1 || output.stepIndex > steps)) {
      throw new RegistryError('INVALID', `designatedOutput.stepIndex ${output.stepIndex} is out of range: version ${latest.version} has ${steps} step(s)`);
    }
  }

  /**
   * What may change about a trigger, read fresh on every call in one query: when it was disabled
   * (null: enabled), its workflow's published version (null: none) and its revision (a kept copy
   * of another revision is stale). Undefined: no such trigger.
   */
  async liveState(id: string): Promise<{ disabledAt: string | null; publishedVersion: number | null; revision: number } | undefined> {
    const row = await this.db.selectFrom('triggers').leftJoin('workflows', 'workflows.id', 'triggers.workflow_id')
      .select(['triggers.disabled_at', 'triggers.revision', 'workflows.published_version']).where('triggers.id', '=', id).executeTakeFirst();
    return row && { disabledAt: row.disabled_at, publishedVersion: row.published_version ?? null, revision: row.revision };
  }

  /** When the trigger was disabled (null: enabled; undefined: no such trigger), read fresh on every call. */
  async disabledAt(id: string): Promise<string | null | undefined> {
    const row = await this.db.selectFrom('triggers').select('disabled_at').where('id', '=', id).executeTakeFirst();
    return row?.disabled_at;
  }

  /** Not filtered by org: the caller decides what to reveal to whom. */
  async get(id: string): Promise<TriggerRecord | undefined> {
    const row = await this.db.selectFrom('triggers').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toTriggerRecord(row);
  }
}

function toTriggerRecord(row: Selectable<TriggersTable>): TriggerRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    workflowId: row.workflow_id,
    name: row.name,
    designatedOutput: row.designated_output === null ? null : fromJson<DesignatedOutput>(row.designated_output),
    tool: row.tool_name === null ? null : { name: row.tool_name, description: row.tool_description ?? '' },
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
    callbackUrl: row.callback_url,
    priority: row.priority ?? null,
    concurrency: row.concurrency === null || row.concurrency === undefined ? null : fromJson<TriggerConcurrency>(row.concurrency),
    verify: row.verify === null || row.verify === undefined ? null : fromJson<TriggerVerify>(row.verify),
    shaping: row.shaping === null || row.shaping === undefined ? null : fromJson<TriggerShaping>(row.shaping),
    revision: row.revision,
  };
}
