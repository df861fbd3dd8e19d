import type { Context, Next } from 'koa';
import type { Logger } from '../../observability/logger';
import type { FlowgateMetrics } from '../../observability/metrics';
import { HttpError } from '../http-error';
import { answerError } from './error-handler';
import { routeTemplate } from './observe';
import { assignRequestId, logRequest } from './request-context';

/**
 * Routers leave an unmatched path as 404 and a known path with a wrong method as 405 (with
 * `Allow`); this gives both the `{error, message}` body every other error has.
 */
function refuseUnanswered(ctx: Context): void {
  if (ctx.body !== undefined && ctx.body !== null) return;
  if (ctx.status === 405 || ctx.status === 501) {
    throw new HttpError(ctx.status, 'method_not_allowed', `${ctx.method} is not allowed here; allowed: ${ctx.response.get('Allow') || 'none'}`,
      { headers: { Allow: ctx.response.get('Allow') } });
  }
  if (ctx.status === 404) {
    // Webhook paths carry a credential: never echo them.
    throw new HttpError(404, 'not_found', `no such endpoint: ${ctx.method} ${ctx.path.startsWith('/ext/webhook/') ? '/ext/webhook/…' : ctx.path}`);
  }
}

/**
 * The gateway's edge, one middleware where it was four (every async layer costs each request its
 * promises, and each of those costs Node 20's async hooks once a Temporal client call has turned
 * them on): the request id (kept from `X-Request-Id` when sane, echoed), the `{error, message}`
 * body of every error and of an unmatched path or method, the access log line, and the request
 * counted by route, method and status with its latency (unless `metrics` is left out: the traced
 * variant in observe.ts counts then).
 */
export function edge(options: { log: Logger; metrics?: Pick<FlowgateMetrics, 'httpRequest'> }) {
  const { log, metrics } = options;
  return async function atTheEdge(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    const requestId = assignRequestId(ctx);
    try {
      await next();
      refuseUnanswered(ctx);
    } catch (raw) {
      answerError(ctx, raw, log);
    } finally {
      const elapsedMs = performance.now() - started;
      const route = routeTemplate(ctx);
      logRequest(log, ctx, requestId, route, elapsedMs);
      metrics?.httpRequest(route, ctx.method, ctx.status, elapsedMs / 1000);
    }
  };
}
