/**
 * Members' sign-in on the authorization page through the organization's OpenID Connect provider
 * (docs/tool-gateway.md "Signing in by URL"; the seam of src/http/oauth-sign-in.ts):
 *  - `GET /oauth/oidc/start?request=<sealed request>&org=<id>` (the page's "Sign in with …" link):
 *    the sealed authorization request must open with this browser's `fg_oauth` cookie (so no
 *    other site can start one for it); the browser goes to the provider with PKCE, state and nonce
 *    (src/people/identity-providers.ts, the console's code), the request carried in the sealed
 *    pending sign-in (cookie `fg_oauth_oidc`, Path=/oauth/oidc);
 *  - `GET /oauth/oidc/callback`: the provider's answer checked, the member created or updated
 *    with the role the organization's rules give, then the consent step for `member:<id>`.
 */
import type { Context } from 'koa';
import { OAUTH_CALLBACK_PATH, PENDING_SIGN_IN_MS } from '../../people/identity-providers';
import type { AuthorizationRequest } from '../../oauth/tickets';
import type { GatewayDeps, OAuthDeps } from '../deps';
import type { GatewayRouter } from '../state';
import { ORG_ID, type OAuthOidcPages } from '../oauth-sign-in';

const PENDING_COOKIE = 'fg_oauth_oidc';

function cookieOf(ctx: Context, cookie: string): string | undefined {
  for (const part of ctx.get('Cookie').split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === cookie) return rest.join('=');
  }
  return undefined;
}

function pendingCookie(ctx: Context, value: string, maxAgeSeconds: number): void {
  const secure = ctx.protocol === 'https' ? '; Secure' : '';
  // Lax: the provider's redirect back is a top-level cross-site GET, which must carry it
  ctx.append('Set-Cookie', `${PENDING_COOKIE}=${value}; Path=/oauth/oidc; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`);
}

/** The member's subject on a grant and in the audit trail. */
export const memberSubject = (memberId: string): string => `member:${memberId}`;

export function addOAuthOidcRoutes(router: GatewayRouter, deps: GatewayDeps, oauth: OAuthDeps, pages: OAuthOidcPages): void {
  const providers = deps.identityProviders;
  if (!providers) return;

  router.get('/oauth/oidc/start', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const browser = pages.browserIdOf(ctx);
    const requestTicket = typeof ctx.query.request === 'string' ? ctx.query.request : undefined;
    const org = typeof ctx.query.org === 'string' && ORG_ID.test(ctx.query.org) ? ctx.query.org : undefined;
    const request = browser && requestTicket ? oauth.tickets.open<AuthorizationRequest>('request', browser, requestTicket) : undefined;
    if (!request || !requestTicket) return pages.errorPage(ctx, 400, 'This sign-in has expired or was started in another browser. Start it again from your MCP client.');
    if (!org) return pages.errorPage(ctx, 400, 'The sign-in names no organization.');
    let started: Awaited<ReturnType<typeof providers.start>>;
    try {
      started = await providers.start(org, { callback: OAUTH_CALLBACK_PATH, carry: requestTicket });
    } catch (error) {
      deps.log.warn('an identity provider could not be reached for an OAuth sign-in', { orgId: org, error });
      return pages.errorPage(ctx, 502, 'The organization\'s identity provider is unreachable. Try again shortly.');
    }
    if (!started) return pages.errorPage(ctx, 404, 'This organization has no identity provider set up.');
    pendingCookie(ctx, started.pending, PENDING_SIGN_IN_MS / 1000);
    ctx.redirect(started.url);
  });

  router.get(OAUTH_CALLBACK_PATH, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const outcome = await providers.finish(new URL(`${providers.callbackUrl(OAUTH_CALLBACK_PATH)}?${ctx.querystring}`), cookieOf(ctx, PENDING_COOKIE));
    pendingCookie(ctx, '', 0);
    if (!outcome.ok) return pages.errorPage(ctx, 403, `Sign-in refused: ${outcome.reason}.`);
    if (!outcome.carry) return pages.errorPage(ctx, 400, 'This sign-in has expired. Start it again from your MCP client.');
    const { member } = outcome;
    deps.log.info('oauth member signed in', { requestId: ctx.state.requestId, orgId: member.orgId, memberId: member.id, role: member.role });
    await pages.continueToConsent(ctx, outcome.carry, { orgId: member.orgId, subject: memberSubject(member.id), adminTokenHash: null, memberId: member.id });
  });
}
