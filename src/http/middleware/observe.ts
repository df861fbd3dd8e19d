import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Context, Next } from 'koa';
import type { FlowgateMetrics } from '../../observability/metrics';
import { tracer } from '../../observability/tracing';

/**
 * The route a request matched, as its template (`/ext/triggers/:triggerId`): never the raw path,
 * which carries API keys (webhooks) and would make one label value per run.
 */
export function routeTemplate(ctx: Context): string {
  // @koa/router's mark on the context (Koa's Context types it `any`)
  const matched: unknown = ctx._matchedRoute;
  if (typeof matched === 'string') return matched;
  if (!(matched instanceof RegExp)) return 'unmatched';
  return matched.source.startsWith('^\\/files\\/') ? '/files/*' : String(matched);
}

/**
 * Outermost middleware while tracing is on: opens the request's server span (continuing a caller's
 * `traceparent`), so the trigger's run, its activities and their outbound calls join the caller's
 * trace, and counts the answer as the edge does without tracing (middleware/edge.ts).
 */
export function tracedRequests(options: { metrics?: Pick<FlowgateMetrics, 'httpRequest'> }) {
  return async function observeRequest(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    const parent = propagation.extract(context.active(), ctx.headers);
    const span = tracer().startSpan(ctx.method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method } }, parent);
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = routeTemplate(ctx);
      // A failure that escaped every handler reaches Koa's own handler, which answers 500.
      const status = ctx.status;
      options.metrics?.httpRequest(route, ctx.method, status, (performance.now() - started) / 1000);
      span.updateName(`${ctx.method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': status });
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}
