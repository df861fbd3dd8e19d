/**
 * Paused workflows and triggers (issue 54): while a row names a workflow or trigger, the runs
 * prepared for it start with a hold and wait PENDING (src/runs/run-holds.ts).
 */
import type { Kysely } from 'kysely';
import type { RunHold } from '../common/run-types';
import type { Database } from './db';
import { nowIso } from './store-support';

export interface OperatorHoldRecord extends RunHold {
  targetId: string;
}

type Row = Database['operator_holds'];

function toRecord(row: Row): OperatorHoldRecord {
  const scope = row.scope === 'trigger' ? 'trigger' : 'workflow';
  return { scope, targetId: row.target_id, by: row.held_by, at: row.held_at, ...(row.reason ? { reason: row.reason } : {}) };
}

export class OperatorHoldStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** The organization's holds, oldest first. */
  async list(orgId: string): Promise<OperatorHoldRecord[]> {
    const rows = await this.db.selectFrom('operator_holds').selectAll().where('org_id', '=', orgId).orderBy('held_at').execute();
    return rows.map(toRecord);
  }

  async get(orgId: string, scope: RunHold['scope'], targetId: string): Promise<OperatorHoldRecord | undefined> {
    const row = await this.db.selectFrom('operator_holds').selectAll()
      .where('org_id', '=', orgId).where('scope', '=', scope).where('target_id', '=', targetId).executeTakeFirst();
    return row && toRecord(row);
  }

  /** The hold a new run of this workflow through this trigger waits in: the workflow's first, else the trigger's. */
  async forRun(orgId: string, workflowId: string, triggerId: string): Promise<OperatorHoldRecord | undefined> {
    const rows = await this.db.selectFrom('operator_holds').selectAll().where('org_id', '=', orgId)
      .where((eb) => eb.or([
        eb.and([eb('scope', '=', 'workflow'), eb('target_id', '=', workflowId)]),
        eb.and([eb('scope', '=', 'trigger'), eb('target_id', '=', triggerId)]),
      ])).execute();
    const row = rows.find((r) => r.scope === 'workflow') ?? rows[0];
    return row && toRecord(row);
  }

  /** Pauses; a second pause keeps the first one's who and when (answered as it is). */
  async hold(orgId: string, scope: RunHold['scope'], targetId: string, by: string, reason?: string): Promise<OperatorHoldRecord> {
    const row: Row = { org_id: orgId, scope, target_id: targetId, held_by: by, held_at: nowIso(), reason: reason ?? null };
    await this.db.insertInto('operator_holds').values(row).onConflict((oc) => oc.columns(['org_id', 'scope', 'target_id']).doNothing()).execute();
    return (await this.get(orgId, scope, targetId)) ?? toRecord(row);
  }

  /** Lifts the hold; answers the lifted one (undefined: there was none). */
  async release(orgId: string, scope: RunHold['scope'], targetId: string): Promise<OperatorHoldRecord | undefined> {
    const held = await this.get(orgId, scope, targetId);
    if (!held) return undefined;
    await this.db.deleteFrom('operator_holds').where('org_id', '=', orgId).where('scope', '=', scope).where('target_id', '=', targetId).execute();
    return held;
  }
}
