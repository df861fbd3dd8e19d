/**
 * The gateway's standalone HTML pages outside the console (an approver's link, the codec sign-in):
 * no script, inline style only, never framed, never cached, no referrer (their URLs may be secrets).
 */
import type { Context } from 'koa';

export { escapeHtml } from './console/html';

export interface StandalonePage {
  /** the document's title (text, escaped by the caller) */
  title: string;
  /** the page's h1 (text, escaped by the caller) */
  heading: string;
  /** the page's own CSS, inline */
  style: string;
  /** HTML, escaped by the caller */
  body: string;
}

export function sendStandalonePage(ctx: Pick<Context, 'status' | 'type' | 'set' | 'body'>, status: number, page: StandalonePage): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
  ctx.body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title}</title>
<style>${page.style}</style></head>
<body><h1>${page.heading}</h1>${page.body}</body></html>`;
}
