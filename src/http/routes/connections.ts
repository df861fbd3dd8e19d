/**
 * Application connections (management API, admin bearer token): `POST /api/v1/connections`
 * `{application, name?, credentials}` stores the credentials encrypted and answers the connection's
 * id, the `PCID` tool calls name it by. Credentials never leave again: list and get show the rest,
 * with a `status` (`connected`, `pending` consent, `error` with the provider's reason). Custom
 * connections also have `POST /{PCID}/test` (call the test endpoint) and, for the OAuth
 * authorization-code flow, `GET /{PCID}/oauth/authorize` (a redirect to the provider's consent).
 */
import Router from '@koa/router';
import { z } from 'zod';
import { APPLICATIONS, type ConnectionSummary } from '../../tools';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { badRequest, conflict, notFound } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { adminOf as admin, type GatewayRouter, type GatewayState } from '../state';
import { parseBody } from '../validate';
import { connectionRedirectUri } from '../connection-oauth';

export const CreateConnectionSchema = z.object({
  application: z.string().min(1).max(100),
  name: z.string().min(1).max(200).optional(),
  credentials: z.record(z.string(), z.unknown()),
}).strict();

export const ListQuerySchema = z.object({ application: z.string().min(1).max(100).optional() });

function isApplication(name: string): name is keyof typeof APPLICATIONS {
  return Object.prototype.hasOwnProperty.call(APPLICATIONS, name);
}

export function connectionRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1/connections' });
  router.use(requireAdmin(deps), jsonBody());
  const custom = deps.customServers;
  const shown = async (orgId: string, c: ConnectionSummary) => ({ id: c.PCID, ...c, ...(custom ? await custom.statusOf(orgId, c) : { status: 'connected' }) });

  router.post('/', async (ctx) => {
    const { application, name, credentials } = parseBody(ctx, CreateConnectionSchema);
    if (!isApplication(application)) {
      throw badRequest('unknown_application', `no application ${application}; known: ${Object.keys(APPLICATIONS).join(', ')}`);
    }
    const checked = APPLICATIONS[application].safeParse(credentials);
    if (!checked.success) {
      // paths and rules only: the values are secrets
      throw badRequest('invalid_credentials', checked.error.issues.map((i) => `credentials.${i.path.join('.')}: ${i.message}`).join('; '));
    }
    const created = await deps.tools.connections.create(admin(ctx).orgId, application, name ?? null, checked.data);
    await custom?.created(admin(ctx).orgId, created.PCID, checked.data);
    ctx.status = 201;
    ctx.body = await shown(admin(ctx).orgId, created);
  });

  router.get('/', async (ctx) => {
    const query = ListQuerySchema.safeParse(ctx.query);
    if (!query.success) throw badRequest('invalid_query', 'application must be a name');
    const orgId = admin(ctx).orgId;
    ctx.body = { connections: await Promise.all((await deps.tools.connections.list(orgId, query.data.application)).map((c) => shown(orgId, c))) };
  });

  router.get('/:id', async (ctx) => {
    const found = await deps.tools.connections.get(admin(ctx).orgId, ctx.params.id ?? '');
    if (!found) throw notFound('unknown_connection', `no connection ${ctx.params.id}`);
    ctx.body = await shown(admin(ctx).orgId, found);
  });

  router.post('/:id/test', async (ctx) => {
    const connection = custom && await custom.openCustom(admin(ctx).orgId, ctx.params.id ?? '');
    if (!custom || !connection) throw notFound('unknown_connection', `no custom connection ${ctx.params.id}`);
    const result = await custom.test(connection);
    const found = await deps.tools.connections.get(admin(ctx).orgId, connection.id);
    // `status` is the test's HTTP status; the connection's own status is `connectionStatus`
    const state = found ? await custom.statusOf(admin(ctx).orgId, found) : undefined;
    ctx.body = { ...result, ...(state ? { connectionStatus: state.status, ...(state.error ? { connectionError: state.error } : {}) } : {}) };
  });

  router.get('/:id/oauth/authorize', async (ctx) => {
    const connection = custom && await custom.openCustom(admin(ctx).orgId, ctx.params.id ?? '');
    if (!custom || !connection) throw notFound('unknown_connection', `no custom connection ${ctx.params.id}`);
    if (connection.credentials.auth.kind !== 'oauth2_authorization_code') {
      throw badRequest('not_authorization_code', `connection ${connection.id} does not use the OAuth authorization code flow`);
    }
    const redirectUri = connectionRedirectUri(deps, ctx);
    const authorizeUrl = await custom.auth.startConsent(connection, redirectUri);
    ctx.status = 302;
    ctx.redirect(authorizeUrl);
    ctx.body = { authorizeUrl, redirectUri };
  });

  router.delete('/:id', async (ctx) => {
    const used = await deps.registry.toolServers.usingConnection(admin(ctx).orgId, ctx.params.id ?? '');
    if (used.length > 0) throw conflict('connection_in_use', `custom servers call with this connection: ${used.join(', ')}; delete them first`);
    const removed = await deps.tools.connections.remove(admin(ctx).orgId, ctx.params.id ?? '');
    custom?.forgetConnection(admin(ctx).orgId, ctx.params.id ?? '');
    if (!removed) throw notFound('unknown_connection', `no connection ${ctx.params.id}`);
    ctx.status = 204;
  });

  return router;
}
