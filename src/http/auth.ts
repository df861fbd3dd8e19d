/**
 * Credentials of the gateway: API keys (trigger and polling surfaces) and admin tokens
 * (management API). Both arrive in clear and are looked up by their SHA-256 only.
 */
import type { Context, Next } from 'koa';
import { LruCache } from '../common/lru-cache';
import type { ApiKeyRecord, Registry } from '../registry';
import { hashSecret } from '../crypto/secrets';
import { unauthorized } from './http-error';

export interface ApiKeyPrincipal {
  orgId: string;
  keyId: string;
}

export interface AdminPrincipal {
  orgId: string;
  instanceAdmin: boolean;
}

const PLAUSIBLE_SECRET = /^[A-Za-z0-9._~-]{16,256}$/;

/**
 * How long a found API key is believed without asking the registry again. Revoking a key on any
 * replica writes `revoked_at` in the shared registry; every gateway re-reads each key it serves
 * at least this often, so a revocation takes effect everywhere within a second, with room for a
 * slow registry query (and at once on
 * the replica that revoked it, which also drops its cached copy). Unknown keys are never cached.
 */
export const CREDENTIAL_RECHECK_MS = 500;
const CACHED_KEYS = 10_000;

/** One cache per registry (tests run several instances in one process). */
const keyCaches = new WeakMap<Registry, LruCache<string, ApiKeyRecord>>();

function keyCache(registry: Registry): LruCache<string, ApiKeyRecord> {
  let cache = keyCaches.get(registry);
  if (!cache) {
    cache = new LruCache({ maxEntries: CACHED_KEYS, ttlMs: CREDENTIAL_RECHECK_MS });
    keyCaches.set(registry, cache);
  }
  return cache;
}

/** After a revocation here: this replica forgets every cached key at once. */
export function forgetApiKeys(registry: Registry): void {
  keyCaches.get(registry)?.clear();
}

export async function authenticateApiKey(registry: Registry, key: string | undefined): Promise<ApiKeyPrincipal> {
  if (!key) throw unauthorized('an API key is required');
  if (!PLAUSIBLE_SECRET.test(key)) throw unauthorized('unknown API key');
  const hash = hashSecret(key);
  const record = await keyCache(registry).getOrLoad(hash, () => registry.apiKeys.findByHash(hash));
  if (!record) throw unauthorized('unknown API key');
  return { orgId: record.orgId, keyId: record.id };
}

export function requireAdmin(options: { registry: Registry }) {
  return async function adminOnly(ctx: Context, next: Next): Promise<void> {
    const match = /^Bearer\s+(\S+)$/i.exec(ctx.get('Authorization'));
    const token = match?.[1];
    if (!token || !PLAUSIBLE_SECRET.test(token)) throw unauthorized('an admin bearer token is required');
    const found = await options.registry.orgs.findAdminToken(hashSecret(token));
    if (!found) throw unauthorized('unknown admin token');
    ctx.state.admin = found satisfies AdminPrincipal;
    await next();
  };
}
