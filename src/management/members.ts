/**
 * People of an organization (docs/people-and-roles.md): members with a role, and their personal
 * access tokens (`fgp_…`, returned once, stored hashed). Removing a member ends their tokens and
 * console sessions at once, and the credentials they minted ("Offboarding"): the answer says
 * what ended.
 */
import { credentialFingerprint } from '../audit/audit-trail';
import { hashSecret, randomToken } from '../crypto/secrets';
import type { Role } from '../people/roles';
import { RegistryError, type MemberCredentials, type MemberRecord, type MemberRemoval, type Registry } from '../registry';
import { adminTokenId } from './keys';
import { done, refused, type Outcome } from './outcome';

export const MEMBER_TOKEN_PREFIX = 'fgp_';

/** A personal access token's name in the audit trail (`pat_` + the start of its SHA-256), as its records' credential id. */
export function memberTokenId(tokenHash: string): string {
  return credentialFingerprint('pat_', tokenHash);
}

/** What a removed member's admins are told when no admin token reaches the organization any more. */
export const NO_ADMIN_TOKEN_LEFT = 'no admin token reaches the organization any more (the one this member minted ended with them): scripts using it are refused (401). '
  + 'A remaining admin member mints a new one with POST /api/v1/admin-token/rotate, or the instance administrator with POST /api/v1/orgs/{id}/admin-token';

/** A removal as its answer (and its audit record) tells it: the member, the names (audit trail ids) of what ended, and whether an admin token is left. */
export function removalBody(removal: MemberRemoval) {
  return {
    id: removal.member.id,
    email: removal.member.email,
    endedAdminTokens: removal.adminTokens.map((t) => adminTokenId(t.tokenHash)),
    endedApiKeys: removal.apiKeys.map((k) => k.id),
    endedMemberTokens: [...removal.ownTokens, ...removal.issuedTokens].map((t) => memberTokenId(t.tokenHash)),
    adminTokensLeft: removal.adminTokensLeft,
    ...(removal.adminTokensLeft === 0 ? { warning: NO_ADMIN_TOKEN_LEFT } : {}),
  };
}

export interface MemberAdminDeps {
  registry: Registry;
  /** forgets revoked API keys at once on this replica (the others within a second) */
  forgetKeys: () => void;
}

export class MemberAdmin {
  constructor(private readonly deps: MemberAdminDeps) {}

  async add(orgId: string, input: { email: string; name?: string; role: Role }): Promise<Outcome<MemberRecord>> {
    try {
      return done(await this.deps.registry.members.create(orgId, { email: input.email, name: input.name ?? null, role: input.role }));
    } catch (error) {
      if (error instanceof RegistryError && error.code === 'CONFLICT') return refused('MEMBER_EXISTS', error.message);
      throw error;
    }
  }

  async update(orgId: string, id: string, change: { role?: Role; name?: string | null }): Promise<Outcome<MemberRecord>> {
    const member = await this.deps.registry.members.update(orgId, id, change);
    return member ? done(member) : unknownMember(id);
  }

  /** Removes the member and what they minted (MemberStore.remove), forgetting the revoked API keys at once. */
  async remove(orgId: string, id: string): Promise<Outcome<MemberRemoval>> {
    const removal = await this.deps.registry.members.remove(orgId, id);
    if (!removal) return unknownMember(id);
    if (removal.apiKeys.length > 0) this.deps.forgetKeys();
    return done(removal);
  }

  /** What removing the member would end, and how many admin tokens reach the organization now. */
  async credentials(orgId: string, id: string): Promise<Outcome<{ member: MemberRecord; credentials: MemberCredentials; adminTokens: number }>> {
    const member = await this.deps.registry.members.get(orgId, id);
    if (!member) return unknownMember(id);
    const credentials = await this.deps.registry.members.credentials(orgId, member.id);
    return done({ member, credentials, adminTokens: await this.deps.registry.orgs.countAdminTokens(orgId) });
  }

  /**
   * A new personal access token for the member (returned once); the member's other tokens keep
   * working. Issued by a member (`issuedBy`), it ends with them too (they saw it).
   */
  async issueToken(orgId: string, id: string, issuedBy: string | null): Promise<Outcome<{ memberId: string; token: string; tokenId: string }>> {
    const member = await this.deps.registry.members.get(orgId, id);
    if (!member) return unknownMember(id);
    const token = randomToken(MEMBER_TOKEN_PREFIX);
    const hash = hashSecret(token);
    await this.deps.registry.members.addToken(member, hash, issuedBy);
    return done({ memberId: member.id, token, tokenId: memberTokenId(hash) });
  }

  /** Revokes every personal access token of the member. */
  async revokeTokens(orgId: string, id: string): Promise<Outcome<void>> {
    const member = await this.deps.registry.members.get(orgId, id);
    if (!member) return unknownMember(id);
    await this.deps.registry.members.revokeTokens(member.orgId, member.id);
    return done(undefined);
  }
}

function unknownMember(id: string) {
  return refused('UNKNOWN_MEMBER', `no member ${id}`);
}
