/**
 * Agents over the management API (admin bearer token), the same operations as the
 * agent-management tools: `/api/v1/agents` CRUD, `POST /:id/invoke` (200 with the answer, or 202
 * with a handle and Retry-After when it needs longer than the wait), `GET /invocations/:id`, and
 * chats. `X-Pf-Forward-*` headers of an invoke request reach the agent's remote tool servers.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { AgentError, agentView, type InvocationView } from '../../agents/service';
import { CreateAgentSchema, UpdateAgentSchema } from '../../registry/agent-records';
import { secondsToNextMonth } from '../../agents/budgets';
import { forwardableHeaders } from '../../tools/forward-headers';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { badRequest, HttpError, notFound } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { adminOf, type GatewayRouter, type GatewayRouterContext, type GatewayState } from '../state';
import { bodyOf as body, parseInput as parse } from '../validate';

export const InvokeSchema = z.object({
  message: z.string().min(1).max(100_000),
  chatId: z.string().min(1).max(200).optional(),
  waitSeconds: z.number().int().min(0).max(60).optional(),
}).strict();
export const ChatSchema = z.object({ title: z.string().min(1).max(200).optional() }).strict();

function orgOf(ctx: GatewayRouterContext): string {
  return adminOf(ctx).orgId;
}

export function agentRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1/agents' });
  const service = deps.agents;

  router.use(requireAdmin(deps), jsonBody(), async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (!(error instanceof AgentError)) throw error;
      if (error.code === 'NOT_FOUND') throw notFound('not_found', error.message);
      if (error.code === 'NOT_CONFIGURED') throw new HttpError(503, 'model_not_configured', error.message, { expose: true });
      if (error.code === 'BUDGET_EXHAUSTED') throw new HttpError(429, 'budget_exhausted', error.message, { headers: { 'Retry-After': String(secondsToNextMonth()) } });
      throw badRequest('invalid_agent', error.message);
    }
  });

  const answer = (ctx: GatewayRouterContext, view: InvocationView): void => {
    if (view.status === 'RUNNING') {
      ctx.status = 202;
      ctx.set('Retry-After', '5');
    }
    ctx.body = view;
  };

  router.post('/', async (ctx) => {
    ctx.status = 201;
    ctx.body = agentView(await service.create(orgOf(ctx), parse(CreateAgentSchema, body(ctx))));
  });
  router.get('/', async (ctx) => {
    ctx.body = { agents: (await service.list(orgOf(ctx))).map(agentView) };
  });
  router.get('/invocations/:invocationId', async (ctx) => {
    answer(ctx, await service.status(orgOf(ctx), ctx.params.invocationId ?? ''));
  });
  router.get('/chats/:chatId', async (ctx) => {
    ctx.body = await service.chat(orgOf(ctx), ctx.params.chatId ?? '');
  });
  router.post('/chats/:chatId/reset', async (ctx) => {
    ctx.body = { reset: true, ...(await service.resetChat(orgOf(ctx), ctx.params.chatId ?? '')) };
  });
  router.get('/chats/:chatId/artifacts', async (ctx) => {
    ctx.body = { artifacts: await service.artifacts(orgOf(ctx), ctx.params.chatId ?? '') };
  });
  router.get('/:id', async (ctx) => {
    ctx.body = agentView(await service.read(orgOf(ctx), ctx.params.id ?? ''));
  });
  router.patch('/:id', async (ctx) => {
    ctx.body = agentView(await service.update(orgOf(ctx), ctx.params.id ?? '', parse(UpdateAgentSchema, body(ctx))));
  });
  router.delete('/:id', async (ctx) => {
    await service.remove(orgOf(ctx), ctx.params.id ?? '');
    ctx.status = 204;
  });
  router.post('/:id/invoke', async (ctx) => {
    const request = parse(InvokeSchema, body(ctx));
    answer(ctx, await service.invoke(orgOf(ctx), {
      agentId: ctx.params.id ?? '', ...request, forwardHeaders: forwardableHeaders(ctx.headers), startedBy: 'management-api',
      waitSeconds: request.waitSeconds === undefined ? undefined : Math.min(request.waitSeconds, deps.config.agentWaitSeconds),
    }));
  });
  router.post('/:id/chats', async (ctx) => {
    ctx.status = 201;
    ctx.body = await service.createChat(orgOf(ctx), ctx.params.id ?? '', parse(ChatSchema, body(ctx)).title ?? null);
  });
  router.get('/:id/chats', async (ctx) => {
    ctx.body = { chats: await service.listChats(orgOf(ctx), ctx.params.id ?? '') };
  });
  return router;
}
