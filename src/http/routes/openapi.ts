/** `GET /api/v1/openapi.json`: the OpenAPI 3.1 document of this gateway, without credentials. */
import Router from '@koa/router';
import type { GatewayDeps } from '../deps';
import type { GatewayRouter, GatewayState } from '../state';
import { OPENAPI_PATH, openApiDocument } from '../openapi';
import { version } from '../../../package.json';

export function openApiRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>();
  // built on first use: a gateway that is never asked spends nothing on it
  let text: string | undefined;
  router.get(OPENAPI_PATH, (ctx) => {
    text ??= JSON.stringify(openApiDocument({ toolsBasePath: deps.config.toolsBasePath, version, serverUrl: deps.config.publicUrl }));
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.type = 'application/json';
    ctx.body = text;
  });
  return router;
}
