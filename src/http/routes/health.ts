import Router from '@koa/router';
import type { GatewayDeps } from '../deps';
import type { GatewayRouter, GatewayState } from '../state';
import { HealthSchema } from '../../contracts/http-bodies';
import { mount, type Operations } from '../operation';
import { json } from '../openapi-kit';

export const HEALTH_OPERATIONS = {
  health: {
    method: 'get', path: '/healthz',
    tags: ['operations'], summary: 'Liveness of Temporal and the registry',
    responses: { '200': json(HealthSchema, 'all up'), '503': json(HealthSchema, 'something is down') },
  },
} satisfies Operations;

const CHECK_TIMEOUT_MS = 2000;
/** As on every 503 temporal_unavailable (http-error.ts): when to ask again. */
const RETRY_AFTER_SECONDS = '5';

async function check(fn: () => Promise<unknown>): Promise<'ok' | 'down'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([fn(), new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS); })]);
    return 'ok';
  } catch {
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>();
  mount(router, HEALTH_OPERATIONS.health, async (ctx) => {
    const [temporal, registry] = await Promise.all([
      // the deadline ends the call itself (and its retries), not only this check's wait for it
      check(() => deps.temporal.connection.withDeadline(Date.now() + CHECK_TIMEOUT_MS, () => deps.temporal.workflowService.getSystemInfo({}))),
      check(() => deps.registry.ping()),
    ]);
    // the in-process worker, when there is one: named (down) once it stopped polling on its own (its data keys)
    const worker = deps.workerHealth?.();
    const ok = temporal === 'ok' && registry === 'ok' && worker !== 'down';
    ctx.status = ok ? 200 : 503;
    if (!ok) ctx.set('Retry-After', RETRY_AFTER_SECONDS);
    ctx.body = { status: ok ? 'ok' : 'down', temporal, registry, ...(worker === 'down' ? { worker } : {}) };
  });
  return router;
}
