/**
 * Credentials of the gateway: API keys (trigger and polling surfaces) and admin tokens
 * (management API). Both arrive in clear and are looked up by their SHA-256 only.
 */
import type { Context, Next } from 'koa';
import type { Registry } from '../registry';
import { hashSecret } from '../secrets';
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

export async function authenticateApiKey(registry: Registry, key: string | undefined): Promise<ApiKeyPrincipal> {
  if (!key) throw unauthorized('an API key is required');
  if (!PLAUSIBLE_SECRET.test(key)) throw unauthorized('unknown API key');
  const record = await registry.apiKeys.findByHash(hashSecret(key));
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
