/**
 * Application connections (management API, admin bearer token): `POST /api/v1/connections`
 * `{application, name?, credentials}` stores the credentials encrypted and answers the connection's
 * id, the `PCID` tool calls name it by. Credentials never leave again: list and get show the rest.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { APPLICATIONS } from '../../tools';
import { requireAdmin, type AdminPrincipal } from '../auth';
import type { GatewayDeps } from '../deps';
import { badRequest, notFound } from '../http-error';
import { jsonBody } from '../middleware/json-body';

const CreateConnectionSchema = z.object({
  application: z.string().min(1).max(100),
  name: z.string().min(1).max(200).optional(),
  credentials: z.record(z.string(), z.unknown()),
}).strict();

const ListQuerySchema = z.object({ application: z.string().min(1).max(100).optional() });

function isApplication(name: string): name is keyof typeof APPLICATIONS {
  return Object.prototype.hasOwnProperty.call(APPLICATIONS, name);
}

function admin(ctx: Context): AdminPrincipal {
  return ctx.state.admin as AdminPrincipal;
}

export function connectionRoutes(deps: GatewayDeps): Router {
  const router = new Router({ prefix: '/api/v1/connections' });
  router.use(requireAdmin({ registry: deps.registry }), jsonBody());

  router.post('/', async (ctx) => {
    const parsed = CreateConnectionSchema.safeParse((ctx.request as { body?: unknown }).body ?? {});
    if (!parsed.success) {
      throw badRequest('invalid_body', parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
    }
    const { application, name, credentials } = parsed.data;
    if (!isApplication(application)) {
      throw badRequest('unknown_application', `no application ${application}; known: ${Object.keys(APPLICATIONS).join(', ')}`);
    }
    const checked = APPLICATIONS[application].safeParse(credentials);
    if (!checked.success) {
      // paths and rules only: the values are secrets
      throw badRequest('invalid_credentials', checked.error.issues.map((i) => `credentials.${i.path.join('.')}: ${i.message}`).join('; '));
    }
    const created = await deps.tools.connections.create(admin(ctx).orgId, application, name ?? null, checked.data);
    ctx.status = 201;
    ctx.body = { id: created.PCID, ...created };
  });

  router.get('/', async (ctx) => {
    const query = ListQuerySchema.safeParse(ctx.query);
    if (!query.success) throw badRequest('invalid_query', 'application must be a name');
    ctx.body = { connections: (await deps.tools.connections.list(admin(ctx).orgId, query.data.application)).map((c) => ({ id: c.PCID, ...c })) };
  });

  router.get('/:id', async (ctx) => {
    const found = await deps.tools.connections.get(admin(ctx).orgId, ctx.params.id ?? '');
    if (!found) throw notFound('unknown_connection', `no connection ${ctx.params.id}`);
    ctx.body = { id: found.PCID, ...found };
  });

  router.delete('/:id', async (ctx) => {
    if (!(await deps.tools.connections.remove(admin(ctx).orgId, ctx.params.id ?? ''))) throw notFound('unknown_connection', `no connection ${ctx.params.id}`);
    ctx.status = 204;
  });

  return router;
}
