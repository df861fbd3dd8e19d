/**
 * The console's API keys page (docs/console.md "API keys"): the organization's keys (names, never
 * the keys), creating one (shown once, on the page the creation redirects to, carried there in a
 * sealed cookie that page clears: ShownOnce) and revoking one. The same actions as POST and DELETE /api/v1/api-keys
 * (KeyAdmin, src/management/keys.ts), audited with their names.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { SHOWN_ONCE_SECONDS, type ShownOnce } from '../../console/shown-once';
import type { GatewayDeps } from '../deps';
import { noteForAudit } from '../console/audit';
import { refusalStatus } from '../management-status';
import { consoleState } from '../console/guard';
import { keysBody } from '../console/key-views';
import { page, send } from '../console/layout';
import type { ConsoleRouteKit } from '../console/kit';
import { CreateApiKeySchema } from '../../management/schemas';
import { z } from 'zod';
import { formOf } from '../validate';

export function consoleKeyRoutes(router: Router, deps: GatewayDeps, kit: ConsoleRouteKit, shownOnce: ShownOnce): void {
  const { session, csrf, audited, apiAction, parseForm } = kit;

  const keysPage = async (ctx: Context, status: number, extra: { notice?: string; error?: string } = {}): Promise<void> => {
    const { session: s } = consoleState(ctx);
    const keys = await deps.registry.apiKeys.list(s.orgId);
    // the key created just before the redirect here, once: the cookie is cleared with this answer
    const sealed = readCookie(ctx, SHOWN_COOKIE);
    if (sealed !== undefined) shownCookie(ctx, '', 0);
    const held = ctx.query.done === 'created' ? shownOnce.open(s.idHash, sealed) : undefined;
    const created = held ? ShownKeySchema.safeParse(JSON.parse(held)).data : undefined;
    send(ctx, status, page({ title: 'API keys', csrf: s.csrfToken, section: 'keys' }, keysBody({ keys, csrf: s.csrfToken, ...(created ? { created } : {}), ...extra })));
  };

  router.get('/api-keys', session, async (ctx) => {
    await keysPage(ctx, 200, ctx.query.done === 'revoked' ? { notice: 'The key was revoked.' } : {});
  });
  router.post('/api-keys', session, audited(apiAction('POST', '/api/v1/api-keys'), 'api_key', { noteTarget: 'keyId' }), parseForm, csrf, async (ctx) => {
    const { name: given, role: givenRole } = formOf(ctx);
    const name = typeof given === 'string' && given.trim() ? given.trim() : undefined;
    // an empty role: the key's full reach (triggers, polling, tools), as the API without `role`
    const role = typeof givenRole === 'string' && givenRole !== '' ? givenRole : undefined;
    const parsed = CreateApiKeySchema.safeParse({ ...(name === undefined ? {} : { name }), ...(role === undefined ? {} : { role }) });
    if (!parsed.success) return keysPage(ctx, 400, { error: 'A name is at most 200 characters, and the role one of the listed ones.' });
    const { session: s } = consoleState(ctx);
    const created = await deps.management.keys.createApiKey(s.orgId, parsed.data.name ?? null, parsed.data.role ?? null, s.member?.id ?? null);
    noteForAudit(ctx, { keyId: created.id, ...(created.name ? { name: created.name } : {}), ...(created.role ? { role: created.role } : {}) });
    shownCookie(ctx, shownOnce.seal(s.idHash, JSON.stringify(created)), SHOWN_ONCE_SECONDS);
    ctx.status = 303;
    ctx.redirect('/console/api-keys?done=created');
  });
  router.post('/api-keys/:id/revoke', session, audited(apiAction('DELETE', '/api/v1/api-keys/:id'), 'api_key', { param: 'id' }), parseForm, csrf, async (ctx) => {
    const revoked = await deps.management.keys.revokeApiKey(consoleState(ctx).session.orgId, String(ctx.params.id ?? ''));
    if (!revoked.ok) return keysPage(ctx, refusalStatus(revoked), { error: 'This organization has no live API key with that ID.' });
    ctx.status = 303;
    ctx.redirect('/console/api-keys?done=revoked');
  });
}

const SHOWN_COOKIE = 'fg_shown';
/** The key held for the page after its creation (sealed by this gateway, so well formed; parsed all the same). */
const ShownKeySchema = z.object({ id: z.string(), name: z.string().nullable(), key: z.string() });

function shownCookie(ctx: Context, value: string, maxAgeSeconds: number): void {
  const secure = ctx.protocol === 'https' ? '; Secure' : '';
  ctx.append('Set-Cookie', `${SHOWN_COOKIE}=${value}; Path=/console/api-keys; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`);
}

function readCookie(ctx: Context, name: string): string | undefined {
  for (const part of ctx.get('Cookie').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}
