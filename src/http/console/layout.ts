/**
 * The console's page frame and the headers every console and hosted-form page carries: a strict
 * Content-Security-Policy (only this origin's stylesheet and script, no inline code, no framing),
 * no caching, no referrer.
 */
import type { Context } from 'koa';
import { href, html, toText, type Html } from './html';
import { fieldOf } from '../../common/narrow';
import { isPermission, isRole, roleHas, type Role } from '../../people/roles';

export const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; "
  + "frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

export function securityHeaders(ctx: Context): void {
  ctx.set('Content-Security-Policy', CSP);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  // same-origin: the console's own POSTs carry their Origin (under no-referrer a browser sends `Origin: null`)
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('Cache-Control', 'no-store');
}

export type Section = 'runs' | 'workflows' | 'agents' | 'connections' | 'servers' | 'keys' | 'people' | 'alerts' | 'audit' | 'none';

export interface Frame {
  title: string;
  /** the signed-in session's CSRF token: shows the navigation and the sign-out button */
  csrf?: string;
  section?: Section;
  /** a URL the browser goes on to at once (a meta refresh: no script), e.g. an OAuth provider's consent */
  refresh?: string;
  /** the page reloads itself every this many seconds (a meta refresh: a batch's progress while it runs) */
  reloadSeconds?: number;
}

export function page(frame: Frame, body: Html): Html {
  const nav = frame.csrf === undefined ? '' : html`<nav aria-label="Console">
<a href="/console/runs"${frame.section === 'runs' ? html` aria-current="page"` : ''}>Runs</a>
<a href="/console/workflows"${frame.section === 'workflows' ? html` aria-current="page"` : ''}>Workflows</a>
<a href="/console/agents"${frame.section === 'agents' ? html` aria-current="page"` : ''}>Agents</a>
<a href="/console/connections"${frame.section === 'connections' ? html` aria-current="page"` : ''}>Connections</a>
<a href="/console/servers"${frame.section === 'servers' ? html` aria-current="page"` : ''}>Tool servers</a>
<a href="/console/api-keys"${frame.section === 'keys' ? html` aria-current="page"` : ''}>API keys</a>
<a href="/console/people"${frame.section === 'people' ? html` aria-current="page"` : ''}>People</a>
<a href="/console/alerts" data-needs="org.manage"${frame.section === 'alerts' ? html` aria-current="page"` : ''}>Alerts</a>
<a href="/console/audit"${frame.section === 'audit' ? html` aria-current="page"` : ''}>Audit</a>
</nav>
<form method="post" action="/console/sign-out"><input type="hidden" name="csrf" value="${frame.csrf}"><button type="submit">Sign out</button></form>`;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · flowgate</title>
<link rel="icon" href="data:,">${frame.refresh ? html`<meta http-equiv="refresh" content="0;url=${href(frame.refresh)}">` : ''}${frame.reloadSeconds ? html`<meta http-equiv="refresh" content="${frame.reloadSeconds}">` : ''}
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>
</head><body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="/console">flowgate</a>${nav}</header>
<main id="main">
${body}
</main></body></html>`;
}

/** `referrer: 'no-referrer'` for pages whose URL is a secret (hosted forms): their links never carry it. */
export function send(ctx: Context, status: number, document: Html, options: { referrer?: 'no-referrer' } = {}): void {
  securityHeaders(ctx);
  if (options.referrer) ctx.set('Referrer-Policy', options.referrer);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  const role = fieldOf(fieldOf(fieldOf(ctx.state, 'console'), 'session'), 'role');
  ctx.body = isRole(role) ? withoutActionsBeyond(role, toText(document)) : toText(document);
}

/**
 * Actions a role cannot take are not offered: a view marks a form or a link with the permission its
 * action needs (`data-needs="workflows.write"`), and a signed-in session's page leaves out those its
 * role lacks (the route refuses them all the same). Only the views' own markup can carry the
 * attribute: every interpolated value is escaped, so no data opens a tag.
 */
export function withoutActionsBeyond(role: Role, text: string): string {
  const allowed = (needs: string): boolean => isPermission(needs) && roleHas(role, needs);
  return text
    .replace(/<form\b[^>]*\sdata-needs="([a-z_.]+)"[^>]*>[\s\S]*?<\/form>/g, (form, needs: string) => (allowed(needs) ? form : ''))
    .replace(/<a\b[^>]*\sdata-needs="([a-z_.]+)"[^>]*>[\s\S]*?<\/a>/g, (link, needs: string) => (allowed(needs) ? link : ''))
    .replace(/<details\b[^>]*\sdata-needs="([a-z_.]+)"[^>]*>[\s\S]*?<\/details>/g, (panel, needs: string) => (allowed(needs) ? panel : ''));
}
