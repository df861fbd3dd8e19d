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
import { ErrorBodySchema } from '../../contracts/http-bodies';
import { creates, mount, on, type Operations } from '../operation';
import { admin as security, errors, id, json, jsonRequest, noContent } from '../openapi-kit';

export const InvokeSchema = z.object({
  message: z.string().min(1).max(100_000),
  chatId: z.string().min(1).max(200).optional(),
  waitSeconds: z.number().int().min(0).max(60).optional(),
}).strict();
export const ChatSchema = z.object({ title: z.string().min(1).max(200).optional() }).strict();

const agent = id('id', 'an agent');
const chat = id('chatId', 'a chat');
const invocation = z.looseObject({ status: z.string() });

export const AGENT_OPERATIONS = {
  listAgents: {
    method: 'get', path: '/api/v1/agents', permission: 'read',
    tags: ['agents'], summary: 'List agents', security, responses: { '200': json(z.looseObject({ agents: z.array(z.looseObject({ id: z.string() })) }), 'the agents'), ...errors(401) },
  },
  createAgent: {
    method: 'post', path: '/api/v1/agents', permission: 'agents.write', audit: creates('agent.created', 'agent', ['name']),
    tags: ['agents'], summary: 'Create an agent', security, requestBody: jsonRequest(CreateAgentSchema),
    responses: { '201': json(z.looseObject({ id: z.string() }), 'the agent'), ...errors(400, 401, 415) },
  },
  getAgent: {
    method: 'get', path: '/api/v1/agents/:id', permission: 'read',
    tags: ['agents'], summary: 'Read an agent', security, requestParams: { path: agent }, responses: { '200': json(z.looseObject({ id: z.string() }), 'the agent'), ...errors(401, 404) },
  },
  updateAgent: {
    method: 'patch', path: '/api/v1/agents/:id', permission: 'agents.write', audit: on('agent.updated', 'agent', 'id'),
    tags: ['agents'], summary: 'Update an agent', security, requestParams: { path: agent }, requestBody: jsonRequest(UpdateAgentSchema),
    responses: { '200': json(z.looseObject({ id: z.string() }), 'the agent'), ...errors(400, 401, 404, 415) },
  },
  deleteAgent: {
    method: 'delete', path: '/api/v1/agents/:id', permission: 'agents.write', audit: on('agent.deleted', 'agent', 'id'),
    tags: ['agents'], summary: 'Delete an agent', security, requestParams: { path: agent }, responses: { '204': noContent, ...errors(401, 404) },
  },
  invokeAgent: {
    method: 'post', path: '/api/v1/agents/:id/invoke', permission: 'runs.operate', audit: on('agent.invoked', 'agent', 'id', ['invocationId']),
    tags: ['agents'], summary: 'Invoke an agent; waits up to waitSeconds for its answer', security, requestParams: { path: agent }, requestBody: jsonRequest(InvokeSchema),
    responses: {
      '200': json(invocation, 'the invocation ended'), '202': json(invocation, 'still running'),
      ...errors(400, 401, 404, 503), '429': json(ErrorBodySchema, 'budget_exhausted: the organization\'s monthly budget is used up (Retry-After: the next month, UTC)'),
    },
  },
  listChats: {
    method: 'get', path: '/api/v1/agents/:id/chats', permission: 'read',
    tags: ['agents'], summary: 'An agent\'s chats', security, requestParams: { path: agent }, responses: { '200': json(z.looseObject({ chats: z.array(z.looseObject({})) }), 'the chats'), ...errors(401, 404) },
  },
  createChat: {
    method: 'post', path: '/api/v1/agents/:id/chats', permission: 'runs.operate', audit: on('agent_chat.created', 'agent', 'id', ['id']),
    tags: ['agents'], summary: 'Start a chat with an agent', security, requestParams: { path: agent }, requestBody: jsonRequest(ChatSchema),
    responses: { '201': json(z.looseObject({}), 'the chat'), ...errors(400, 401, 404) },
  },
  getInvocation: {
    method: 'get', path: '/api/v1/agents/invocations/:invocationId', permission: 'read',
    tags: ['agents'], summary: 'An agent invocation\'s status', security, requestParams: { path: id('invocationId', 'an invocation') },
    responses: { '200': json(invocation, 'ended'), '202': json(invocation, 'still running'), ...errors(401, 404) },
  },
  getChat: {
    method: 'get', path: '/api/v1/agents/chats/:chatId', permission: 'read',
    tags: ['agents'], summary: 'A chat and its messages', security, requestParams: { path: chat }, responses: { '200': json(z.looseObject({}), 'the chat'), ...errors(401, 404) },
  },
  resetChat: {
    method: 'post', path: '/api/v1/agents/chats/:chatId/reset', permission: 'runs.operate', audit: on('agent_chat.reset', 'agent_chat', 'chatId'),
    tags: ['agents'], summary: 'Forget a chat\'s history', security, requestParams: { path: chat },
    responses: { '200': json(z.looseObject({ reset: z.literal(true) }), 'reset'), ...errors(401, 404) },
  },
  chatArtifacts: {
    method: 'get', path: '/api/v1/agents/chats/:chatId/artifacts', permission: 'read',
    tags: ['agents'], summary: 'Files an agent produced in a chat', security, requestParams: { path: chat },
    responses: { '200': json(z.looseObject({ artifacts: z.array(z.looseObject({})) }), 'the artifacts'), ...errors(401, 404) },
  },
} satisfies Operations;
const OPS = AGENT_OPERATIONS;

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

  mount(router, OPS.createAgent, async (ctx) => {
    ctx.status = 201;
    ctx.body = agentView(await service.create(orgOf(ctx), parse(CreateAgentSchema, body(ctx))));
  });
  mount(router, OPS.listAgents, async (ctx) => {
    ctx.body = { agents: (await service.list(orgOf(ctx))).map(agentView) };
  });
  mount(router, OPS.getInvocation, async (ctx) => {
    answer(ctx, await service.status(orgOf(ctx), ctx.params.invocationId ?? ''));
  });
  mount(router, OPS.getChat, async (ctx) => {
    ctx.body = await service.chat(orgOf(ctx), ctx.params.chatId ?? '');
  });
  mount(router, OPS.resetChat, async (ctx) => {
    ctx.body = { reset: true, ...(await service.resetChat(orgOf(ctx), ctx.params.chatId ?? '')) };
  });
  mount(router, OPS.chatArtifacts, async (ctx) => {
    ctx.body = { artifacts: await service.artifacts(orgOf(ctx), ctx.params.chatId ?? '') };
  });
  mount(router, OPS.getAgent, async (ctx) => {
    ctx.body = agentView(await service.read(orgOf(ctx), ctx.params.id ?? ''));
  });
  mount(router, OPS.updateAgent, async (ctx) => {
    ctx.body = agentView(await service.update(orgOf(ctx), ctx.params.id ?? '', parse(UpdateAgentSchema, body(ctx))));
  });
  mount(router, OPS.deleteAgent, async (ctx) => {
    await service.remove(orgOf(ctx), ctx.params.id ?? '');
    ctx.status = 204;
  });
  mount(router, OPS.invokeAgent, async (ctx) => {
    const request = parse(InvokeSchema, body(ctx));
    answer(ctx, await service.invoke(orgOf(ctx), {
      agentId: ctx.params.id ?? '', ...request, forwardHeaders: forwardableHeaders(ctx.headers), startedBy: 'management-api',
      waitSeconds: request.waitSeconds === undefined ? undefined : Math.min(request.waitSeconds, deps.config.agentWaitSeconds),
    }));
  });
  mount(router, OPS.createChat, async (ctx) => {
    ctx.status = 201;
    ctx.body = await service.createChat(orgOf(ctx), ctx.params.id ?? '', parse(ChatSchema, body(ctx)).title ?? null);
  });
  mount(router, OPS.listChats, async (ctx) => {
    ctx.body = { chats: await service.listChats(orgOf(ctx), ctx.params.id ?? '') };
  });
  return router;
}
