/**
 * An organization's members (people with a role), their personal access tokens (stored as hashes
 * only) and the organization's OpenID Connect provider (its client secret sealed by the caller).
 * Roles are plain strings here; src/people/roles.ts knows what they mean.
 */
import type { Kysely } from 'kysely';
import { newId } from '../crypto/secrets';
import type { Database } from './db';
import { CONFLICT_CODES, RegistryError, fromJson, nowIso, withOrgCheck } from './store-support';
import { dbErrorCode } from './db';

export interface MemberRecord {
  id: string;
  orgId: string;
  email: string;
  name: string | null;
  role: string;
  createdAt: string;
  updatedAt: string;
}

export interface IdentityProviderRecord {
  orgId: string;
  name: string;
  issuer: string;
  clientId: string;
  /** sealed */
  clientSecret: string;
  /** the claim mapping as the caller wrote it (JSON) */
  roleRules: unknown;
  defaultRole: string | null;
  createdAt: string;
  updatedAt: string;
}

type MemberRow = Database['members'];

function memberOf(row: MemberRow): MemberRecord {
  return { id: row.id, orgId: row.org_id, email: row.email, name: row.name, role: row.role, createdAt: row.created_at, updatedAt: row.updated_at };
}

export class MemberStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** A new member; CONFLICT when the organization has one with that e-mail already. */
  async create(orgId: string, input: { email: string; name: string | null; role: string }): Promise<MemberRecord> {
    const now = nowIso();
    const row: MemberRow = { id: newId('mbr'), org_id: orgId, email: input.email.toLowerCase(), name: input.name, role: input.role, created_at: now, updated_at: now };
    try {
      await withOrgCheck(orgId, () => this.db.insertInto('members').values(row).execute());
    } catch (error) {
      if (CONFLICT_CODES.has(dbErrorCode(error) ?? '')) throw new RegistryError('CONFLICT', `the organization has a member ${row.email} already`, { cause: error });
      throw error;
    }
    return memberOf(row);
  }

  async get(orgId: string, id: string): Promise<MemberRecord | undefined> {
    const row = await this.db.selectFrom('members').selectAll().where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return row && memberOf(row);
  }

  async findByEmail(orgId: string, email: string): Promise<MemberRecord | undefined> {
    const row = await this.db.selectFrom('members').selectAll().where('org_id', '=', orgId).where('email', '=', email.toLowerCase()).executeTakeFirst();
    return row && memberOf(row);
  }

  /** The organization's members by e-mail. */
  async list(orgId: string): Promise<MemberRecord[]> {
    const rows = await this.db.selectFrom('members').selectAll().where('org_id', '=', orgId).orderBy('email', 'asc').execute();
    return rows.map(memberOf);
  }

  /** The member with the new role (and name, when given); undefined when there is no such member. */
  async update(orgId: string, id: string, change: { role?: string; name?: string | null }): Promise<MemberRecord | undefined> {
    await this.db.updateTable('members')
      .set({ ...(change.role === undefined ? {} : { role: change.role }), ...(change.name === undefined ? {} : { name: change.name }), updated_at: nowIso() })
      .where('id', '=', id).where('org_id', '=', orgId).execute();
    return this.get(orgId, id);
  }

  /** Removes the member with their tokens and sessions; false when there was none. */
  async remove(orgId: string, id: string): Promise<boolean> {
    await this.db.deleteFrom('console_sessions').where('member_id', '=', id).where('org_id', '=', orgId).execute();
    const result = await this.db.deleteFrom('members').where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async addToken(member: MemberRecord, tokenHash: string): Promise<void> {
    await this.db.insertInto('member_tokens').values({ token_hash: tokenHash, member_id: member.id, org_id: member.orgId, created_at: nowIso() }).execute();
  }

  /** The member a personal access token (its hash) belongs to. */
  async findByTokenHash(tokenHash: string): Promise<MemberRecord | undefined> {
    const row = await this.db.selectFrom('member_tokens as t')
      .innerJoin('members as m', (join) => join.onRef('m.id', '=', 't.member_id').onRef('m.org_id', '=', 't.org_id'))
      .selectAll('m')
      .where('t.token_hash', '=', tokenHash)
      .executeTakeFirst();
    return row && memberOf(row);
  }

  /** Revokes every personal access token of the member; how many went. */
  async revokeTokens(orgId: string, id: string): Promise<number> {
    const result = await this.db.deleteFrom('member_tokens').where('member_id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async identityProvider(orgId: string): Promise<IdentityProviderRecord | undefined> {
    const row = await this.db.selectFrom('identity_providers').selectAll().where('org_id', '=', orgId).executeTakeFirst();
    return row && {
      orgId: row.org_id, name: row.name, issuer: row.issuer, clientId: row.client_id, clientSecret: row.client_secret,
      roleRules: fromJson<unknown>(row.role_rules), defaultRole: row.default_role, createdAt: row.created_at, updatedAt: row.updated_at,
    };
  }

  /** Sets (creates or replaces) the organization's identity provider. */
  async setIdentityProvider(orgId: string, provider: Omit<IdentityProviderRecord, 'orgId' | 'createdAt' | 'updatedAt'>): Promise<IdentityProviderRecord> {
    const now = nowIso();
    const values = {
      name: provider.name, issuer: provider.issuer, client_id: provider.clientId, client_secret: provider.clientSecret,
      role_rules: JSON.stringify(provider.roleRules), default_role: provider.defaultRole, updated_at: now,
    };
    await withOrgCheck(orgId, () => this.db.insertInto('identity_providers')
      .values({ org_id: orgId, ...values, created_at: now })
      .onConflict((oc) => oc.column('org_id').doUpdateSet(values))
      .execute());
    return (await this.identityProvider(orgId))!;
  }

  async deleteIdentityProvider(orgId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('identity_providers').where('org_id', '=', orgId).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
