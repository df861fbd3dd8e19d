/**
 * The tool gateway's OAuth 2.1 authorization server (docs/tool-gateway.md "Signing in by URL"):
 * codes and tokens. Everything is opaque and random, stored as its SHA-256 (src/registry/oauth.ts):
 *  - a code lives 60 s, is used once (a second exchange revokes the grant the first one made), and
 *    is bound to the client, its redirect URI, the PKCE S256 challenge, the organization and the
 *    resource;
 *  - an access token lives an hour and is good only at the resource it was issued for;
 *  - a refresh token lives 30 days and is traded once for a new pair (rotation); trading one
 *    twice revokes its grant (RFC 9700 4.14.2: a stolen token's replay ends both copies);
 *  - revoking either token (RFC 7009) ends its grant.
 * Who signs in, and how, is the HTTP side's (src/http/routes/oauth.ts): this only binds codes to
 * whoever it says signed in.
 */
import { createHash } from 'node:crypto';
import { LruCache } from '../cache/lru-cache';
import { hashSecret, newId, randomToken, safeEqual } from '../crypto/secrets';
import type { OAuthBinding, OAuthGrantRecord, Registry } from '../registry';
import { OAuthClients, type ClientLimits } from './clients';
import { OAuthError } from './errors';
import { ROLES, type Role } from '../people/roles';

export const OAUTH_CODE_TTL_SECONDS = 60;
export const OAUTH_ACCESS_TOKEN_TTL_SECONDS = 60 * 60;
export const OAUTH_REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60;
export const OAUTH_ACCESS_TOKEN_PREFIX = 'fgat_';
const REFRESH_TOKEN_PREFIX = 'fgrt_';
const CODE_PREFIX = 'fgcd_';
/** As long as a verified access token is believed without asking the registry again (a revoked grant, a rotated admin token). */
const ACCESS_RECHECK_MS = 1000;
const PKCE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
const PLAUSIBLE = /^[A-Za-z0-9._~-]{16,256}$/;

/** Whom an access token speaks for at the tool gateway. */
export interface OAuthPrincipal {
  orgId: string;
  /** the grant, as `oauth:<grant id>`: what the audit trail names the caller by */
  keyId: string;
  resource: string;
  /** a member's grant: the member's current role (read with the token, believed ≤ 1 s) */
  role?: Role;
  /** a member's grant: who, so they decide approvals as themselves and the audit trail names them */
  member?: { id: string; email: string };
  /** the grant's scope (scopes.ts); null: none asked, the credential's whole reach */
  scope: string | null;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope?: string;
}

const at = (secondsFromNow: number, now: number): string => new Date(now + secondsFromNow * 1000).toISOString();

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

export class OAuthServer {
  readonly clients: OAuthClients;
  private readonly verified = new LruCache<string, OAuthPrincipal>({ maxEntries: 10_000, ttlMs: ACCESS_RECHECK_MS });

  /** `clientLimits`: how many registered clients may be pending, and hold grants per organization (clients.ts) */
  constructor(private readonly deps: { registry: Registry; allowPrivateNetwork: boolean; now?: () => number; clientLimits?: ClientLimits }) {
    this.clients = new OAuthClients({ registry: deps.registry, allowPrivateNetwork: deps.allowPrivateNetwork, ...(deps.now ? { now: deps.now } : {}), ...(deps.clientLimits ? { limits: deps.clientLimits } : {}) });
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /**
   * A code for a signed-in user's consent; an `access_denied` OAuthError when the organization
   * holds as many registered clients as it may (clients.ts) and this one is not among them.
   */
  async issueCode(binding: OAuthBinding, redirectUri: string, codeChallenge: string): Promise<string> {
    await this.clients.checkOrgRoom(binding.orgId, binding.clientId, 'access_denied');
    const code = randomToken(CODE_PREFIX);
    await this.deps.registry.oauth.createCode(hashSecret(code), { ...binding, redirectUri, codeChallenge, expiresAt: at(OAUTH_CODE_TTL_SECONDS, this.now()) });
    // expired codes and tokens are dropped now and then, as console sessions are (src/console/sessions.ts)
    if (Math.random() < 0.05) await this.deleteExpired();
    return code;
  }

  async exchangeCode(request: { code: string; codeVerifier: string; clientId: string; redirectUri: string; resource?: string }): Promise<TokenResponse> {
    const { registry } = this.deps;
    if (!PLAUSIBLE.test(request.code)) throw new OAuthError('invalid_grant', 'unknown or expired code');
    const codeHash = hashSecret(request.code);
    const claim = await registry.oauth.claimCode(codeHash, new Date(this.now()).toISOString());
    if (claim.kind === 'reused') {
      if (claim.grantId) await registry.oauth.revokeGrant(claim.grantId);
      this.verified.clear();
      throw new OAuthError('invalid_grant', 'this code was already used: the tokens it gave are revoked');
    }
    if (claim.kind === 'unknown') throw new OAuthError('invalid_grant', 'unknown or expired code');
    const { code } = claim;
    if (code.clientId !== request.clientId) throw new OAuthError('invalid_grant', 'the code was issued to another client');
    if (code.redirectUri !== request.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri differs from the authorization request\'s');
    if (!PKCE_VERIFIER.test(request.codeVerifier) || !safeEqual(s256(request.codeVerifier), code.codeChallenge)) {
      throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge (PKCE)');
    }
    if (request.resource !== undefined && request.resource !== code.resource) throw new OAuthError('invalid_target', 'resource differs from the authorization request\'s');
    // the organization's room for one more registered client, checked again where the grant binds it
    await this.clients.checkOrgRoom(code.orgId, code.clientId, 'invalid_grant');
    const grantId = newId('grant');
    const { redirectUri: _r, codeChallenge: _c, expiresAt: _e, ...binding } = code;
    // used before the grant exists: a client is never left pending with a grant
    await registry.oauth.touchClient(code.clientId, new Date(this.now()).toISOString());
    await registry.oauth.createGrant(grantId, binding, codeHash);
    return this.issueTokens(grantId, code.scope);
  }

  async refresh(request: { refreshToken: string; clientId: string; resource?: string }): Promise<TokenResponse> {
    const { registry } = this.deps;
    const invalid = (): OAuthError => new OAuthError('invalid_grant', 'unknown, expired or revoked refresh token');
    if (!request.refreshToken.startsWith(REFRESH_TOKEN_PREFIX) || !PLAUSIBLE.test(request.refreshToken)) throw invalid();
    const hash = hashSecret(request.refreshToken);
    const found = await registry.oauth.findToken(hash, new Date(this.now()).toISOString());
    if (!found || found.kind !== 'refresh') throw invalid();
    if (found.clientId !== request.clientId) throw new OAuthError('invalid_grant', 'the refresh token was issued to another client');
    if (request.resource !== undefined && request.resource !== found.resource) throw new OAuthError('invalid_target', 'a refresh token is good only for the resource it was issued for');
    if (!(await registry.oauth.useRefreshToken(hash))) {
      await registry.oauth.revokeGrant(found.grantId);
      this.verified.clear();
      throw new OAuthError('invalid_grant', 'this refresh token was already used: its grant is revoked');
    }
    await registry.oauth.touchClient(found.clientId, new Date(this.now()).toISOString());
    return this.issueTokens(found.grantId, found.scope);
  }

  private async issueTokens(grantId: string, scope: string | null): Promise<TokenResponse> {
    const access = randomToken(OAUTH_ACCESS_TOKEN_PREFIX);
    const refresh = randomToken(REFRESH_TOKEN_PREFIX);
    const now = this.now();
    await this.deps.registry.oauth.createToken(hashSecret(access), grantId, 'access', at(OAUTH_ACCESS_TOKEN_TTL_SECONDS, now));
    await this.deps.registry.oauth.createToken(hashSecret(refresh), grantId, 'refresh', at(OAUTH_REFRESH_TOKEN_TTL_SECONDS, now));
    return { access_token: access, token_type: 'Bearer', expires_in: OAUTH_ACCESS_TOKEN_TTL_SECONDS, refresh_token: refresh, ...(scope ? { scope } : {}) };
  }

  /**
   * Token revocation (RFC 7009): an access or refresh token of `clientId` ends its whole grant.
   * Unknown tokens, and another client's, are answered the same (200) and change nothing.
   */
  async revoke(token: string, clientId: string): Promise<void> {
    if (!PLAUSIBLE.test(token)) return;
    const found = await this.deps.registry.oauth.findToken(hashSecret(token), new Date(this.now()).toISOString());
    if (!found || found.clientId !== clientId) return;
    await this.deps.registry.oauth.revokeGrant(found.grantId);
    this.verified.clear();
  }

  /** Whether a bearer token is one of ours (else it is another kind: a runtime token, say). */
  static isAccessToken(token: string): boolean {
    return token.startsWith(OAUTH_ACCESS_TOKEN_PREFIX);
  }

  /**
   * The principal of a live access token whose resource is one of `resources` (the server's own
   * URL, or the whole gateway's); undefined for anything else: unknown, expired, revoked, or
   * issued for another resource.
   */
  async verifyAccess(token: string, resources: readonly string[]): Promise<OAuthPrincipal | undefined> {
    if (!PLAUSIBLE.test(token) || !OAuthServer.isAccessToken(token)) return undefined;
    const hash = hashSecret(token);
    const principal = await this.verified.getOrLoad(hash, async () => {
      const found = await this.deps.registry.oauth.findToken(hash, new Date(this.now()).toISOString());
      if (!found || found.kind !== 'access') return undefined;
      const role = ROLES.find((r) => r === found.role);
      if (found.memberId !== null && (!role || found.memberEmail === null)) return undefined;
      const member = found.memberId !== null && found.memberEmail !== null ? { id: found.memberId, email: found.memberEmail } : undefined;
      return { orgId: found.orgId, keyId: `oauth:${found.grantId}`, resource: found.resource, scope: found.scope, ...(role ? { role } : {}), ...(member ? { member } : {}) };
    });
    return principal && resources.includes(principal.resource) ? principal : undefined;
  }

  /** The organization's live grants (GET /api/v1/oauth/grants). */
  listGrants(orgId: string): Promise<OAuthGrantRecord[]> {
    return this.deps.registry.oauth.listGrants(orgId, new Date(this.now()).toISOString());
  }

  /**
   * Ends one of the organization's grants: its tokens are refused at once here and within the
   * verifier's second on other replicas. False when the organization has no such live grant.
   */
  async revokeOrgGrant(orgId: string, grantId: string): Promise<boolean> {
    const revoked = await this.deps.registry.oauth.revokeOrgGrant(orgId, grantId, new Date(this.now()).toISOString());
    if (revoked) this.verified.clear();
    return revoked;
  }

  /** Drops expired codes and tokens. */
  deleteExpired(): Promise<number> {
    return this.deps.registry.oauth.deleteExpired(new Date(this.now()).toISOString());
  }
}
