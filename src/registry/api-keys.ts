/** An organization's API keys (stored as hashes only); a revoked key is kept but never found. */
import type { Kysely } from 'kysely';
import { newId } from '../crypto/secrets';
import { isRole, type Role } from '../contracts/roles';
import type { Database } from './db';
import { nowIso, withOrgCheck } from './store-support';

export interface ApiKeyRecord {
  id: string;
  orgId: string;
  name: string | null;
  createdAt: string;
  /** the role the key is limited to; null: the key's full reach (triggers, polling, tools) */
  role: Role | null;
}

const roleOf = (value: string | null): Role | null => (isRole(value) ? value : null);

export class ApiKeyStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** `memberId`: the member who created it (their removal revokes it, members.ts); null: an admin token did. */
  async create(orgId: string, name: string | null, keyHash: string, role: Role | null = null, memberId: string | null = null): Promise<ApiKeyRecord> {
    const key: ApiKeyRecord = { id: newId('key'), orgId, name, createdAt: nowIso(), role };
    await withOrgCheck(orgId, () => this.db.insertInto('api_keys')
      .values({ id: key.id, org_id: orgId, name, key_hash: keyHash, created_at: key.createdAt, revoked_at: null, role, member_id: memberId })
      .execute());
    return key;
  }

  /** Revoked keys are not found: callers authenticate with this and must not see them. */
  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys')
      .select(['id', 'org_id', 'name', 'created_at', 'role'])
      .where('key_hash', '=', keyHash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return row && { id: row.id, orgId: row.org_id, name: row.name, createdAt: row.created_at, role: roleOf(row.role) };
  }

  /** The key by id while it is not revoked: runtime tokens minted from a key die with it. */
  async getActive(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys')
      .select(['id', 'org_id', 'name', 'created_at', 'role'])
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return row && { id: row.id, orgId: row.org_id, name: row.name, createdAt: row.created_at, role: roleOf(row.role) };
  }

  /** A key's name, revoked or not (the audit trail names the key an actor used); undefined when there is no such key. */
  async nameOf(id: string): Promise<string | null | undefined> {
    const row = await this.db.selectFrom('api_keys').select('name').where('id', '=', id).executeTakeFirst();
    return row?.name;
  }

  /** The organization's keys, revoked ones included (with `revokedAt`), newest first, with the member who created each; never the hashes. */
  async list(orgId: string): Promise<(ApiKeyRecord & { revokedAt: string | null; memberId: string | null })[]> {
    const rows = await this.db.selectFrom('api_keys')
      .select(['id', 'org_id', 'name', 'created_at', 'revoked_at', 'role', 'member_id'])
      .where('org_id', '=', orgId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'asc')
      .execute();
    return rows.map((row) => ({ id: row.id, orgId: row.org_id, name: row.name, createdAt: row.created_at, revokedAt: row.revoked_at, role: roleOf(row.role), memberId: row.member_id }));
  }

  /** False when the key is not in that org or is already revoked. */
  async revoke(orgId: string, id: string): Promise<boolean> {
    const result = await this.db.updateTable('api_keys')
      .set({ revoked_at: nowIso() })
      .where('id', '=', id)
      .where('org_id', '=', orgId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}
