/**
 * Runtime tokens of the tool gateway: `POST /auth/token` trades an API key for one. A token is
 * `fgr_<payload>.<signature>`, the payload the base64url JSON of {v, org, kid, exp}, the signature
 * an HMAC-SHA256 under a key derived from the data dir's signing key (so a file link signature can
 * never pass as a token). Verifying checks the signature and expiry, then that the API key it was
 * minted from is still active: revoking the key kills its tokens at once.
 */
import { z } from 'zod';
import { LruCache } from '../cache/lru-cache';
import type { ApiKeyRecord, Registry } from '../registry';
import type { Role } from '../contracts/roles';
import { hmac, safeEqual } from './secrets';

export const RUNTIME_TOKEN_PREFIX = 'fgr_';
export const RUNTIME_TOKEN_TTL_SECONDS = 60 * 60;
/**
 * How long an active API key behind a token is believed without asking the registry again: a
 * revocation on any replica reaches every gateway within a second (the same window as API keys
 * in src/http/auth.ts).
 */
export const KEY_RECHECK_MS = 900;

const PayloadSchema = z.object({
  v: z.literal(1),
  org: z.string().min(1),
  kid: z.string().min(1),
  exp: z.number().int(),
});

export interface RuntimePrincipal {
  orgId: string;
  keyId: string;
  /** the caller's role (src/people/roles.ts); absent: every permission (an unrestricted API key, an admin token's grant) */
  role?: Role;
  /**
   * A member signed in by URL (an OAuth grant of theirs, src/oauth/): they decide approvals as
   * themselves (their e-mail is the approver) and the audit trail names them.
   */
  member?: { id: string; email: string };
  /** an OAuth grant's scope (src/oauth/scopes.ts): `tools:read` alone allows reads only; absent or null: no limit */
  scope?: string | null;
}

export interface RuntimeTokens {
  issue(principal: RuntimePrincipal): { token: string; expiresAt: string };
  /**
   * undefined for a malformed, forged, expired or revoked token. A plain value when this process
   * checked the key within KEY_RECHECK_MS (nearly every call of a busy client: no promise made),
   * else a promise.
   */
  verify(token: string): RuntimePrincipal | undefined | Promise<RuntimePrincipal | undefined>;
  /**
   * The API key a genuine, unexpired token was minted from, checked without the registry (so a
   * revoked key's token still answers here): what the rate limiter counts a token against.
   */
  keyIdOf(token: string): string | undefined;
  /** Drops this process's cached copy of API keys (after a revocation here). */
  forgetKeys(): void;
}

export function createRuntimeTokens(signingKey: Buffer, registry: Registry, now: () => number = Date.now): RuntimeTokens {
  const key = Buffer.from(hmac(signingKey, 'flowgate runtime token key v1'), 'base64url');
  const activeKeys = new LruCache<string, ApiKeyRecord>({ maxEntries: 10_000, ttlMs: KEY_RECHECK_MS });
  /**
   * Tokens whose signature checked out, with their claims: a client sends the same token for an
   * hour, and each request reads it twice (rate limiter, then verify). Only genuine tokens are
   * kept, so forged ones cannot fill it; the expiry is checked on every use.
   */
  const genuine = new LruCache<string, z.infer<typeof PayloadSchema>>({ maxEntries: 10_000, ttlMs: RUNTIME_TOKEN_TTL_SECONDS * 1000 });
  /** The claims of a token that is well formed, signed by us and not expired. */
  const signedClaims = (token: string): z.infer<typeof PayloadSchema> | undefined => {
    let claims = genuine.get(token);
    if (!claims) {
      claims = checkedClaims(token);
      if (claims) genuine.set(token, claims);
    }
    return claims && claims.exp * 1000 > now() ? claims : undefined;
  };
  /** The claims of a token that is well formed and signed by us (expired or not). */
  const checkedClaims = (token: string): z.infer<typeof PayloadSchema> | undefined => {
    if (!token.startsWith(RUNTIME_TOKEN_PREFIX) || token.length > 1024) return undefined;
    const [payload, signature, ...rest] = token.slice(RUNTIME_TOKEN_PREFIX.length).split('.');
    if (!payload || !signature || rest.length > 0 || !safeEqual(signature, hmac(key, payload))) return undefined;
    let claims: z.infer<typeof PayloadSchema>;
    try {
      const parsed = PayloadSchema.safeParse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
      if (!parsed.success) return undefined;
      claims = parsed.data;
    } catch {
      return undefined;
    }
    return claims;
  };
  return {
    keyIdOf: (token) => signedClaims(token)?.kid,
    forgetKeys: () => activeKeys.clear(),
    issue({ orgId, keyId }) {
      const exp = Math.floor(now() / 1000) + RUNTIME_TOKEN_TTL_SECONDS;
      const payload = Buffer.from(JSON.stringify({ v: 1, org: orgId, kid: keyId, exp })).toString('base64url');
      return { token: `${RUNTIME_TOKEN_PREFIX}${payload}.${hmac(key, payload)}`, expiresAt: new Date(exp * 1000).toISOString() };
    },
    verify(token) {
      const claims = signedClaims(token);
      if (!claims) return undefined;
      const principalOf = (apiKey: ApiKeyRecord | undefined): RuntimePrincipal | undefined => (
        // the key's role as it is now (re-read within KEY_RECHECK_MS), not as it was when the token was minted
        apiKey && apiKey.orgId === claims.org ? { orgId: claims.org, keyId: claims.kid, ...(apiKey.role ? { role: apiKey.role } : {}) } : undefined);
      const known = activeKeys.get(claims.kid);
      if (known !== undefined) return principalOf(known);
      return activeKeys.getOrLoad(claims.kid, () => registry.apiKeys.getActive(claims.kid)).then(principalOf);
    },
  };
}
