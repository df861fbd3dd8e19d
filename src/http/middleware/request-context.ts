import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { GatewayContext } from '../state';
import type { Logger } from '../../observability/logger';

const INBOUND_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Gives the request its id (kept from `X-Request-Id` when sane) in `ctx.state.requestId`, and echoes it. */
export function assignRequestId(ctx: GatewayContext): string {
  const inbound = ctx.get('X-Request-Id');
  const requestId = INBOUND_ID.test(inbound) ? inbound : randomUUID();
  ctx.state.requestId = requestId;
  ctx.set('X-Request-Id', requestId);
  return requestId;
}

/** The request's access line: the route template only (routeTemplate), since webhook and file URLs carry credentials in the path or query. */
export function logRequest(log: Logger, ctx: Context, requestId: string, route: string, elapsedMs: number): void {
  log.info('request', { requestId, method: ctx.method, route, status: ctx.status, ms: Math.round(elapsedMs) });
}
