/**
 * Console sessions (docs/console.md): the cookie's value is a random secret, stored only as its
 * SHA-256. A session is good while it has not expired and the admin token it signed in with still
 * exists: rotating an organization's token signs every console session of it out.
 */
import type { Kysely } from 'kysely';
import type { Database } from './db';
import { nowIso, withOrgCheck } from './store-support';

export interface ConsoleSessionRecord {
  orgId: string;
  /** the member a sign-in through the organization's identity provider opened it for */
  memberId?: string | null;
  csrfToken: string;
  createdAt: string;
  expiresAt: string;
}

/**
 * A live session as found: with the admin token it signed in with (its hash) and whether that token
 * is the instance administrator's, or with the member (and their role now) it was opened for.
 */
export interface LiveConsoleSession extends ConsoleSessionRecord {
  tokenHash: string;
  instanceAdmin: boolean;
  member?: { id: string; email: string; role: string };
}

export class ConsoleSessionStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(idHash: string, session: ConsoleSessionRecord & { tokenHash: string }): Promise<void> {
    await withOrgCheck(session.orgId, () => this.db.insertInto('console_sessions').values({
      id_hash: idHash, org_id: session.orgId, token_hash: session.tokenHash, csrf_token: session.csrfToken, member_id: session.memberId ?? null,
      created_at: session.createdAt, expires_at: session.expiresAt,
    }).execute());
  }

  /**
   * The live session with this hash: unexpired, and its admin token still valid for its
   * organization or its member still a member of it (removing a member ends their sessions).
   */
  async find(idHash: string, now = nowIso()): Promise<LiveConsoleSession | undefined> {
    const row = await this.db.selectFrom('console_sessions as s')
      .leftJoin('admin_tokens as t', (join) => join.onRef('t.token_hash', '=', 's.token_hash').onRef('t.org_id', '=', 's.org_id'))
      .leftJoin('members as m', (join) => join.onRef('m.id', '=', 's.member_id').onRef('m.org_id', '=', 's.org_id'))
      .select(['s.org_id', 's.csrf_token', 's.created_at', 's.expires_at', 's.token_hash', 's.member_id', 't.instance_admin', 't.token_hash as admin_token', 'm.email', 'm.role'])
      .where('s.id_hash', '=', idHash)
      .where('s.expires_at', '>', now)
      .executeTakeFirst();
    if (!row) return undefined;
    const base = { orgId: row.org_id, csrfToken: row.csrf_token, createdAt: row.created_at, expiresAt: row.expires_at, tokenHash: row.token_hash };
    if (row.member_id === null) return row.admin_token === null ? undefined : { ...base, instanceAdmin: row.instance_admin === 1 };
    if (row.email === null || row.role === null) return undefined;
    return { ...base, memberId: row.member_id, instanceAdmin: false, member: { id: row.member_id, email: row.email, role: row.role } };
  }

  async delete(idHash: string): Promise<void> {
    await this.db.deleteFrom('console_sessions').where('id_hash', '=', idHash).execute();
  }

  /** Drops expired sessions; how many went. */
  async deleteExpired(now = nowIso()): Promise<number> {
    const result = await this.db.deleteFrom('console_sessions').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
