/**
 * Runtime tokens for the tool gateway (ARCHITECTURE.md, "Decisions"): `POST /auth/token` with
 * `X-API-KEY` answers `{token, expiresAt}`, valid 60 minutes for the key's organization.
 */
import Router from '@koa/router';
import { authenticateApiKey } from '../auth';
import type { GatewayDeps } from '../deps';
import type { GatewayRouter, GatewayState } from '../state';

export function authTokenRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>();
  router.post('/auth/token', async (ctx) => {
    const principal = await authenticateApiKey(deps.registry, ctx.get('X-API-KEY') || undefined);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = deps.runtimeTokens.issue(principal);
  });
  return router;
}
