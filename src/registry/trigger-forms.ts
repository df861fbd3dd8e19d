/**
 * Triggers' hosted forms (docs/console.md "Hosted forms"): each form URL carries a random secret,
 * stored only as its SHA-256. A revoked form is kept (revoked_at) so its URL stays dead.
 */
import type { Kysely } from 'kysely';
import { newId } from '../crypto/secrets';
import type { Database } from './db';
import { nowIso, withOrgCheck } from './store-support';

export interface TriggerFormRecord {
  id: string;
  orgId: string;
  triggerId: string;
  /** the form waits for the run's result and shows it (a synchronous form) */
  wait: boolean;
  createdAt: string;
  revokedAt: string | null;
}

type Row = Database['trigger_forms'];

const COLUMNS = ['id', 'org_id', 'trigger_id', 'wait', 'created_at', 'revoked_at'] as const;

function record(row: Pick<Row, (typeof COLUMNS)[number]>): TriggerFormRecord {
  return { id: row.id, orgId: row.org_id, triggerId: row.trigger_id, wait: row.wait === 1, createdAt: row.created_at, revokedAt: row.revoked_at };
}

export class TriggerFormStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(orgId: string, triggerId: string, tokenHash: string, wait: boolean): Promise<TriggerFormRecord> {
    const form: TriggerFormRecord = { id: newId('form'), orgId, triggerId, wait, createdAt: nowIso(), revokedAt: null };
    await withOrgCheck(orgId, () => this.db.insertInto('trigger_forms').values({
      id: form.id, org_id: orgId, trigger_id: triggerId, token_hash: tokenHash, wait: wait ? 1 : 0, created_at: form.createdAt, revoked_at: null,
    }).execute());
    return form;
  }

  /** The unrevoked form whose URL secret has this hash. */
  async findByHash(tokenHash: string): Promise<TriggerFormRecord | undefined> {
    const row = await this.db.selectFrom('trigger_forms').select([...COLUMNS])
      .where('token_hash', '=', tokenHash).where('revoked_at', 'is', null).executeTakeFirst();
    return row && record(row);
  }

  async list(orgId: string, triggerId: string): Promise<TriggerFormRecord[]> {
    const rows = await this.db.selectFrom('trigger_forms').select([...COLUMNS])
      .where('org_id', '=', orgId).where('trigger_id', '=', triggerId).orderBy('created_at').execute();
    return rows.map(record);
  }

  /** Whether an unrevoked form of the organization's trigger was revoked now. */
  async revoke(orgId: string, triggerId: string, formId: string): Promise<boolean> {
    const result = await this.db.updateTable('trigger_forms').set({ revoked_at: nowIso() })
      .where('id', '=', formId).where('org_id', '=', orgId).where('trigger_id', '=', triggerId).where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}
