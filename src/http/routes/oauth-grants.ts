/**
 * An organization's OAuth grants (docs/tool-gateway.md "Signing in by URL"): what MCP clients
 * were allowed, by whom, for which resource; and revoking one. A grant is never shown with a
 * token. Listing and revoking need `org.manage` (src/people/roles.ts); revoking is audited
 * (`oauth_grant.revoked`) and takes effect at once on this replica, within a second on others.
 */
import Router from '@koa/router';
import type { OAuthGrantRecord } from '../../registry';
import type { OAuthServer } from '../../oauth/authorization-server';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { notFound } from '../http-error';
import { adminOf as admin, type GatewayRouter, type GatewayState } from '../state';

export function grantBody(g: OAuthGrantRecord) {
  return {
    id: g.id, clientId: g.clientId, clientName: g.clientName, resource: g.resource, scope: g.scope, subject: g.subject,
    member: g.member, createdAt: g.createdAt, expiresAt: g.expiresAt,
  };
}

export function oauthGrantRoutes(deps: GatewayDeps, server: OAuthServer): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1/oauth/grants' });
  router.use(requireAdmin(deps));

  router.get('/', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { grants: (await server.listGrants(admin(ctx).orgId)).map(grantBody) };
  });

  router.delete('/:grantId', async (ctx) => {
    const grantId = ctx.params.grantId ?? '';
    if (!(await server.revokeOrgGrant(admin(ctx).orgId, grantId))) throw notFound('unknown_grant', `no live grant ${grantId}`);
    ctx.status = 204;
  });
  return router;
}
