/**
 * The tool gateway's OAuth authorization server's records (src/oauth/; tables in oauth-tables.ts):
 * dynamically registered clients, authorization codes, grants and their tokens. Secrets arrive
 * here already hashed. A grant lives while it is not revoked and, when it was signed in with an
 * admin token, while that token exists (rotating the token ends its grants, as it ends console
 * sessions); when a member signed in, while the member exists (their current role is read with
 * the token).
 */
import type { Kysely } from 'kysely';
import type { Database } from './db';
import { fromJson, nowIso, withOrgCheck } from './store-support';

export interface OAuthClientRecord {
  clientId: string;
  clientName: string | null;
  redirectUris: string[];
  createdAt: string;
}

/** When registered clients expire (src/oauth/clients.ts has the rule): instants, ISO 8601. */
export interface ClientExpiry {
  now: string;
  /** a client never used, registered at or before this, goes */
  pendingBefore: string;
  /** a client last used at or before this, without a live grant, goes */
  idleBefore: string;
}

/** What a code or a grant binds together. */
export interface OAuthBinding {
  orgId: string;
  clientId: string;
  resource: string;
  scope: string | null;
  subject: string;
  adminTokenHash: string | null;
  /** the member who signed in through the organization's identity provider (null: an admin token) */
  memberId: string | null;
}

export interface OAuthCodeRecord extends OAuthBinding {
  redirectUri: string;
  codeChallenge: string;
  expiresAt: string;
}

/** A live token as found: its grant's binding. */
export interface OAuthTokenRecord extends OAuthBinding {
  grantId: string;
  /** the member's current role, for a member's grant */
  role: string | null;
  /** the member's e-mail, for a member's grant: they decide approvals as this approver */
  memberEmail: string | null;
  kind: 'access' | 'refresh';
  expiresAt: string;
  usedAt: string | null;
}

/** A live grant as the organization's administrator sees it (never a token). */
export interface OAuthGrantRecord {
  id: string;
  clientId: string;
  /** a dynamically registered client's name; null for a client named by its metadata document URL */
  clientName: string | null;
  resource: string;
  scope: string | null;
  /** who signed in: `admin-token:<fingerprint>` or `member:<id>` */
  subject: string;
  member: { id: string; email: string; role: string } | null;
  createdAt: string;
  /** when its latest token (access or refresh) expires: the grant is usable until then */
  expiresAt: string;
}

export type CodeClaim =
  | { kind: 'claimed'; code: OAuthCodeRecord }
  | { kind: 'reused'; grantId: string | null }
  | { kind: 'unknown' };

/** Live grants (not revoked, a token unexpired, still backed by their admin token or member), as `g`. */
function liveGrants(db: Kysely<Database>, now: string) {
  return db.selectFrom('oauth_grants as g')
    .innerJoin('oauth_tokens as k', 'k.grant_id', 'g.id')
    .leftJoin('admin_tokens as t', (join) => join.onRef('t.token_hash', '=', 'g.admin_token_hash').onRef('t.org_id', '=', 'g.org_id'))
    .leftJoin('members as m', (join) => join.onRef('m.id', '=', 'g.member_id').onRef('m.org_id', '=', 'g.org_id'))
    .where('g.revoked_at', 'is', null)
    .where('k.expires_at', '>', now)
    .where((w) => w.or([w('g.admin_token_hash', 'is', null), w('t.token_hash', 'is not', null)]))
    .where((w) => w.or([w('g.member_id', 'is', null), w('m.id', 'is not', null)]));
}

export class OAuthStore {
  constructor(private readonly db: Kysely<Database>) {}

  async createClient(client: OAuthClientRecord): Promise<void> {
    await this.db.insertInto('oauth_clients').values({
      client_id: client.clientId, client_name: client.clientName, redirect_uris: JSON.stringify(client.redirectUris), created_at: client.createdAt, last_used_at: null,
    }).execute();
  }

  /** Notes that a registered client obtained a grant or tokens (nothing for a client named by a metadata document: it has no row). */
  async touchClient(clientId: string, now = nowIso()): Promise<void> {
    await this.db.updateTable('oauth_clients').set({ last_used_at: now }).where('client_id', '=', clientId).execute();
  }

  /** The registered clients never used to obtain a grant: how many, and when the oldest of them was registered. */
  async pendingClients(): Promise<{ count: number; oldest: string | null }> {
    const row = await this.db.selectFrom('oauth_clients').select((eb) => [eb.fn.countAll().as('n'), eb.fn.min('created_at').as('oldest')])
      .where('last_used_at', 'is', null).executeTakeFirst();
    return { count: Number(row?.n ?? 0), oldest: row?.oldest === undefined || row.oldest === null ? null : String(row.oldest) };
  }

  /** How many registered clients hold a live grant in the organization (not revoked, a token unexpired, still backed by its admin token or member). */
  async countOrgClients(orgId: string, now = nowIso()): Promise<number> {
    const row = await liveGrants(this.db, now).innerJoin('oauth_clients as c', 'c.client_id', 'g.client_id')
      .select((eb) => eb.fn.count('g.client_id').distinct().as('n'))
      .where('g.org_id', '=', orgId).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Whether the client holds a live grant in the organization already. */
  async clientInOrg(orgId: string, clientId: string, now = nowIso()): Promise<boolean> {
    const row = await liveGrants(this.db, now).select('g.id').where('g.org_id', '=', orgId).where('g.client_id', '=', clientId).limit(1).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Removes up to `limit` expired registered clients (ClientExpiry) with their codes, grants and
   * tokens; how many went. Pending ones first, then idle ones: a client with a live grant (not
   * revoked, a token unexpired, its admin token or member still there) is never removed.
   */
  async removeExpiredClients(expiry: ClientExpiry, limit: number, only: 'pending' | 'all' = 'all'): Promise<number> {
    const pending = await this.db.selectFrom('oauth_clients').select('client_id')
      .where('last_used_at', 'is', null).where('created_at', '<=', expiry.pendingBefore)
      .orderBy('created_at').limit(limit).execute();
    const ids = pending.map((r) => r.client_id);
    if (only === 'all' && ids.length < limit) {
      const idle = await this.db.selectFrom('oauth_clients as c').select('c.client_id')
        .where('c.last_used_at', 'is not', null).where('c.last_used_at', '<=', expiry.idleBefore)
        // (a grant's client_id is never null: NOT IN is safe)
        .where('c.client_id', 'not in', liveGrants(this.db, expiry.now).select('g.client_id'))
        .orderBy('c.last_used_at').limit(limit - ids.length).execute();
      ids.push(...idle.map((r) => r.client_id));
    }
    if (ids.length === 0) return 0;
    await this.db.transaction().execute(async (trx) => {
      const grants = trx.selectFrom('oauth_grants').select('id').where('client_id', 'in', ids);
      await trx.deleteFrom('oauth_tokens').where('grant_id', 'in', grants).execute();
      await trx.deleteFrom('oauth_grants').where('client_id', 'in', ids).execute();
      await trx.deleteFrom('oauth_codes').where('client_id', 'in', ids).execute();
      await trx.deleteFrom('oauth_clients').where('client_id', 'in', ids).execute();
    });
    return ids.length;
  }

  async findClient(clientId: string): Promise<OAuthClientRecord | undefined> {
    const row = await this.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
    return row && { clientId: row.client_id, clientName: row.client_name, redirectUris: fromJson<string[]>(row.redirect_uris), createdAt: row.created_at };
  }

  async createCode(codeHash: string, code: OAuthCodeRecord): Promise<void> {
    await withOrgCheck(code.orgId, () => this.db.insertInto('oauth_codes').values({
      code_hash: codeHash, org_id: code.orgId, client_id: code.clientId, redirect_uri: code.redirectUri, resource: code.resource, scope: code.scope,
      code_challenge: code.codeChallenge, subject: code.subject, admin_token_hash: code.adminTokenHash, member_id: code.memberId, expires_at: code.expiresAt, used_at: null, grant_id: null,
    }).execute());
  }

  /**
   * Marks the code used, once: the first caller gets it (when unexpired), any later one learns it
   * was reused (and which grant it made, to revoke).
   */
  async claimCode(codeHash: string, now = nowIso()): Promise<CodeClaim> {
    const updated = await this.db.updateTable('oauth_codes').set({ used_at: now })
      .where('code_hash', '=', codeHash).where('used_at', 'is', null).executeTakeFirst();
    const row = await this.db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
    if (!row) return { kind: 'unknown' };
    if (Number(updated.numUpdatedRows) !== 1) return { kind: 'reused', grantId: row.grant_id };
    if (row.expires_at <= now) return { kind: 'unknown' };
    return {
      kind: 'claimed',
      code: {
        orgId: row.org_id, clientId: row.client_id, resource: row.resource, scope: row.scope, subject: row.subject, adminTokenHash: row.admin_token_hash, memberId: row.member_id,
        redirectUri: row.redirect_uri, codeChallenge: row.code_challenge, expiresAt: row.expires_at,
      },
    };
  }

  async createGrant(grantId: string, binding: OAuthBinding, codeHash?: string): Promise<void> {
    await withOrgCheck(binding.orgId, () => this.db.insertInto('oauth_grants').values({
      id: grantId, org_id: binding.orgId, client_id: binding.clientId, resource: binding.resource, scope: binding.scope, subject: binding.subject,
      admin_token_hash: binding.adminTokenHash, member_id: binding.memberId, created_at: nowIso(), revoked_at: null,
    }).execute());
    if (codeHash) await this.db.updateTable('oauth_codes').set({ grant_id: grantId }).where('code_hash', '=', codeHash).execute();
  }

  /**
   * The organization's live grants, newest first: not revoked, with a token that has not expired,
   * and still backed by their admin token or member.
   */
  async listGrants(orgId: string, now = nowIso()): Promise<OAuthGrantRecord[]> {
    const rows = await this.db.selectFrom('oauth_grants as g')
      .innerJoin('oauth_tokens as k', 'k.grant_id', 'g.id')
      .leftJoin('oauth_clients as c', 'c.client_id', 'g.client_id')
      .leftJoin('admin_tokens as t', (join) => join.onRef('t.token_hash', '=', 'g.admin_token_hash').onRef('t.org_id', '=', 'g.org_id'))
      .leftJoin('members as m', (join) => join.onRef('m.id', '=', 'g.member_id').onRef('m.org_id', '=', 'g.org_id'))
      .select((eb) => ['g.id', 'g.client_id', 'c.client_name', 'g.resource', 'g.scope', 'g.subject', 'g.created_at', 'g.admin_token_hash', 'g.member_id',
        't.token_hash as live_token', 'm.email', 'm.role', eb.fn.max('k.expires_at').as('expires_at')])
      .where('g.org_id', '=', orgId)
      .where('g.revoked_at', 'is', null)
      .where('k.expires_at', '>', now)
      .groupBy(['g.id', 'g.client_id', 'c.client_name', 'g.resource', 'g.scope', 'g.subject', 'g.created_at', 'g.admin_token_hash', 'g.member_id', 't.token_hash', 'm.email', 'm.role'])
      .orderBy('g.created_at', 'desc')
      .orderBy('g.id')
      .execute();
    return rows
      .filter((r) => (r.admin_token_hash === null || r.live_token !== null) && (r.member_id === null || (r.email !== null && r.role !== null)))
      .map((r) => ({
        id: r.id, clientId: r.client_id, clientName: r.client_name ?? null, resource: r.resource, scope: r.scope, subject: r.subject,
        member: r.member_id !== null && r.email && r.role ? { id: r.member_id, email: r.email, role: r.role } : null,
        createdAt: r.created_at, expiresAt: String(r.expires_at),
      }));
  }

  /** Revokes one of the organization's grants; false when it has no such live grant. */
  async revokeOrgGrant(orgId: string, grantId: string, now = nowIso()): Promise<boolean> {
    const updated = await this.db.updateTable('oauth_grants').set({ revoked_at: now })
      .where('id', '=', grantId).where('org_id', '=', orgId).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(updated.numUpdatedRows) === 1;
  }

  async revokeGrant(grantId: string, now = nowIso()): Promise<void> {
    await this.db.updateTable('oauth_grants').set({ revoked_at: now }).where('id', '=', grantId).where('revoked_at', 'is', null).execute();
  }

  async createToken(tokenHash: string, grantId: string, kind: 'access' | 'refresh', expiresAt: string): Promise<void> {
    await this.db.insertInto('oauth_tokens').values({ token_hash: tokenHash, grant_id: grantId, kind, expires_at: expiresAt, used_at: null }).execute();
  }

  /** The token with this hash when unexpired and its grant live (not revoked, its admin token, if any, still existing). */
  async findToken(tokenHash: string, now = nowIso()): Promise<OAuthTokenRecord | undefined> {
    const row = await this.db.selectFrom('oauth_tokens as k')
      .innerJoin('oauth_grants as g', 'g.id', 'k.grant_id')
      .leftJoin('admin_tokens as t', (join) => join.onRef('t.token_hash', '=', 'g.admin_token_hash').onRef('t.org_id', '=', 'g.org_id'))
      .leftJoin('members as m', (join) => join.onRef('m.id', '=', 'g.member_id').onRef('m.org_id', '=', 'g.org_id'))
      .select(['k.grant_id', 'k.kind', 'k.expires_at', 'k.used_at', 'g.org_id', 'g.client_id', 'g.resource', 'g.scope', 'g.subject', 'g.admin_token_hash', 't.token_hash as live_token',
        'g.member_id', 'm.role', 'm.email as member_email'])
      .where('k.token_hash', '=', tokenHash)
      .where('k.expires_at', '>', now)
      .where('g.revoked_at', 'is', null)
      .executeTakeFirst();
    if (!row || (row.admin_token_hash !== null && row.live_token === null)) return undefined;
    // a removed member's grant ends with them
    if (row.member_id !== null && (row.role === null || row.role === undefined)) return undefined;
    return {
      grantId: row.grant_id, kind: row.kind === 'refresh' ? 'refresh' : 'access', expiresAt: row.expires_at, usedAt: row.used_at,
      orgId: row.org_id, clientId: row.client_id, resource: row.resource, scope: row.scope, subject: row.subject, adminTokenHash: row.admin_token_hash,
      memberId: row.member_id, role: row.role ?? null, memberEmail: row.member_email ?? null,
    };
  }

  /** Marks a refresh token traded, once: false when it already was. */
  async useRefreshToken(tokenHash: string, now = nowIso()): Promise<boolean> {
    const updated = await this.db.updateTable('oauth_tokens').set({ used_at: now })
      .where('token_hash', '=', tokenHash).where('kind', '=', 'refresh').where('used_at', 'is', null).executeTakeFirst();
    return Number(updated.numUpdatedRows) === 1;
  }

  /** Drops expired codes and tokens; how many went. */
  async deleteExpired(now = nowIso()): Promise<number> {
    const codes = await this.db.deleteFrom('oauth_codes').where('expires_at', '<=', now).executeTakeFirst();
    const tokens = await this.db.deleteFrom('oauth_tokens').where('expires_at', '<=', now).executeTakeFirst();
    return Number(codes.numDeletedRows) + Number(tokens.numDeletedRows);
  }
}
