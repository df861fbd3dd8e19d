/**
 * An organization's members (people with a role), their personal access tokens (stored as hashes
 * only) and the organization's OpenID Connect provider (its client secret sealed by the caller).
 * Roles are plain strings here; src/people/roles.ts knows what they mean. The credentials a member
 * minted (admin tokens they rotated, API keys they created, personal access tokens they issued)
 * name them, and end with them (docs/people-and-roles.md "Offboarding").
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

/** The credentials a member minted, and their own tokens, that still work (hashes, never a secret). */
export interface MemberCredentials {
  /** the organization admin tokens they minted (a rotation), by hash */
  adminTokens: { tokenHash: string; createdAt: string }[];
  /** the unrevoked API keys they created */
  apiKeys: { id: string; name: string | null; role: string | null; createdAt: string }[];
  /** their own personal access tokens, by hash */
  ownTokens: { tokenHash: string; createdAt: string }[];
  /** the personal access tokens they issued to other members, by hash */
  issuedTokens: { tokenHash: string; memberId: string; createdAt: string }[];
}

/** What removing a member ended: MemberCredentials as they were, and how many admin tokens still reach the organization. */
export interface MemberRemoval extends MemberCredentials {
  member: MemberRecord;
  /** admin tokens left that reach the organization (for the default organization, the instance administrator's counts) */
  adminTokensLeft: number;
}

type MemberRow = Database['members'];
type Db = Kysely<Database>;

function memberOf(row: MemberRow): MemberRecord {
  return { id: row.id, orgId: row.org_id, email: row.email, name: row.name, role: row.role, createdAt: row.created_at, updatedAt: row.updated_at };
}

async function credentialsIn(db: Db, orgId: string, id: string): Promise<MemberCredentials> {
  // one after another: inside a transaction they share one connection
  const adminTokens = await db.selectFrom('admin_tokens').select(['token_hash', 'created_at']).where('org_id', '=', orgId).where('member_id', '=', id).orderBy('created_at').execute();
  const apiKeys = await db.selectFrom('api_keys').select(['id', 'name', 'role', 'created_at']).where('org_id', '=', orgId).where('member_id', '=', id).where('revoked_at', 'is', null)
    .orderBy('created_at').orderBy('id').execute();
  const tokens = await db.selectFrom('member_tokens').select(['token_hash', 'member_id', 'created_at']).where('org_id', '=', orgId)
    .where((eb) => eb.or([eb('member_id', '=', id), eb('issued_by', '=', id)])).orderBy('created_at').execute();
  return {
    adminTokens: adminTokens.map((t) => ({ tokenHash: t.token_hash, createdAt: t.created_at })),
    apiKeys: apiKeys.map((k) => ({ id: k.id, name: k.name, role: k.role, createdAt: k.created_at })),
    ownTokens: tokens.filter((t) => t.member_id === id).map((t) => ({ tokenHash: t.token_hash, createdAt: t.created_at })),
    issuedTokens: tokens.filter((t) => t.member_id !== id).map((t) => ({ tokenHash: t.token_hash, memberId: t.member_id, createdAt: t.created_at })),
  };
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

  /**
   * Removes the member, in one transaction, with everything that would outlive them: their personal
   * access tokens and console sessions, and what they minted: the admin tokens they rotated in
   * (deleted: console sessions and OAuth grants signed in with them end too), the API keys they
   * created (revoked, so runtime tokens minted from them end) and the personal access tokens they
   * issued to others. Undefined when the organization has no such member.
   */
  async remove(orgId: string, id: string): Promise<MemberRemoval | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('members').selectAll().where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
      if (!row) return undefined;
      const credentials = await credentialsIn(trx, orgId, id);
      await trx.deleteFrom('console_sessions').where('member_id', '=', id).where('org_id', '=', orgId).execute();
      await trx.deleteFrom('member_tokens').where('org_id', '=', orgId).where((eb) => eb.or([eb('member_id', '=', id), eb('issued_by', '=', id)])).execute();
      await trx.deleteFrom('admin_tokens').where('org_id', '=', orgId).where('member_id', '=', id).execute();
      await trx.updateTable('api_keys').set({ revoked_at: nowIso() }).where('org_id', '=', orgId).where('member_id', '=', id).where('revoked_at', 'is', null).execute();
      await trx.deleteFrom('members').where('id', '=', id).where('org_id', '=', orgId).execute();
      const left = await trx.selectFrom('admin_tokens').select((eb) => eb.fn.countAll().as('n')).where('org_id', '=', orgId).executeTakeFirst();
      return { member: memberOf(row), ...credentials, adminTokensLeft: Number(left?.n ?? 0) };
    });
  }

  /** What the member minted that still works, and their own tokens (what removing them would end). */
  async credentials(orgId: string, id: string): Promise<MemberCredentials> {
    return credentialsIn(this.db, orgId, id);
  }

  /** `issuedBy`: the member who issued it, when a member did (their removal ends it too). */
  async addToken(member: MemberRecord, tokenHash: string, issuedBy: string | null = null): Promise<void> {
    await this.db.insertInto('member_tokens').values({ token_hash: tokenHash, member_id: member.id, org_id: member.orgId, created_at: nowIso(), issued_by: issuedBy }).execute();
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
