/**
 * The organization's credentials an admin manages (docs/people-and-roles.md): organizations with
 * their first admin token, the rotation and reissue of admin tokens, and API keys. Each secret is
 * returned here once and stored hashed; its name in the audit trail is a fingerprint of the hash.
 */
import { credentialFingerprint } from '../audit/audit-trail';
import { hashSecret, randomToken } from '../crypto/secrets';
import type { Role } from '../people/roles';
import type { Registry } from '../registry';
import { done, refused, type Outcome } from './outcome';

export const ADMIN_TOKEN_PREFIX = 'fga_';
export const API_KEY_PREFIX = 'fgk_';

/** The audit trail's name of an admin token (`adm_` + the start of its SHA-256), as its records' credential id: never the token. */
export function adminTokenId(tokenHash: string): string {
  return credentialFingerprint('adm_', tokenHash);
}

/** Who asks: an organization's admin credential, the instance administrator's, or a member's token with the admin's rights. */
export interface AdminActor {
  orgId: string;
  instanceAdmin: boolean;
  /** the member whose personal access token this is, when it is one */
  memberId: string | null;
}

export interface KeyAdminDeps {
  registry: Registry;
  /** forgets revoked API keys at once on this replica (the key caches of the gateway and of runtime tokens) */
  forgetKeys: () => void;
}

export interface IssuedAdminToken {
  adminToken: string;
  adminTokenId: string;
}

export class KeyAdmin {
  constructor(private readonly deps: KeyAdminDeps) {}

  /** Only the instance administrator creates organizations. */
  mayCreateOrgs(actor: AdminActor): Outcome<void> {
    return actor.instanceAdmin ? done(undefined) : refused('FORBIDDEN', 'only the instance administrator may create organizations');
  }

  /** A new organization with its first admin token (the instance administrator only). */
  async createOrg(actor: AdminActor, name: string): Promise<Outcome<{ id: string; name: string } & IssuedAdminToken>> {
    const may = this.mayCreateOrgs(actor);
    if (!may.ok) return may;
    const org = await this.deps.registry.orgs.create(name);
    const adminToken = randomToken(ADMIN_TOKEN_PREFIX);
    const hash = hashSecret(adminToken);
    await this.deps.registry.orgs.addAdminToken(org.id, hash, { instanceAdmin: false });
    return done({ id: org.id, name: org.name, adminToken, adminTokenId: adminTokenId(hash) });
  }

  /** A new admin token for the actor's organization; its previous ones stop working at once. */
  async rotateAdminToken(actor: AdminActor): Promise<Outcome<IssuedAdminToken>> {
    if (actor.instanceAdmin) {
      return refused('BOOTSTRAP_TOKEN', 'the instance administrator\'s token comes from FLOWGATE_ADMIN_TOKEN (or <data>/admin-token): change it there and restart to revoke the old one');
    }
    return done(await this.reissue(actor.orgId, actor.memberId));
  }

  /** A new admin token for another organization (the instance administrator only). */
  async reissueAdminToken(actor: AdminActor, orgId: string): Promise<Outcome<{ id: string } & IssuedAdminToken>> {
    if (!actor.instanceAdmin) return refused('FORBIDDEN', 'only the instance administrator may reissue another organization\'s token');
    const org = await this.deps.registry.orgs.get(orgId);
    if (!org || org.id === actor.orgId) return refused('UNKNOWN_ORG', `no organization ${orgId} other than the instance administrator's`);
    return done({ id: org.id, ...(await this.reissue(org.id, null)) });
  }

  /**
   * A new API key: the key itself is returned here only (the registry keeps its hash). `memberId`:
   * the member who created it, whose removal revokes it (docs/people-and-roles.md "Offboarding").
   */
  async createApiKey(orgId: string, name: string | null, role: Role | null = null, memberId: string | null = null): Promise<{ id: string; name: string | null; key: string; role?: Role }> {
    const key = randomToken(API_KEY_PREFIX);
    const record = await this.deps.registry.apiKeys.create(orgId, name, hashSecret(key), role, memberId);
    return { id: record.id, name: record.name, key, ...(record.role ? { role: record.role } : {}) };
  }

  /** Revokes the organization's key at once (caches forgotten). */
  async revokeApiKey(orgId: string, keyId: string): Promise<Outcome<void>> {
    if (!(await this.deps.registry.apiKeys.revoke(orgId, keyId))) return refused('UNKNOWN_API_KEY', `no API key ${keyId}`);
    this.deps.forgetKeys();
    return done(undefined);
  }

  /**
   * A new admin token for an organization, replacing its others. Minted by a member (their
   * personal access token rotated it), it names them and ends with them (docs/people-and-roles.md
   * "Offboarding"); `adminTokenId` is the token's name in the audit trail.
   */
  private async reissue(orgId: string, memberId: string | null): Promise<IssuedAdminToken> {
    const adminToken = randomToken(ADMIN_TOKEN_PREFIX);
    const hash = hashSecret(adminToken);
    await this.deps.registry.orgs.replaceAdminTokens(orgId, hash, { instanceAdmin: false, memberId });
    return { adminToken, adminTokenId: adminTokenId(hash) };
  }
}
