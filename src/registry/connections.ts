/** Application connections (the `PCID`s of tool calls); credentials are stored as ciphertext only. */
import type { Kysely, Selectable } from 'kysely';
import { newId } from '../crypto/secrets';
import type { ConnectionsTable, Database } from './db';
import { nowIso, withOrgCheck } from './store-support';

/** A stored application connection; `credentials` is the ciphertext, opened by src/tools/connections. */
export interface ConnectionRecord {
  id: string;
  orgId: string;
  application: string;
  name: string | null;
  credentials: string;
  createdAt: string;
}

export interface CreateConnectionInput {
  id?: string;
  application: string;
  name?: string | null;
  credentials: string;
}

export class ConnectionStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** `id` may be chosen by the caller, which binds it into the ciphertext before the row exists. */
  async create(orgId: string, input: CreateConnectionInput): Promise<ConnectionRecord> {
    const record: ConnectionRecord = {
      id: input.id ?? newConnectionId(), orgId, application: input.application, name: input.name ?? null, credentials: input.credentials, createdAt: nowIso(),
    };
    await withOrgCheck(orgId, () => this.db.insertInto('connections').values({
      id: record.id, org_id: orgId, application: record.application, name: record.name, credentials: record.credentials,
      created_at: record.createdAt,
    }).execute());
    return record;
  }

  /** Only the org's own: another organization's connection is indistinguishable from none. */
  async get(orgId: string, id: string): Promise<ConnectionRecord | undefined> {
    const row = await this.db.selectFrom('connections').selectAll()
      .where('id', '=', id)
      .where('org_id', '=', orgId)
      .executeTakeFirst();
    return row && toConnectionRecord(row);
  }

  async list(orgId: string, application?: string): Promise<ConnectionRecord[]> {
    let query = this.db.selectFrom('connections').selectAll().where('org_id', '=', orgId);
    if (application !== undefined) query = query.where('application', '=', application);
    const rows = await query.orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
    return rows.map(toConnectionRecord);
  }

  /** New credentials (ciphertext) and name for the org's connection; false when it has none with that id. */
  async replace(orgId: string, id: string, change: { name: string | null; credentials: string }): Promise<boolean> {
    const result = await this.db.updateTable('connections').set({ name: change.name, credentials: change.credentials })
      .where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async delete(orgId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('connections').where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}

export function newConnectionId(): string {
  return newId('pc');
}

function toConnectionRecord(row: Selectable<ConnectionsTable>): ConnectionRecord {
  return {
    id: row.id, orgId: row.org_id, application: row.application, name: row.name, credentials: row.credentials, createdAt: row.created_at,
  };
}
