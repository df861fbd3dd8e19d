/**
 * An organization's OAuth grants (docs/tool-gateway.md "Signing in by URL"): what MCP clients
 * were allowed, by whom, for which resource; and revoking one. A grant is never shown with a
 * token. Listing and revoking need `org.manage` (src/people/roles.ts); revoking is audited
 * (`oauth_grant.revoked`) and takes effect at once on this replica, within a second on others.
 */
import Router from '@koa/router';
import { z } from 'zod';
import type { OAuthGrantRecord } from '../../registry';
import type { OAuthServer } from '../../oauth/authorization-server';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { notFound } from '../http-error';
import { adminOf as admin, type GatewayRouter, type GatewayState } from '../state';
import { mount, on, type Operations } from '../operation';
import { admin as security, errors, id, json } from '../openapi-kit';

export function grantBody(g: OAuthGrantRecord) {
  return {
    id: g.id, clientId: g.clientId, clientName: g.clientName, resource: g.resource, scope: g.scope, subject: g.subject,
    member: g.member, createdAt: g.createdAt, expiresAt: g.expiresAt,
  };
}

const OAuthGrantSchema = z.looseObject({
  id: z.string(), clientId: z.string().meta({ description: 'a registered client\'s id, or the URL of its metadata document' }),
  clientName: z.string().nullable(), resource: z.string(), scope: z.string().nullable(),
  subject: z.string().meta({ description: '`admin-token:<fingerprint>` or `member:<id>`' }),
  member: z.looseObject({ id: z.string(), email: z.string(), role: z.string() }).nullable(),
  createdAt: z.string(), expiresAt: z.string().meta({ description: 'when its latest token expires' }),
}).meta({ id: 'OAuthGrant' });

export const OAUTH_GRANT_OPERATIONS = {
  listOAuthGrants: {
    method: 'get', path: '/api/v1/oauth/grants', permission: 'org.manage',
    tags: ['people'], summary: 'What MCP clients signed in by URL were allowed, by whom, for which resource (live grants, never a token)', security,
    responses: { '200': json(z.object({ grants: z.array(OAuthGrantSchema) }), 'the live grants, newest first'), ...errors(401, 403) },
  },
  revokeOAuthGrant: {
    method: 'delete', path: '/api/v1/oauth/grants/:grantId', permission: 'org.manage', audit: on('oauth_grant.revoked', 'oauth_grant', 'grantId'),
    tags: ['people'], summary: 'Revoke a grant: its access and refresh tokens are refused from now on', security, requestParams: { path: id('grantId', 'a grant') },
    responses: { '204': { description: 'revoked' }, ...errors(401, 403, 404) },
  },
} satisfies Operations;
const OPS = OAUTH_GRANT_OPERATIONS;

export function oauthGrantRoutes(deps: GatewayDeps, server: OAuthServer): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1/oauth/grants' });
  router.use(requireAdmin(deps));

  mount(router, OPS.listOAuthGrants, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { grants: (await server.listGrants(admin(ctx).orgId)).map(grantBody) };
  });

  mount(router, OPS.revokeOAuthGrant, async (ctx) => {
    const grantId = ctx.params.grantId ?? '';
    if (!(await server.revokeOrgGrant(admin(ctx).orgId, grantId))) throw notFound('unknown_grant', `no live grant ${grantId}`);
    ctx.status = 204;
  });
  return router;
}
