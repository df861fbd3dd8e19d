/**
 * Credentials of the gateway: API keys (trigger and polling surfaces) and admin tokens
 * (management API). Both arrive in clear and are looked up by their SHA-256 only.
 */
import type { Next } from 'koa';
import { LruCache } from '../cache/lru-cache';
import type { ApiKeyRecord, Registry } from '../registry';
import { hashSecret } from '../crypto/secrets';
import { HttpError, unauthorized } from './http-error';
import { isRole, roleHas, type Permission } from '../people/roles';
import { matchedLayer, operationOf, permissionOf } from './operation';
import { routeTemplate } from './middleware/observe';
import { credentialFingerprint, type AuditTrail } from '../audit/audit-trail';
import { auditAdminRequest } from './middleware/audit';
import type { AdminPrincipal, ApiKeyPrincipal, GatewayContext } from './state';
// a member's personal access token starts with this (an admin token never does)
import { MEMBER_TOKEN_PREFIX } from '../management/members';

export type { AdminPrincipal, ApiKeyPrincipal } from './state';

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
  return { orgId: record.orgId, keyId: record.id, ...(record.role ? { role: record.role } : {}) };
}

/** The route template of the request (the route layer @koa/router matched), before the route runs. */
function matchedRoute(ctx: GatewayContext): string {
  const layer = matchedLayer(ctx);
  return typeof layer?.path === 'string' ? layer.path : routeTemplate(ctx);
}

/** The caller a management bearer token names: an admin token (admin role) or a member's personal access token. */
async function principalOfToken(registry: Registry, token: string | undefined): Promise<AdminPrincipal> {
  if (!token || !PLAUSIBLE_SECRET.test(token)) throw unauthorized('an admin bearer token or a personal access token is required');
  const hash = hashSecret(token);
  if (token.startsWith(MEMBER_TOKEN_PREFIX)) {
    const member = await registry.members.findByTokenHash(hash);
    if (!member || !isRole(member.role)) throw unauthorized('unknown personal access token');
    return {
      orgId: member.orgId, instanceAdmin: false, credentialId: credentialFingerprint('pat_', hash), role: member.role, member: { id: member.id, email: member.email },
    };
  }
  const found = await registry.orgs.findAdminToken(hash);
  if (!found) throw unauthorized('unknown admin token');
  return { ...found, credentialId: credentialFingerprint('adm_', hash), role: 'admin' };
}

/** 403 naming the permission the caller's role lacks. */
export function permissionDenied(principal: Pick<AdminPrincipal, 'role'>, permission: Permission): HttpError {
  return new HttpError(403, 'permission_denied', `the ${principal.role} role lacks the permission ${permission}`);
}

/**
 * The management API's guard: the bearer token (an admin token, or a member's personal access
 * token with the member's role), the permission the route needs (src/people/roles.ts), then the
 * route, recorded in the audit trail (middleware/audit.ts) when `audit` is given (every gateway's
 * is; a bare app in a test may omit it). A refused permission is recorded like any refusal.
 */
export function requireAdmin(options: { registry: Registry; audit?: AuditTrail }) {
  const { audit } = options;
  return async function adminOnly(ctx: GatewayContext, next: Next): Promise<void> {
    const match = /^Bearer\s+(\S+)$/i.exec(ctx.get('Authorization'));
    const admin = await principalOfToken(options.registry, match?.[1]);
    ctx.state.admin = admin;
    const route = matchedRoute(ctx);
    const op = operationOf(ctx);
    const permission = permissionOf(op, ctx.method);
    const guarded = async (): Promise<void> => {
      if (!roleHas(admin.role, permission)) {
        // the route layer never runs: the audit record and the metrics name the route, not the router's guard
        Reflect.set(ctx, '_matchedRoute', route);
        throw permissionDenied(admin, permission);
      }
      await next();
    };
    if (audit) await auditAdminRequest(audit, ctx, admin, guarded);
    else await guarded();
  };
}
