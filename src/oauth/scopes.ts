/**
 * The scopes an MCP client may ask for when it signs in by URL (docs/tool-gateway.md "Scopes"):
 * `tools:read` reads (lists tools, reads tasks, discovery and the read-only tools) and
 * `tools:call` is everything the signed-in credential may do. A grant without a scope, or with
 * `tools:call`, reaches what its credential reaches (a member's role still applies); one with
 * `tools:read` alone is refused anything more with 403 `insufficient_scope`, naming the scope
 * that would do (RFC 6750 §3.1; MCP's step-up authorization).
 */
import { fieldOf, isOneOf } from '../common/narrow';
import { mcpPermission } from '../people/tool-permissions';

export const OAUTH_SCOPES = ['tools:read', 'tools:call'] as const;
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

/** The scope that allows everything the credential may do. */
export const FULL_SCOPE: OAuthScope = 'tools:call';

/**
 * A requested scope normalized (known scopes, once each, in OAUTH_SCOPES order; null for none),
 * or the scopes this server does not know.
 */
export function parseScope(scope: string | undefined | null): { ok: true; scope: string | null } | { ok: false; unknown: string[] } {
  const asked = (scope ?? '').split(' ').filter((s) => s !== '');
  const unknown = asked.filter((s) => !isOneOf(OAUTH_SCOPES, s));
  if (unknown.length > 0) return { ok: false, unknown: [...new Set(unknown)] };
  const known = OAUTH_SCOPES.filter((s) => asked.includes(s));
  return { ok: true, scope: known.length === 0 ? null : known.join(' ') };
}

/** Whether a grant's scope (null: none asked) lets a request of `method` on `server` through. */
export function scopeAllows(scope: string | null | undefined, method: string, server: string, params: unknown): boolean {
  if (scope === null || scope === undefined) return true;
  const scopes = scope.split(' ');
  if (scopes.includes(FULL_SCOPE)) return true;
  return scopes.includes('tools:read') && mcpPermission(method, server, params) === 'read';
}

/** The first message of a request (one, or a batch) that the scope does not let through; undefined when all pass. */
export function beyondScope(scope: string | null | undefined, raw: unknown, server: string): { id: string | number | null; method: string } | undefined {
  if (scope === null || scope === undefined) return undefined;
  for (const message of Array.isArray(raw) ? raw : [raw]) {
    if (typeof message !== 'object' || message === null) continue;
    const id = fieldOf(message, 'id');
    const method = fieldOf(message, 'method');
    const params = fieldOf(message, 'params');
    // a client's response (an elicitation's answer) decides an approval: tasks/update's permission
    const asked = typeof method === 'string' ? method : 'tasks/update';
    if (!scopeAllows(scope, asked, server, params)) return { id: typeof id === 'string' || typeof id === 'number' ? id : null, method: asked };
  }
  return undefined;
}
