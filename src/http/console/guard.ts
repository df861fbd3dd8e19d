/**
 * The console's session and CSRF checks (docs/console.md "Security"):
 *  - the session cookie (`fg_console`, HttpOnly, SameSite=Strict, Path=/console) names a live
 *    server-side session; without one a page redirects to the sign-in page and anything else is a 401;
 *  - every state-changing request is refused (403) unless its Origin is this gateway's (a missing
 *    Origin, or `null`, is allowed only when Sec-Fetch-Site does not say otherwise) and its form carries the
 *    session's synchronizer CSRF token.
 */
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { ConsoleSessions, type ConsoleSession } from '../../console/sessions';
import { href, html } from './html';
import { page, send } from './layout';
import { fieldOf } from '../../common/narrow';
import { isPermission, PERMISSIONS, type Role } from '../../people/roles';

export const SESSION_COOKIE = 'fg_console';

/** The console's urlencoded forms: small, never files. */
export const parseConsoleForm = koaBody({ json: false, urlencoded: true, multipart: false, text: false, formLimit: '32kb' });

export function sessionCookie(ctx: Context, value: string, maxAgeSeconds: number): void {
  const secure = ctx.protocol === 'https' ? '; Secure' : '';
  ctx.set('Set-Cookie', `${SESSION_COOKIE}=${value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`);
}

export function cookieValue(ctx: Context): string | undefined {
  const header = ctx.get('Cookie');
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === SESSION_COOKIE) return rest.join('=');
  }
  return undefined;
}

/**
 * A refusal as a page. Signed in (the session is known), it keeps the console's navigation and
 * links back to the console page the request came from (its same-origin Referer), else to the
 * runs; signed out, to the sign-in page. `explain` adds a paragraph (what the role lacks).
 */
export function refusePage(ctx: Context, status: number, title: string, message: string, explain?: string): void {
  const { console: state }: { console?: ConsoleState } = ctx.state;
  if (!state || status === 401) {
    send(ctx, status, page({ title }, html`<h1>${title}</h1><p>${message}</p><p><a href="/console/sign-in">Sign in</a></p>`));
    return;
  }
  const back = backLink(ctx);
  send(ctx, status, page({ title, csrf: state.session.csrfToken }, html`<h1>${title}</h1><p class="error" role="alert">${message}</p>
${explain ? html`<p id="refusal-why">${explain}</p>` : ''}
<p><a id="refusal-back" href="${href(back)}">Back to ${back === '/console/runs' ? 'the runs' : 'the page you came from'}</a></p>`));
}

/** The console page a refused request came from (its Referer, same origin, under /console), else the runs page. */
function backLink(ctx: Context): string {
  const referer = ctx.get('Referer');
  if (referer) {
    try {
      const url = new URL(referer);
      if (url.host === ctx.host && url.pathname.startsWith('/console/') && !url.pathname.startsWith('/console/sign-')) return `${url.pathname}${url.search}`;
    } catch { /* not a URL: the runs page */ }
  }
  return '/console/runs';
}

/** Whether the request comes from this gateway's own pages (Origin, or Sec-Fetch-Site when a browser sent no Origin). */
export function sameOrigin(ctx: Context, publicUrl: string | undefined): boolean {
  const origin = ctx.get('Origin');
  const site = ctx.get('Sec-Fetch-Site');
  // a page under a no-referrer policy (a hosted form's, say) sends `Origin: null`: then only the browser's own word counts
  if (origin === 'null') return site === 'same-origin';
  if (origin) {
    // (Koa's ctx.origin is not this: it can echo the request's own Origin header)
    const own = new Set([`${ctx.protocol}://${ctx.host}`]);
    if (publicUrl) {
      try {
        own.add(new URL(publicUrl).origin);
      } catch { /* an unusable public URL adds nothing */ }
    }
    return own.has(origin);
  }
  return site === '' || site === 'same-origin' || site === 'none';
}

export interface ConsoleState {
  session: ConsoleSession;
  sessionId: string;
}

/** The live session, or the refusal (a redirect for a page, 401 otherwise). */
export function requireSession(sessions: ConsoleSessions) {
  return async function consoleSession(ctx: Context, next: Next): Promise<void> {
    const id = cookieValue(ctx);
    const session = await sessions.find(id);
    if (!session || !id) {
      if (id) sessionCookie(ctx, '', 0);
      if (ctx.method === 'GET' && ctx.accepts('html') === 'html' && !ctx.path.endsWith('/events') && !ctx.path.endsWith('/live')) {
        ctx.status = 303;
        ctx.redirect('/console/sign-in');
        return;
      }
      refusePage(ctx, 401, 'Sign in first', 'Your console session has ended or was never valid.');
      return;
    }
    const state: { console?: ConsoleState } = ctx.state;
    state.console = { session, sessionId: id };
    await next();
  };
}

export function consoleState(ctx: Context): ConsoleState {
  const { console: state }: { console?: ConsoleState } = ctx.state;
  if (!state) throw new Error('this console route is mounted without requireSession');
  return state;
}

/** After requireSession and the form parser: a cross-site request or a form without the session's CSRF token is refused (403). */
export function requireCsrf(publicUrl: string | undefined) {
  return async function csrf(ctx: Context, next: Next): Promise<void> {
    const { session } = consoleState(ctx);
    const sent = fieldOf(fieldOf(ctx.request, 'body'), 'csrf');
    if (!sameOrigin(ctx, publicUrl) || !ConsoleSessions.csrfMatches(session, sent)) {
      refusePage(ctx, 403, 'Request refused', 'This request did not come from a console page of this session (cross-site request or missing CSRF token).');
      return;
    }
    await next();
  };
}

/** Why a role was refused, for a person: which roles hold the permission, and whom to ask (docs/people-and-roles.md). */
export function refusalExplained(role: Role, message: string): string {
  const permission = /permission ([a-z_.]+)$/.exec(message)?.[1];
  const holders = permission && isPermission(permission) ? PERMISSIONS[permission] : undefined;
  return `You are signed in with the ${role} role. ${holders ? `This action needs the permission ${permission}, which the ${holders.join(', ')} role${holders.length > 1 ? 's hold' : ' holds'}.` : ''} `
    + 'An administrator of your organization can change your role on the People page; nothing was changed.';
}
