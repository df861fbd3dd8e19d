/**
 * Console sign-in (docs/console.md): an organization's admin token, checked as the management API
 * checks it, opens a server-side session. The browser holds only the session's random ID (an
 * HttpOnly, SameSite=Strict cookie); the registry holds its SHA-256, the organization, the
 * synchronizer CSRF token and the expiry. A session ends at its expiry, at sign-out, or when the
 * admin token it signed in with is rotated. A member's session (a sign-in through the organization's
 * identity provider, src/people/) carries the member's role as it is now, and ends when they are removed.
 */
import type { Registry } from '../registry';
import type { MemberRecord } from '../registry';
import { hashSecret, randomToken, safeEqual } from '../crypto/secrets';
import { isRole, type Role } from '../people/roles';

const PLAUSIBLE_SECRET = /^[A-Za-z0-9._~-]{16,256}$/;
export const SESSION_PREFIX = 'fgs_';

export interface ConsoleSession {
  orgId: string;
  csrfToken: string;
  expiresAt: string;
  /** the SHA-256 of the session's ID (the audit trail names the session by its start, never by the cookie) */
  idHash: string;
  /** the SHA-256 of the admin token the session signed in with, and whether it is the instance administrator's */
  adminTokenHash: string;
  instanceAdmin: boolean;
  /** what the session may do: `admin` for an admin token's, the member's role (as it is now) for a member's */
  role: Role;
  /** the member a sign-in through the organization's identity provider opened it for */
  member?: { id: string; email: string };
}

/** The organization an admin token opens, without opening a session (a refused sign-in is recorded under it). */
export interface AdminGrant {
  orgId: string;
  instanceAdmin: boolean;
  tokenHash: string;
}

export interface ConsoleSessionsDeps {
  registry: Registry;
  lifetimeMinutes: number;
  now?: () => number;
}

export class ConsoleSessions {
  constructor(private readonly deps: ConsoleSessionsDeps) {}

  /** A new session for the admin token's organization; undefined for a token that is not one. */
  async signIn(adminToken: string): Promise<{ id: string; session: ConsoleSession } | undefined> {
    const grant = await this.grantOf(adminToken);
    if (!grant) return undefined;
    const { tokenHash } = grant;
    const now = (this.deps.now ?? Date.now)();
    const id = randomToken(SESSION_PREFIX);
    const idHash = hashSecret(id);
    const session: ConsoleSession = {
      orgId: grant.orgId, csrfToken: randomToken(''), expiresAt: new Date(now + this.deps.lifetimeMinutes * 60_000).toISOString(),
      idHash, adminTokenHash: tokenHash, instanceAdmin: grant.instanceAdmin, role: 'admin',
    };
    await this.deps.registry.consoleSessions.create(idHash, {
      orgId: session.orgId, csrfToken: session.csrfToken, expiresAt: session.expiresAt, tokenHash, createdAt: new Date(now).toISOString(),
    });
    // now and then, the expired sessions of everyone go
    if (Math.random() < 0.05) await this.deps.registry.consoleSessions.deleteExpired(new Date(now).toISOString());
    return { id, session };
  }

  /** A new session for a member who signed in through the organization's identity provider. */
  async signInMember(member: MemberRecord): Promise<{ id: string; session: ConsoleSession }> {
    if (!isRole(member.role)) throw new Error(`member ${member.id} has no known role`);
    const now = (this.deps.now ?? Date.now)();
    const id = randomToken(SESSION_PREFIX);
    const idHash = hashSecret(id);
    // no admin token: the token column names the member, which no admin token's hash can equal
    const tokenHash = `member:${member.id}`;
    const session: ConsoleSession = {
      orgId: member.orgId, csrfToken: randomToken(''), expiresAt: new Date(now + this.deps.lifetimeMinutes * 60_000).toISOString(),
      idHash, adminTokenHash: tokenHash, instanceAdmin: false, role: member.role, member: { id: member.id, email: member.email },
    };
    await this.deps.registry.consoleSessions.create(idHash, {
      orgId: session.orgId, csrfToken: session.csrfToken, expiresAt: session.expiresAt, tokenHash, memberId: member.id, createdAt: new Date(now).toISOString(),
    });
    return { id, session };
  }

  /**
   * A new session for the member whose personal access token this is (`fgp_…`, issued through
   * POST /api/v1/members/{id}/tokens): their role as it is now, as a sign-in through the identity
   * provider gives. Undefined for a token that is not one. The token is not kept: the session ends at
   * its expiry, at sign-out or when the member is removed (revoking the token ends no open session).
   */
  async signInMemberToken(token: string): Promise<{ id: string; session: ConsoleSession } | undefined> {
    if (!PLAUSIBLE_SECRET.test(token)) return undefined;
    const member = await this.deps.registry.members.findByTokenHash(hashSecret(token));
    if (!member || !isRole(member.role)) return undefined;
    return this.signInMember(member);
  }

  /** The grant of an admin token (undefined for one that is not), its hash included; opens nothing. */
  async grantOf(adminToken: string): Promise<AdminGrant | undefined> {
    if (!PLAUSIBLE_SECRET.test(adminToken)) return undefined;
    const tokenHash = hashSecret(adminToken);
    const grant = await this.deps.registry.orgs.findAdminToken(tokenHash);
    return grant && { orgId: grant.orgId, instanceAdmin: grant.instanceAdmin, tokenHash };
  }

  /** The live session with this cookie value; undefined for a forged, expired or signed-out one. */
  async find(id: string | undefined): Promise<ConsoleSession | undefined> {
    if (!id || !id.startsWith(SESSION_PREFIX) || !PLAUSIBLE_SECRET.test(id)) return undefined;
    const idHash = hashSecret(id);
    const found = await this.deps.registry.consoleSessions.find(idHash, new Date((this.deps.now ?? Date.now)()).toISOString());
    if (!found) return undefined;
    const base = { orgId: found.orgId, csrfToken: found.csrfToken, expiresAt: found.expiresAt, idHash, adminTokenHash: found.tokenHash, instanceAdmin: found.instanceAdmin };
    if (!found.member) return { ...base, role: 'admin' };
    const { role } = found.member;
    return isRole(role) ? { ...base, role, member: { id: found.member.id, email: found.member.email } } : undefined;
  }

  async signOut(id: string): Promise<void> {
    if (PLAUSIBLE_SECRET.test(id)) await this.deps.registry.consoleSessions.delete(hashSecret(id));
  }

  /** Whether a form's CSRF token is the session's (constant time). */
  static csrfMatches(session: ConsoleSession, sent: unknown): boolean {
    return typeof sent === 'string' && sent.length > 0 && safeEqual(sent, session.csrfToken);
  }
}
