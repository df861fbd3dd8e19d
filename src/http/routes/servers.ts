/**
 * Custom tool servers (management API, admin bearer token): `POST /api/v1/servers` registers a
 * server generated from an OpenAPI document (`document` + `connection`) or a remote MCP server
 * (`url`, optional `connection`); list, get (with its tools), replace (`PUT`) and delete. Ids are
 * short opaque tokens; another organization's server answers exactly like a missing one.
 * Also the OAuth callback of custom connections, which the provider's redirect reaches without a
 * flowgate credential: the `state` it carries is what binds it to an organization and connection.
 * A consent started from the console answers a page that takes the browser back to the console.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { DurablePolicySchema, DurableToolsSchema } from '../../contracts/durable-policy';
import { ConsentStateError, ServerRegistrationError, TokenRefusedError, type CustomServers, type ServerInput } from '../../tools/custom';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { badRequest, notFound } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { adminOf as admin, type GatewayRouter, type GatewayRouterContext, type GatewayState } from '../state';
import { parseInput } from '../validate';
import { consentReturnPage, type ConsentOutcome } from '../console/connection-views';
import { creates, mount, on, type Operations } from '../operation';
import { admin as security, errors, id, json, jsonRequest, noContent } from '../openapi-kit';
import { OAUTH_CALLBACK_PATH } from '../connection-oauth';

/** an OpenAPI document inline, plus its envelope */
const SERVER_BODY_LIMIT = '3mb';

export const ServerBodySchema = z.object({
  name: z.string().min(1).max(200).optional(),
  description: z.string().min(1).max(4000).optional(),
  connection: z.string().min(1).max(100).optional(),
  /** the OpenAPI document: a JSON object, or its JSON or YAML text */
  document: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).optional(),
  /** a remote server's MCP endpoint */
  url: z.string().min(1).max(2000).optional(),
  /** every call of the server's tools runs as a durable task with this retry policy (docs/tool-gateway.md, "Durable calls") */
  durable: DurablePolicySchema.optional(),
  /** per tool name, its own retry policy (that tool durable) or false (a plain proxied call on a durable server) */
  durableTools: DurableToolsSchema.optional(),
}).strict();

const IdSchema = z.string().regex(/^[0-9a-z]{1,64}$/);

function serverInput(body: unknown): ServerInput {
  const { name, description, connection, document, url, durable, durableTools } = parseInput(ServerBodySchema, body);
  const settings = { ...(durable ? { durable } : {}), ...(durableTools ? { durableTools } : {}) };
  if ((document === undefined) === (url === undefined)) {
    throw badRequest('invalid_body', 'give either document (an OpenAPI document, with connection) or url (a remote MCP server)');
  }
  if (document !== undefined) {
    if (connection === undefined) throw badRequest('invalid_body', 'connection: a generated server calls its API with a custom connection; give its PCID');
    return { kind: 'openapi', name, description, connection, document, ...settings };
  }
  return { kind: 'remote', name, description, connection, url: url ?? '', ...settings };
}

async function registering<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ServerRegistrationError) throw badRequest('invalid_server', error.message);
    throw error;
  }
}

export function serverRoutes(_deps: GatewayDeps, servers: CustomServers): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1/servers' });
  router.use(requireAdmin(_deps), jsonBody({ limit: SERVER_BODY_LIMIT }));

  const idOf = (ctx: GatewayRouterContext): string => {
    const id = IdSchema.safeParse(ctx.params.id);
    if (!id.success) throw notFound('unknown_server', `no server ${String(ctx.params.id)}`);
    return id.data;
  };

  mount(router, OPS.createServer, async (ctx) => {
    const input = serverInput(ctx.request.body);
    ctx.status = 201;
    ctx.body = await registering(() => servers.register(admin(ctx).orgId, input));
  });

  mount(router, OPS.listServers, async (ctx) => {
    ctx.body = { servers: await servers.list(admin(ctx).orgId) };
  });

  mount(router, OPS.getServer, async (ctx) => {
    const found = await servers.get(admin(ctx).orgId, idOf(ctx));
    if (!found) throw notFound('unknown_server', `no server ${ctx.params.id}`);
    ctx.body = found;
  });

  mount(router, OPS.replaceServer, async (ctx) => {
    const id = idOf(ctx);
    const input = serverInput(ctx.request.body);
    const replaced = await registering(() => servers.replace(admin(ctx).orgId, id, input));
    if (!replaced) throw notFound('unknown_server', `no server ${id}`);
    ctx.body = replaced;
  });

  mount(router, OPS.deleteServer, async (ctx) => {
    if (!(await servers.remove(admin(ctx).orgId, idOf(ctx)))) throw notFound('unknown_server', `no server ${ctx.params.id}`);
    ctx.status = 204;
  });

  return router;
}

export const CallbackQuerySchema = z.object({
  state: z.string().min(1).max(500),
  code: z.string().min(1).max(4000).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(2000).optional(),
});

const server = id('id', 'a server');
/** a server as the API shows it: `durable` is its retry policy, null for a plain proxy; `durableTools` the per-tool overrides, null for none */
const ServerViewSchema = z.looseObject({ id: z.string(), durable: DurablePolicySchema.nullable(), durableTools: DurableToolsSchema.nullable() });

export const SERVER_OPERATIONS = {
  listServers: {
    method: 'get', path: '/api/v1/servers', permission: 'read',
    tags: ['servers'], summary: 'List custom tool servers', security,
    responses: { '200': json(z.looseObject({ servers: z.array(ServerViewSchema) }), 'the servers'), ...errors(401) },
  },
  createServer: {
    method: 'post', path: '/api/v1/servers', permission: 'servers.write', audit: creates('server.created', 'server', ['kind', 'name']),
    tags: ['servers'], summary: 'Register a custom tool server (an OpenAPI document, or a remote MCP server)', security, requestBody: jsonRequest(ServerBodySchema),
    responses: { '201': json(ServerViewSchema, 'the server'), ...errors(400, 401, 409, 413, 415) },
  },
  getServer: {
    method: 'get', path: '/api/v1/servers/:id', permission: 'read',
    tags: ['servers'], summary: 'Read a custom tool server', security, requestParams: { path: server },
    responses: { '200': json(ServerViewSchema, 'the server'), ...errors(401, 404) },
  },
  replaceServer: {
    method: 'put', path: '/api/v1/servers/:id', permission: 'servers.write', audit: on('server.updated', 'server', 'id'),
    tags: ['servers'], summary: 'Replace a custom tool server', security, requestParams: { path: server }, requestBody: jsonRequest(ServerBodySchema),
    responses: { '200': json(ServerViewSchema, 'the server'), ...errors(400, 401, 404, 415) },
  },
  deleteServer: {
    method: 'delete', path: '/api/v1/servers/:id', permission: 'servers.write', audit: on('server.deleted', 'server', 'id'),
    tags: ['servers'], summary: 'Delete a custom tool server', security, requestParams: { path: server }, responses: { '204': noContent, ...errors(401, 404) },
  },
  /** where the OAuth provider sends the user back: no credential, the state names the consent */
  oauthCallback: {
    method: 'get', path: OAUTH_CALLBACK_PATH,
    tags: ['connections'], summary: 'Where the OAuth provider sends the user back', security: [], requestParams: { query: CallbackQuerySchema },
    responses: { '200': { description: 'an HTML page saying whether the connection is ready', content: { 'text/html': { schema: z.string() } } } },
  },
} satisfies Operations;
const OPS = SERVER_OPERATIONS;

export function oauthCallbackRoutes(_deps: GatewayDeps, servers: CustomServers): GatewayRouter {
  const router = new Router<GatewayState>();
  mount(router, OPS.oauthCallback, async (ctx) => {
    const query = CallbackQuerySchema.safeParse(ctx.query);
    if (!query.success) throw badRequest('invalid_callback', 'the callback needs state, and code or error');
    const open = (orgId: string, id: string) => servers.openCustom(orgId, id);
    // a consent the console started goes back to the console's connection page, with its outcome
    const returnTo = await servers.auth.consentReturn(query.data.state, open);
    const back = returnTo === undefined ? undefined : (status: number, outcome: ConsentOutcome) => consentReturnPage(ctx, status, returnTo, outcome);
    try {
      const connection = await servers.auth.finishConsent(query.data.state,
        { code: query.data.code, error: query.data.error, errorDescription: query.data.error_description }, open);
      if (back) return back(200, 'connected');
      ctx.body = { id: connection.id, PCID: connection.id, status: 'connected' };
    } catch (error) {
      if (back) return back(error instanceof TokenRefusedError ? 400 : error instanceof ConsentStateError ? 400 : 502, error instanceof TokenRefusedError ? 'refused' : 'failed');
      if (error instanceof ConsentStateError) throw badRequest('invalid_state', error.message);
      if (error instanceof TokenRefusedError) throw badRequest('consent_refused', `the provider refused: ${error.message}`);
      throw error;
    }
  });
  return router;
}
