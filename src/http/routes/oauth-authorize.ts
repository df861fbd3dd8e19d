/**
 * The authorization server's browser pages (docs/tool-gateway.md "Signing in by URL"):
 *  - `GET /oauth/authorize`: the authorization request (code flow, PKCE S256 only, `resource`
 *    naming the tool gateway or one of its servers) is checked, then the sign-in page is shown;
 *    until the client and its redirect URI are known good, errors are a page, never a redirect;
 *  - `POST /oauth/authorize`: the sign-in form (src/http/oauth-sign-in.ts), then the consent page;
 *  - `GET /oauth/oidc/start`, `GET /oauth/oidc/callback`: a member's sign-in through the
 *    organization's identity provider (src/http/routes/oauth-oidc.ts), then the consent page;
 *  - `POST /oauth/consent`: allow (a code, redirected to the client with `state` and `iss`) or deny.
 * Forms are protected as the console's are: the Origin (or Sec-Fetch-Site) must be this gateway's,
 * and a per-browser CSRF cookie (`fg_oauth`, HttpOnly, SameSite=Lax, Path=/oauth) must match
 * the form's field; the request travels sealed and bound to that cookie (src/oauth/tickets.ts).
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { randomToken, safeEqual } from '../../crypto/secrets';
import { redirectAllowed } from '../../oauth/clients';
import { OAuthError } from '../../oauth/errors';
import { OAUTH_SCOPES, parseScope } from '../../oauth/scopes';
import type { AuthorizationRequest, SignedInSubject } from '../../oauth/tickets';
import { OAUTH_AUTHORIZED, OAUTH_DENIED } from '../../audit/actions';
import { parseConsoleForm, sameOrigin } from '../console/guard';
import { sourceOf } from '../middleware/audit';
import { html, type Html } from '../console/html';
import type { GatewayDeps, OAuthDeps } from '../deps';
import { sendStandalonePage } from '../standalone-page';
import type { GatewayRouter, GatewayState } from '../state';
import { ORG_ID, type OAuthOidcPages } from '../oauth-sign-in';
import { formOf } from '../validate';

export const OAUTH_BROWSER_COOKIE = 'fg_oauth';
const REQUEST_TICKET_SECONDS = 15 * 60;
const CONSENT_TICKET_SECONDS = 5 * 60;
const BROWSER_ID = /^[A-Za-z0-9_-]{32,64}$/;
const STYLE = `body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#222}
label{display:block;font-weight:600;margin:.8rem 0 .3rem}input[type=password]{width:100%;padding:.4rem;font-size:1rem;box-sizing:border-box}
.hint{color:#555;font-size:.9rem}.error{color:#a00}.actions{margin-top:1rem;display:flex;gap:.6rem}
button{padding:.5rem 1rem;font-size:1rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.3rem .8rem}dt{font-weight:600}dd{margin:0;word-break:break-all}`;

function browserIdOf(ctx: Context): string | undefined {
  for (const part of ctx.get('Cookie').split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === OAUTH_BROWSER_COOKIE) {
      const value = rest.join('=');
      return BROWSER_ID.test(value) ? value : undefined;
    }
  }
  return undefined;
}

/** The browser's CSRF value: the cookie's, or a new one set now. */
function ensureBrowserId(ctx: Context): string {
  const existing = browserIdOf(ctx);
  if (existing) return existing;
  const id = randomToken('', 32);
  const secure = ctx.protocol === 'https' ? '; Secure' : '';
  ctx.set('Set-Cookie', `${OAUTH_BROWSER_COOKIE}=${id}; Path=/oauth; HttpOnly; SameSite=Lax; Max-Age=${REQUEST_TICKET_SECONDS}${secure}`);
  return id;
}

function query(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Where a form on this page may send the browser: here, and (after the consent's redirect) the client's redirect URI. */
function formTargets(redirectUri?: string): string {
  if (!redirectUri) return "'self'";
  const url = new URL(redirectUri);
  return url.protocol === 'http:' || url.protocol === 'https:' ? `'self' ${url.origin}` : `'self' ${url.protocol}`;
}

function sendPage(ctx: Context, status: number, title: string, body: Html, redirectUri?: string): void {
  sendStandalonePage(ctx, status, { title, heading: title, style: STYLE, body: body.text });
  ctx.set('Content-Security-Policy', `default-src 'none'; style-src 'unsafe-inline'; form-action ${formTargets(redirectUri)}; frame-ancestors 'none'`);
}

function errorPage(ctx: Context, status: number, message: string): void {
  sendPage(ctx, status, 'Sign-in refused', html`<p class="error" role="alert">${message}</p>`);
}

/** Back to the client with the result (RFC 6749 4.1.2, RFC 9207's `iss`). */
function redirectToClient(ctx: Context, request: AuthorizationRequest, issuer: string, params: Record<string, string>): void {
  const target = new URL(request.redirectUri);
  for (const [name, value] of Object.entries(params)) target.searchParams.set(name, value);
  if (request.state !== undefined) target.searchParams.set('state', request.state);
  target.searchParams.set('iss', issuer);
  ctx.status = 303;
  ctx.redirect(target.href);
}

export interface OAuthAuthorizeRoutes {
  router: GatewayRouter;
  /** The consent step for a sealed request and whoever a sign-in method signed in (the seam of src/http/oauth-sign-in.ts). */
  continueToConsent(ctx: Context, requestTicket: string, subject: SignedInSubject): Promise<void>;
  /** what the members' OpenID Connect sign-in (routes/oauth-oidc.ts, added to the same router by app.ts) is lent of these pages */
  pages: OAuthOidcPages;
}

export function oauthAuthorizeRoutes(deps: GatewayDeps, oauth: OAuthDeps): OAuthAuthorizeRoutes {
  const router = new Router<GatewayState>();
  const { resources, server, tickets, signIn } = oauth;

  /** Members' sign-in: a link to the organization's provider when the organization is known, else a field asking for it. */
  const memberSignIn = async (browser: string, requestTicket: string, request: AuthorizationRequest): Promise<Html | string> => {
    if (!deps.identityProviders) return '';
    const provider = request.org ? await deps.registry.members.identityProvider(request.org) : undefined;
    if (request.org && provider) {
      const start = `/oauth/oidc/start?${new URLSearchParams({ request: requestTicket, org: request.org }).toString()}`;
      return html`<p><a id="oidc-sign-in" href="${start}">Sign in with ${provider.name}</a></p><p class="hint">Or, as the organization's administrator:</p>`;
    }
    return html`<form method="post" action="/oauth/authorize">
<input type="hidden" name="csrf" value="${browser}"><input type="hidden" name="request" value="${requestTicket}">
<label for="org">Organization ID</label><input id="org" name="org" type="text" spellcheck="false" value="${request.org ?? ''}">
<p class="hint">Members sign in through their organization's identity provider.</p>
<div class="actions"><button type="submit" name="step" value="org">Continue</button></div></form><p class="hint">Or, as the organization's administrator:</p>`;
  };

  const signInPage = async (ctx: Context, status: number, browser: string, requestTicket: string, request: AuthorizationRequest, error?: string): Promise<void> => {
    sendPage(ctx, status, 'Sign in', html`<p><strong>${request.clientName ?? request.clientId}</strong> asks to use the flowgate tools at <code>${request.resource}</code>.</p>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
${await memberSignIn(browser, requestTicket, request)}
<form method="post" action="/oauth/authorize">
<input type="hidden" name="csrf" value="${browser}"><input type="hidden" name="request" value="${requestTicket}">
${signIn.fields()}
<div class="actions"><button type="submit">Sign in</button></div></form>`);
  };

  /** The form's browser binding: same origin and the cookie's CSRF value in the form; undefined after a refusal page. */
  const checkedBrowser = (ctx: Context): { browser: string; form: Record<string, unknown> } | undefined => {
    const fields = formOf(ctx);
    const browser = browserIdOf(ctx);
    if (!sameOrigin(ctx, deps.config.publicUrl) || !browser || typeof fields.csrf !== 'string' || !safeEqual(fields.csrf, browser)) {
      errorPage(ctx, 403, 'This request did not come from this sign-in page (cross-site request, or missing or stale CSRF token). Start the sign-in again from your MCP client.');
      return undefined;
    }
    return { browser, form: fields };
  };

  async function continueToConsent(ctx: Context, requestTicket: string, subject: SignedInSubject): Promise<void> {
    const browser = browserIdOf(ctx);
    const request = browser && tickets.open<AuthorizationRequest>('request', browser, requestTicket);
    if (!browser || !request) {
      errorPage(ctx, 400, 'This sign-in has expired. Start it again from your MCP client.');
      return;
    }
    const org = await deps.registry.orgs.get(subject.orgId);
    const consent = tickets.seal('consent', browser, CONSENT_TICKET_SECONDS, { request, subject });
    sendPage(ctx, 200, 'Allow access?', html`<p><strong>${request.clientName ?? request.clientId}</strong> will be able to call the tools of organization
<strong>${org?.name ?? subject.orgId}</strong> as you, until ${subject.memberId ? 'you are removed from the organization' : 'you rotate the admin token'} or the grant is revoked.</p>
<dl><dt>Client</dt><dd>${request.clientId}</dd><dt>Tools</dt><dd>${request.resource}</dd>
<dt>Access</dt><dd>${request.scope !== undefined && !request.scope.split(' ').includes('tools:call') ? 'read only: list the tools and read tasks, call none that acts' : 'call the tools'}</dd>
<dt>Returns to</dt><dd>${request.redirectUri}</dd></dl>
<form method="post" action="/oauth/consent">
<input type="hidden" name="csrf" value="${browser}"><input type="hidden" name="consent" value="${consent}">
<div class="actions"><button type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny">Deny</button></div></form>`, request.redirectUri);
  }

  router.get('/oauth/authorize', async (ctx) => {
    const clientId = query(ctx, 'client_id');
    if (!clientId) return errorPage(ctx, 400, 'The request names no client (client_id).');
    let client;
    try {
      client = await server.clients.resolve(clientId);
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      return errorPage(ctx, 400, error.description);
    }
    const asked = query(ctx, 'redirect_uri');
    const redirectUri = asked ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
    if (!redirectUri || !redirectAllowed(client.redirectUris, redirectUri)) return errorPage(ctx, 400, 'The redirect_uri is not one the client registered.');
    const scope = parseScope(query(ctx, 'scope'));
    const request: AuthorizationRequest = {
      clientId, redirectUri, codeChallenge: query(ctx, 'code_challenge') ?? '', resource: query(ctx, 'resource') ?? resources.gateway,
      ...(client.clientName ? { clientName: client.clientName } : {}), ...(query(ctx, 'state') ? { state: query(ctx, 'state') } : {}),
      ...(scope.ok && scope.scope !== null ? { scope: scope.scope } : {}),
      ...(ORG_ID.test(query(ctx, 'org') ?? '') ? { org: query(ctx, 'org') } : {}),
    };
    const refuse = (error: string, description: string): void => redirectToClient(ctx, request, resources.issuer, { error, error_description: description });
    if (query(ctx, 'response_type') !== 'code') return refuse('unsupported_response_type', 'response_type must be code');
    if (!scope.ok) return refuse('invalid_scope', `unknown scope ${scope.unknown.join(' ')}: this server knows ${OAUTH_SCOPES.join(' and ')}`);
    if (!/^[A-Za-z0-9_-]{43}$/.test(request.codeChallenge) || query(ctx, 'code_challenge_method') !== 'S256') {
      return refuse('invalid_request', 'PKCE is required: code_challenge with code_challenge_method=S256');
    }
    if (!resources.isResource(request.resource)) return refuse('invalid_target', `resource must be ${resources.gateway} or one of its servers`);
    const browser = ensureBrowserId(ctx);
    await signInPage(ctx, 200, browser, tickets.seal('request', browser, REQUEST_TICKET_SECONDS, request), request);
  });

  router.post('/oauth/authorize', parseConsoleForm, async (ctx) => {
    const checked = checkedBrowser(ctx);
    if (!checked) return;
    const request = tickets.open<AuthorizationRequest>('request', checked.browser, checked.form.request);
    if (!request || typeof checked.form.request !== 'string') return errorPage(ctx, 400, 'This sign-in has expired. Start it again from your MCP client.');
    if (checked.form.step === 'org') {
      // the first step of a member's sign-in: the organization, so its identity provider can be offered
      const org = typeof checked.form.org === 'string' ? checked.form.org.trim() : '';
      if (!ORG_ID.test(org)) return signInPage(ctx, 400, checked.browser, checked.form.request, request, 'That is not an organization ID.');
      const withOrg = { ...request, org };
      const provider = await deps.registry.members.identityProvider(org);
      return signInPage(ctx, provider ? 200 : 404, checked.browser, tickets.seal('request', checked.browser, REQUEST_TICKET_SECONDS, withOrg), withOrg,
        provider ? undefined : 'That organization has no identity provider set up.');
    }
    const subject = await signIn.authenticate(checked.form);
    if (!subject) return signInPage(ctx, 401, checked.browser, checked.form.request, request, 'That is not an admin token of this flowgate.');
    await continueToConsent(ctx, checked.form.request, subject);
  });

  router.post('/oauth/consent', parseConsoleForm, async (ctx) => {
    const checked = checkedBrowser(ctx);
    if (!checked) return;
    const consent = tickets.open<{ request: AuthorizationRequest; subject: SignedInSubject }>('consent', checked.browser, checked.form.consent);
    if (!consent) return errorPage(ctx, 400, 'This consent has expired. Start the sign-in again from your MCP client.');
    const { request, subject } = consent;
    const allowed = checked.form.decision === 'allow';
    // the organization's limit of registered clients (src/oauth/clients.ts): an allowed consent it refuses is recorded as refused
    const refusal = allowed ? await server.clients.checkOrgRoom(subject.orgId, request.clientId, 'access_denied').then(() => undefined, (error: unknown) => {
      if (error instanceof OAuthError) return error;
      throw error;
    }) : undefined;
    // who consented: the admin token's holder, or a member (`member:<id>`)
    const byAdminToken = subject.subject.startsWith('admin-token:');
    await deps.audit.record({
      orgId: subject.orgId, action: allowed ? OAUTH_AUTHORIZED : OAUTH_DENIED, target: { type: 'oauth_client', id: request.clientId }, status: 303,
      outcome: allowed && !refusal ? 'success' : 'refused',
      details: { resource: request.resource, redirectUri: request.redirectUri, ...(request.clientName ? { clientName: request.clientName } : {}), ...(refusal ? { error: refusal.code } : {}) },
    }, {
      actor: byAdminToken ? 'admin' : subject.subject, actorName: null, credentialKind: byAdminToken ? 'admin_token' : 'oauth_token',
      credentialId: byAdminToken ? subject.subject.slice('admin-token:'.length) : subject.subject,
    }, sourceOf(ctx));
    if (!allowed) {
      redirectToClient(ctx, request, resources.issuer, { error: 'access_denied', error_description: 'the user denied access' });
      return;
    }
    if (refusal) {
      redirectToClient(ctx, request, resources.issuer, { error: refusal.code, error_description: refusal.description });
      return;
    }
    let code: string;
    try {
      code = await server.issueCode({
        orgId: subject.orgId, clientId: request.clientId, resource: request.resource, scope: request.scope ?? null, subject: subject.subject, adminTokenHash: subject.adminTokenHash,
        memberId: subject.memberId ?? null,
      }, request.redirectUri, request.codeChallenge);
    } catch (error) {
      // the limit again (a consent that raced another to the last place): back to the client, said
      if (!(error instanceof OAuthError)) throw error;
      redirectToClient(ctx, request, resources.issuer, { error: error.code, error_description: error.description });
      return;
    }
    deps.log.info('oauth code issued', { requestId: ctx.state.requestId, orgId: subject.orgId, clientId: request.clientId, resource: request.resource });
    redirectToClient(ctx, request, resources.issuer, { code });
  });

  return { router, continueToConsent, pages: { browserIdOf, errorPage, continueToConsent } };
}
