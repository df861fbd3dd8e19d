/**
 * The console's sign-in through the organization's OpenID Connect provider (docs/people-and-roles.md):
 * `/console/oidc/start?org=<id>` sends the browser to the provider (authorization code with PKCE;
 * the pending sign-in in a sealed, short-lived cookie), `/console/oidc/callback` finishes it
 * (src/people/identity-providers.ts), creates or updates the member and opens a console session
 * with the member's role. A UI, not API: mounted beside the console's router, not documented.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { CONSOLE_SIGNED_IN, CONSOLE_SIGN_IN_REFUSED } from '../../audit/actions';
import { PENDING_SIGN_IN_MS } from '../../people/identity-providers';
import { consoleActor, sessionFingerprint } from '../console/audit';
import { refusePage, sessionCookie } from '../console/guard';
import { html } from '../console/html';
import { page, send } from '../console/layout';
import type { GatewayDeps } from '../deps';
import { sourceOf } from '../middleware/audit';

const PENDING_COOKIE = 'fg_oidc';
const ORG_ID = /^[A-Za-z0-9_.-]{1,100}$/;

function pendingCookie(ctx: Context, value: string, maxAgeSeconds: number): void {
  const secure = ctx.protocol === 'https' ? '; Secure' : '';
  // Lax: the provider's redirect back is a top-level cross-site GET, which must carry it
  ctx.append('Set-Cookie', `${PENDING_COOKIE}=${value}; Path=/console/oidc; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`);
}

function pendingOf(ctx: Context): string | undefined {
  for (const part of ctx.get('Cookie').split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === PENDING_COOKIE) return rest.join('=');
  }
  return undefined;
}

export function consoleSignInRoutes(deps: GatewayDeps): Router | undefined {
  const providers = deps.identityProviders;
  const sessions = deps.console?.sessions;
  if (!providers || !sessions) return undefined;
  const router = new Router({ prefix: '/console/oidc' });
  const lifetimeSeconds = deps.config.consoleSessionMinutes * 60;

  router.get('/start', async (ctx) => {
    const org = typeof ctx.query.org === 'string' && ORG_ID.test(ctx.query.org) ? ctx.query.org : undefined;
    let started: Awaited<ReturnType<typeof providers.start>>;
    try {
      started = org ? await providers.start(org) : undefined;
    } catch (error) {
      // the provider's discovery document could not be read (unreachable, not an OpenID provider)
      deps.log.warn('an identity provider could not be reached for a console sign-in', { orgId: org, error });
      refusePage(ctx, 502, 'The identity provider is unreachable', 'Try again shortly, or sign in with the organization\'s admin token.');
      return;
    }
    if (!started) {
      refusePage(ctx, 404, 'No identity provider', 'This organization has no identity provider set up; sign in with its admin token.');
      return;
    }
    pendingCookie(ctx, started.pending, PENDING_SIGN_IN_MS / 1000);
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(started.url);
  });

  router.get('/callback', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const outcome = await providers.finish(new URL(`${providers.redirectUri()}?${ctx.querystring}`), pendingOf(ctx));
    if (!outcome.ok) {
      pendingCookie(ctx, '', 0);
      if (outcome.orgId) {
        await deps.audit.record({
          orgId: outcome.orgId, action: CONSOLE_SIGN_IN_REFUSED, target: { type: 'console_session', id: null }, status: 403,
          details: { via: 'oidc', method: ctx.method, route: '/console/oidc/callback', reason: outcome.reason.slice(0, 200) },
        }, { actor: 'oidc', actorName: null, credentialKind: 'console_session', credentialId: 'oidc' }, sourceOf(ctx));
      }
      refusePage(ctx, 403, 'Sign-in refused', outcome.reason);
      return;
    }
    const signedIn = await sessions.signInMember(outcome.member);
    await deps.audit.record({
      orgId: signedIn.session.orgId, action: CONSOLE_SIGNED_IN, target: { type: 'console_session', id: sessionFingerprint(signedIn.session) }, status: 200,
      details: { via: 'oidc', method: ctx.method, route: '/console/oidc/callback', role: signedIn.session.role },
    }, consoleActor(signedIn.session), sourceOf(ctx));
    sessionCookie(ctx, signedIn.id, lifetimeSeconds);
    pendingCookie(ctx, '', 0);
    // a page, not a redirect: the session cookie is SameSite=Strict, which a redirect chain the
    // provider started would not send; this page's own navigation does
    send(ctx, 200, page({ title: 'Signed in' }, html`<h1>Signed in</h1><p>Signed in as ${outcome.member.email} (${outcome.member.role}).</p>
<p><a id="continue" href="/console/runs">Continue to the console</a></p>`));
    ctx.set('Refresh', '0; url=/console/runs');
  });
  return router;
}
