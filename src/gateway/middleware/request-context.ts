import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from '../../logger';

const INBOUND_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Gives each request an id (kept from `X-Request-Id` when sane), echoes it, and logs one access line. */
export function requestContext(options: { log: Logger }) {
  return async function withRequestContext(ctx: Context, next: Next): Promise<void> {
    const inbound = ctx.get('X-Request-Id');
    const requestId = INBOUND_ID.test(inbound) ? inbound : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = Date.now();
    try {
      await next();
    } finally {
      // The path only: webhook and file URLs carry credentials in the path or query.
      options.log.info('request', {
        requestId, method: ctx.method, route: String((ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched'),
        status: ctx.status, ms: Date.now() - started,
      });
    }
  };
}
