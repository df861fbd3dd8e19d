import Router from '@koa/router';
import type { GatewayDeps } from '../deps';

const CHECK_TIMEOUT_MS = 2000;

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

export function healthRoutes(deps: GatewayDeps): Router {
  const router = new Router();
  router.get('/healthz', async (ctx) => {
    const [temporal, registry] = await Promise.all([
      check(() => deps.temporal.workflowService.getSystemInfo({})),
      check(() => deps.registry.ping()),
    ]);
    const ok = temporal === 'ok' && registry === 'ok';
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ok' : 'down', temporal, registry };
  });
  return router;
}
