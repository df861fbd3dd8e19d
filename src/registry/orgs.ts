/** Organizations and their administrator tokens (stored as hashes only). */
import type { Kysely } from 'kysely';
import { newId } from '../crypto/secrets';
import type { Database } from './db';
import { nowIso, withOrgCheck } from './store-support';

export interface Org {
  id: string;
  name: string;
  createdAt: string;
}

export interface AdminTokenGrant {
  orgId: string;
  instanceAdmin: boolean;
}

export const DEFAULT_ORG_ID = 'org_default';
export const DEFAULT_ORG_NAME = 'default';

export class OrgStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(name: string): Promise<Org> {
    const org: Org = { id: newId('org'), name, createdAt: nowIso() };
    await this.db.insertInto('orgs').values({ id: org.id, name: org.name, created_at: org.createdAt }).execute();
    return org;
  }

  async get(id: string): Promise<Org | undefined> {
    const row = await this.db.selectFrom('orgs').selectAll().where('id', '=', id).executeTakeFirst();
    return row && { id: row.id, name: row.name, createdAt: row.created_at };
  }

  async ensureDefault(): Promise<Org> {
    // ON CONFLICT rather than check-then-insert: two processes starting together must both succeed.
    await this.db.insertInto('orgs')
      .values({ id: DEFAULT_ORG_ID, name: DEFAULT_ORG_NAME, created_at: nowIso() })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    const org = await this.get(DEFAULT_ORG_ID);
    if (!org) throw new Error('default org vanished right after it was ensured');
    return org;
  }

  /** Idempotent on the hash: a hash already stored keeps its original org and flags. */
  async addAdminToken(orgId: string, tokenHash: string, opts: { instanceAdmin: boolean }): Promise<void> {
    await withOrgCheck(orgId, () => this.db.insertInto('admin_tokens')
      .values({ token_hash: tokenHash, org_id: orgId, instance_admin: opts.instanceAdmin ? 1 : 0, created_at: nowIso(), member_id: null })
      .onConflict((oc) => oc.column('token_hash').doNothing())
      .execute());
  }

  /**
   * Makes `tokenHash` the organization's only admin token of its kind (instance or organization
   * administrator): every other one stops working at once. Used for the bootstrap token at start
   * (the configured or generated token is authoritative, so changing it and restarting revokes the
   * old one) and to rotate an organization's token. `memberId`: the member who minted it (a
   * member's rotation), whose removal ends it (members.ts).
   */
  async replaceAdminTokens(orgId: string, tokenHash: string, opts: { instanceAdmin: boolean; memberId?: string | null }): Promise<void> {
    const flag = opts.instanceAdmin ? 1 : 0;
    await withOrgCheck(orgId, () => this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('admin_tokens')
        .where('org_id', '=', orgId)
        .where('instance_admin', '=', flag)
        .where('token_hash', '!=', tokenHash)
        .execute();
      await trx.insertInto('admin_tokens')
        .values({ token_hash: tokenHash, org_id: orgId, instance_admin: flag, created_at: nowIso(), member_id: opts.memberId ?? null })
        .onConflict((oc) => oc.column('token_hash').doNothing())
        .execute();
    }));
  }

  /** How many admin tokens reach the organization (its own and, for the default organization, the instance administrator's). */
  async countAdminTokens(orgId: string): Promise<number> {
    const row = await this.db.selectFrom('admin_tokens').select((eb) => eb.fn.countAll().as('n')).where('org_id', '=', orgId).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async findAdminToken(tokenHash: string): Promise<AdminTokenGrant | undefined> {
    const row = await this.db.selectFrom('admin_tokens')
      .select(['org_id', 'instance_admin'])
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
    return row && { orgId: row.org_id, instanceAdmin: row.instance_admin === 1 };
  }
}
