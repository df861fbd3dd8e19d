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
import { creates, mount, on, type Operations } from '../operation';
import { admin as security, errors, id, json, jsonRequest, noContent } from '../openapi-kit';

export const CreateConnectionSchema = z.object({
  application: z.string().min(1).max(100),
  name: z.string().min(1).max(200).optional(),
  credentials: z.record(z.string(), z.unknown()),
}).strict();

export const ListQuerySchema = z.object({ application: z.string().min(1).max(100).optional() });

const pcid = id('id', 'a PCID');

export const CONNECTION_OPERATIONS = {
  listConnections: {
    method: 'get', path: '/api/v1/connections', permission: 'read',
    tags: ['connections'], summary: 'List application connections (never their credentials)', security,
    requestParams: { query: ListQuerySchema }, responses: { '200': json(z.looseObject({ connections: z.array(z.looseObject({ id: z.string() })) }), 'the connections'), ...errors(400, 401) },
  },
  createConnection: {
    method: 'post', path: '/api/v1/connections', permission: 'connections.write', audit: creates('connection.created', 'connection', ['application']),
    tags: ['connections'], summary: 'Store an application connection (credentials encrypted)', security, requestBody: jsonRequest(CreateConnectionSchema),
    responses: { '201': json(z.looseObject({ id: z.string() }), 'the connection; `id` is the PCID'), ...errors(400, 401, 415) },
  },
  getConnection: {
    method: 'get', path: '/api/v1/connections/:id', permission: 'read',
    tags: ['connections'], summary: 'Read a connection', security, requestParams: { path: pcid },
    responses: { '200': json(z.looseObject({ id: z.string() }), 'the connection'), ...errors(401, 404) },
  },
  deleteConnection: {
    method: 'delete', path: '/api/v1/connections/:id', permission: 'connections.write', audit: on('connection.deleted', 'connection', 'id'),
    tags: ['connections'], summary: 'Delete a connection', security, requestParams: { path: pcid }, responses: { '204': noContent, ...errors(401, 404) },
  },
  testConnection: {
    method: 'post', path: '/api/v1/connections/:id/test', permission: 'connections.write', audit: on('connection.tested', 'connection', 'id', ['ok']),
    tags: ['connections'], summary: 'Call a custom connection\'s test endpoint', security, requestParams: { path: pcid },
    responses: { '200': json(z.looseObject({}), 'the test\'s outcome'), ...errors(401, 404, 409) },
  },
  authorizeConnection: {
    method: 'get', path: '/api/v1/connections/:id/oauth/authorize', permission: 'connections.write', audit: on('connection.consent_started', 'connection', 'id'),
    tags: ['connections'], summary: 'Redirect to the OAuth provider\'s consent page', security, requestParams: { path: pcid },
    responses: { '302': { description: 'to the provider' }, ...errors(401, 404, 409) },
  },
} satisfies Operations;
const OPS = CONNECTION_OPERATIONS;

function isApplication(name: string): name is keyof typeof APPLICATIONS {
  return Object.prototype.hasOwnProperty.call(APPLICATIONS, name);
}

export function connectionRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1/connections' });
  router.use(requireAdmin(deps), jsonBody());
  const custom = deps.customServers;
  const shown = async (orgId: string, c: ConnectionSummary) => ({ id: c.PCID, ...c, ...(custom ? await custom.statusOf(orgId, c) : { status: 'connected' }) });

  mount(router, OPS.createConnection, async (ctx) => {
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

  mount(router, OPS.listConnections, async (ctx) => {
    const query = ListQuerySchema.safeParse(ctx.query);
    if (!query.success) throw badRequest('invalid_query', 'application must be a name');
    const orgId = admin(ctx).orgId;
    ctx.body = { connections: await Promise.all((await deps.tools.connections.list(orgId, query.data.application)).map((c) => shown(orgId, c))) };
  });

  mount(router, OPS.getConnection, async (ctx) => {
    const found = await deps.tools.connections.get(admin(ctx).orgId, ctx.params.id ?? '');
    if (!found) throw notFound('unknown_connection', `no connection ${ctx.params.id}`);
    ctx.body = await shown(admin(ctx).orgId, found);
  });

  mount(router, OPS.testConnection, async (ctx) => {
    const connection = custom && await custom.openCustom(admin(ctx).orgId, ctx.params.id ?? '');
    if (!custom || !connection) throw notFound('unknown_connection', `no custom connection ${ctx.params.id}`);
    const result = await custom.test(connection);
    const found = await deps.tools.connections.get(admin(ctx).orgId, connection.id);
    // `status` is the test's HTTP status; the connection's own status is `connectionStatus`
    const state = found ? await custom.statusOf(admin(ctx).orgId, found) : undefined;
    ctx.body = { ...result, ...(state ? { connectionStatus: state.status, ...(state.error ? { connectionError: state.error } : {}) } : {}) };
  });

  mount(router, OPS.authorizeConnection, async (ctx) => {
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

  mount(router, OPS.deleteConnection, async (ctx) => {
    const used = await deps.registry.toolServers.usingConnection(admin(ctx).orgId, ctx.params.id ?? '');
    if (used.length > 0) throw conflict('connection_in_use', `custom servers call with this connection: ${used.join(', ')}; delete them first`);
    const removed = await deps.tools.connections.remove(admin(ctx).orgId, ctx.params.id ?? '');
    custom?.forgetConnection(admin(ctx).orgId, ctx.params.id ?? '');
    if (!removed) throw notFound('unknown_connection', `no connection ${ctx.params.id}`);
    ctx.status = 204;
  });

  return router;
}
