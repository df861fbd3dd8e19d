/**
 * Runtime tokens for the tool gateway (ARCHITECTURE.md, "Decisions"): `POST /auth/token` with
 * `X-API-KEY` answers `{token, expiresAt}`, valid 60 minutes for the key's organization.
 */
import Router from '@koa/router';
import { authenticateApiKey } from '../auth';
import type { GatewayDeps } from '../deps';
import type { GatewayRouter, GatewayState } from '../state';
import { RuntimeTokenSchema } from '../../contracts/http-bodies';
import { mount, type Operations } from '../operation';
import { errors, json } from '../openapi-kit';

export const AUTH_TOKEN_OPERATIONS = {
  runtimeToken: {
    method: 'post', path: '/auth/token',
    tags: ['tools'], summary: 'A runtime token (60 minutes) for the tool gateway, from an API key', security: [{ apiKey: [] }],
    responses: { '200': json(RuntimeTokenSchema, 'the token'), ...errors(401, 429) },
  },
} satisfies Operations;

export function authTokenRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>();
  mount(router, AUTH_TOKEN_OPERATIONS.runtimeToken, async (ctx) => {
    const principal = await authenticateApiKey(deps.registry, ctx.get('X-API-KEY') || undefined);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = deps.runtimeTokens.issue(principal);
  });
  return router;
}
