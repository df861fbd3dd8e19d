/**
 * `GET /metrics`: this process's Prometheus metrics, for the instance administrator's bearer
 * token (Prometheus `authorization: {credentials: …}`). FLOWGATE_METRICS_PORT serves the same
 * text without credentials on a listener of its own.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { forbidden, HttpError } from '../http-error';
import { adminOf, type GatewayRouter, type GatewayState } from '../state';
import { mount, type Operations } from '../operation';
import { admin as security, errors } from '../openapi-kit';

export const METRICS_OPERATIONS = {
  metrics: {
    method: 'get', path: '/metrics', permission: 'read',
    tags: ['operations'], summary: 'Prometheus metrics (instance administrator token)', security,
    responses: { '200': { description: 'the Prometheus text format', content: { 'text/plain': { schema: z.string() } } }, ...errors(401, 403) },
  },
} satisfies Operations;

export function metricsRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>();
  mount(router, METRICS_OPERATIONS.metrics, requireAdmin(deps), async (ctx) => {
    if (!adminOf(ctx).instanceAdmin) throw forbidden('only the instance administrator may read the metrics');
    if (!deps.metrics) throw new HttpError(404, 'not_found', 'this gateway keeps no metrics');
    ctx.set('Cache-Control', 'no-store');
    ctx.type = deps.metrics.contentType();
    ctx.body = await deps.metrics.text();
  });
  return router;
}
