/**
 * Schedules of triggers: what the management API was told, the source of truth that the Temporal
 * schedules are brought in line with (src/schedules/schedule-service.ts). `revision` counts the
 * changes of the config, so a Temporal schedule built from an older one can be told apart.
 */
import type { Kysely, Selectable } from 'kysely';
import type { ScheduleConfig } from '../contracts/schedule-bodies';
import type { Database, TriggerSchedulesTable } from './db';
import { fromJson, nowIso } from './store-support';

export interface TriggerScheduleRecord {
  triggerId: string;
  orgId: string;
  config: ScheduleConfig;
  /** the state the Temporal schedule is created with; the live state is Temporal's */
  paused: boolean;
  note: string | null;
  revision: number;
  createdAt: string;
  updatedAt: string;
}

export interface ScheduleWrite {
  config: ScheduleConfig;
  paused: boolean;
  note: string | null;
}

export class TriggerScheduleStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Sets the schedule of the organization's trigger (a new one, or the next revision). Undefined
   * when the trigger is not the organization's.
   */
  async put(orgId: string, triggerId: string, write: ScheduleWrite): Promise<TriggerScheduleRecord | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const trigger = await trx.selectFrom('triggers').select('id').where('id', '=', triggerId).where('org_id', '=', orgId).executeTakeFirst();
      if (!trigger) return undefined;
      const now = nowIso();
      const previous = await trx.selectFrom('trigger_schedules').selectAll().where('trigger_id', '=', triggerId).executeTakeFirst();
      const row: TriggerSchedulesTable = {
        trigger_id: triggerId, org_id: orgId, spec: JSON.stringify(write.config), paused: write.paused ? 1 : 0, note: write.note,
        revision: (previous?.revision ?? 0) + 1, created_at: previous?.created_at ?? now, updated_at: now,
      };
      if (previous) {
        await trx.updateTable('trigger_schedules').set(row).where('trigger_id', '=', triggerId).execute();
      } else {
        await trx.insertInto('trigger_schedules').values(row).execute();
      }
      return toRecord(row);
    });
  }

  /** Records the pause state the Temporal schedule was just given (no new revision). */
  async setPaused(orgId: string, triggerId: string, paused: boolean, note: string | null): Promise<boolean> {
    const result = await this.db.updateTable('trigger_schedules').set({ paused: paused ? 1 : 0, note, updated_at: nowIso() })
      .where('trigger_id', '=', triggerId).where('org_id', '=', orgId).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async delete(orgId: string, triggerId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('trigger_schedules').where('trigger_id', '=', triggerId).where('org_id', '=', orgId).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async get(orgId: string, triggerId: string): Promise<TriggerScheduleRecord | undefined> {
    const row = await this.db.selectFrom('trigger_schedules').selectAll().where('trigger_id', '=', triggerId).where('org_id', '=', orgId).executeTakeFirst();
    return row && toRecord(row);
  }

  /** Not filtered by organization: for the reconciler, which serves them all. */
  async getAny(triggerId: string): Promise<TriggerScheduleRecord | undefined> {
    const row = await this.db.selectFrom('trigger_schedules').selectAll().where('trigger_id', '=', triggerId).executeTakeFirst();
    return row && toRecord(row);
  }

  /** The organization's schedules (of one workflow's triggers when given). */
  async list(orgId: string, workflowId?: string): Promise<TriggerScheduleRecord[]> {
    let query = this.db.selectFrom('trigger_schedules').innerJoin('triggers', 'triggers.id', 'trigger_schedules.trigger_id')
      .selectAll('trigger_schedules').where('trigger_schedules.org_id', '=', orgId);
    if (workflowId) query = query.where('triggers.workflow_id', '=', workflowId);
    const rows = await query.orderBy('trigger_schedules.created_at', 'desc').orderBy('trigger_schedules.trigger_id').execute();
    return rows.map(toRecord);
  }

  /** Every trigger ID with a schedule, in pages of `limit` after `after` (the reconciler's walk). */
  async triggerIds(after: string, limit: number): Promise<string[]> {
    const rows = await this.db.selectFrom('trigger_schedules').select('trigger_id').where('trigger_id', '>', after)
      .orderBy('trigger_id').limit(limit).execute();
    return rows.map((r) => r.trigger_id);
  }
}

function toRecord(row: Selectable<TriggerSchedulesTable>): TriggerScheduleRecord {
  return {
    triggerId: row.trigger_id, orgId: row.org_id, config: fromJson<ScheduleConfig>(row.spec), paused: row.paused === 1, note: row.note,
    revision: Number(row.revision), createdAt: row.created_at, updatedAt: row.updated_at,
  };
}
