/**
 * The console's agents pages (docs/console.md "Agents"), added to the console router by
 * routes/console.ts: the organization's agents, an agent's page with its chats, and the chat: a
 * message starts an invocation through the agent service the API uses (the same `agent.invoked`
 * action in the audit trail), the page shows the conversation and the invocation in progress with
 * its tool calls, and `…/invocations/:invocationId/live` answers that part again for the page's
 * script to follow it. Another organization's agent, chat or invocation answers 404.
 */
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import { AgentError } from '../../agents/service';
import { secondsToNextMonth } from '../../agents/budgets';
import type { AgentRecord } from '../../registry/agent-records';
import type { LiveInvocation } from '../../console/agents';
import type { GatewayDeps } from '../deps';
import { consoleState, parseConsoleForm, refusePage } from '../console/guard';
import { noteForAudit } from '../console/audit';
import { page, send, securityHeaders } from '../console/layout';
import { toText } from '../console/html';
import { agentBody, agentsBody, liveInvocation, MESSAGE_MAX_CHARS, type AgentPageData } from '../console/agent-views';
import { callTemporal } from '../temporal-errors';
import { formOf } from '../validate';
import { apiActionOf } from '../console/kit';

const ChatFormSchema = z.object({
  message: z.string().trim().min(1).max(MESSAGE_MAX_CHARS),
  chatId: z.union([z.literal(''), z.string().regex(/^[A-Za-z0-9_.:-]{1,200}$/)]).optional(),
});
const PageQuerySchema = z.object({
  chat: z.string().regex(/^[A-Za-z0-9_.:-]{1,200}$/).optional(),
  inv: z.string().regex(/^[A-Za-z0-9_.:-]{1,200}$/).optional(),
});

export interface ConsoleGuards {
  session: Middleware;
  csrf: Middleware;
  /** records the route in the audit trail as the API's action for the same change */
  audited(action: string, targetType: string, param?: string): Middleware;
  apiAction(route: string): string;
}

/** An agent service refusal as the API answers it (404, 503, 429, 400), as a page. */
function agentErrorStatus(err: AgentError): number {
  if (err.code === 'NOT_FOUND') return 404;
  if (err.code === 'NOT_CONFIGURED') return 503;
  if (err.code === 'BUDGET_EXHAUSTED') return 429;
  return 400;
}

export function addConsoleAgentRoutes(router: Router, deps: GatewayDeps, guards: ConsoleGuards): void {
  const agents = deps.console?.agents;
  if (!agents) return;
  const { session, csrf, audited } = guards;
  const defaultModel = deps.config.llm.model;
  const noAgent = (ctx: Context): void => refusePage(ctx, 404, 'No such agent', 'This organization has no agent with that ID.');

  router.get('/agents', session, async (ctx) => {
    const { session: s } = consoleState(ctx);
    send(ctx, 200, page({ title: 'Agents', csrf: s.csrfToken, section: 'agents' }, agentsBody(await agents.list(s.orgId), defaultModel, ctx.query.done === 'deleted' ? 'The agent was deleted.' : undefined)));
  });

  /** The agent's page: a chat's conversation (`chat`), and an invocation of it not in its history yet (`inv`). */
  const agentPage = async (ctx: Context, agent: AgentRecord, status: number, options: { chatId?: string; invocationId?: string; message?: string; error?: string; notice?: string }): Promise<void> => {
    const { session: s } = consoleState(ctx);
    const orgId = s.orgId;
    const chats = await agents.chats(orgId, agent.id);
    let live: LiveInvocation | undefined;
    if (options.invocationId) live = await callTemporal(() => agents.invocation(orgId, agent.id, options.invocationId ?? ''));
    const chatId = options.chatId ?? live?.view.chatId;
    const conversation = chatId ? await agents.conversation(orgId, agent.id, chatId) : undefined;
    if (chatId && !conversation) return refusePage(ctx, 404, 'No such chat', 'This agent has no chat with that ID.');
    if (live && (live.view.chatId !== chatId || conversation?.exchanges.some((e) => e.invocationId === live?.view.invocationId))) live = undefined;
    const data: AgentPageData = {
      agent, defaultModel, csrf: s.csrfToken, chats, exchanges: conversation?.exchanges ?? [],
      ...(conversation ? { chat: conversation.chat } : {}), ...(live ? { live } : {}),
      ...(options.message === undefined ? {} : { message: options.message }), ...(options.error ? { error: options.error } : {}), ...(options.notice ? { notice: options.notice } : {}),
    };
    send(ctx, status, page({ title: agent.name, csrf: s.csrfToken, section: 'agents' }, agentBody(data)));
  };

  router.get('/agents/:id', session, async (ctx) => {
    const agent = await agents.agent(consoleState(ctx).session.orgId, String(ctx.params.id ?? ''));
    if (!agent) return noAgent(ctx);
    const query = PageQuerySchema.safeParse(ctx.query);
    const { chat, inv } = query.success ? query.data : {};
    const notice = ctx.query.done === 'created' ? 'The agent was created.' : ctx.query.done === 'saved' ? 'The agent was saved.' : undefined;
    await agentPage(ctx, agent, 200, { ...(chat ? { chatId: chat } : {}), ...(inv ? { invocationId: inv } : {}), ...(notice ? { notice } : {}) });
  });

  router.get('/agents/:id/invocations/:invocationId/live', session, async (ctx) => {
    const orgId = consoleState(ctx).session.orgId;
    const agent = await agents.agent(orgId, String(ctx.params.id ?? ''));
    const live = agent ? await callTemporal(() => agents.invocation(orgId, agent.id, String(ctx.params.invocationId ?? ''))) : undefined;
    if (!agent || !live) return refusePage(ctx, 404, 'No such invocation', 'This agent has no invocation with that ID.');
    const refresh = `/console/agents/${encodeURIComponent(agent.id)}?chat=${encodeURIComponent(live.view.chatId)}&inv=${encodeURIComponent(live.view.invocationId)}`;
    securityHeaders(ctx);
    ctx.body = { status: live.view.status, html: toText(liveInvocation(live, refresh)) };
  });

  router.post('/agents/:id/delete', session, audited(apiActionOf('DELETE', '/api/v1/agents/:id'), 'agent', 'id'), parseConsoleForm, csrf, async (ctx) => {
    if (!(await agents.remove(consoleState(ctx).session.orgId, String(ctx.params.id ?? '')))) return noAgent(ctx);
    ctx.status = 303;
    ctx.redirect('/console/agents?done=deleted');
  });

  router.post('/agents/:id/chat', session, audited(guards.apiAction('/api/v1/agents/:id/invoke'), 'agent', 'id'), parseConsoleForm, csrf, async (ctx) => {
    const orgId = consoleState(ctx).session.orgId;
    const agent = await agents.agent(orgId, String(ctx.params.id ?? ''));
    if (!agent) return noAgent(ctx);
    const form = ChatFormSchema.safeParse(ctx.request.body);
    const sent = formOf(ctx);
    const givenChat = typeof sent.chatId === 'string' && /^[A-Za-z0-9_.:-]{1,200}$/.test(sent.chatId) ? sent.chatId : undefined;
    if (!form.success) {
      return agentPage(ctx, agent, 400, { ...(givenChat ? { chatId: givenChat } : {}), error: `Write a message of at most ${MESSAGE_MAX_CHARS} characters.` });
    }
    const chatId = form.data.chatId || undefined;
    if (chatId && !(await agents.conversation(orgId, agent.id, chatId))) return refusePage(ctx, 404, 'No such chat', 'This agent has no chat with that ID.');
    let started;
    try {
      started = await callTemporal(() => agents.invoke(orgId, agent.id, form.data.message, chatId));
    } catch (err) {
      if (!(err instanceof AgentError)) throw err;
      noteForAudit(ctx, { refusal: err.code });
      if (err.code === 'BUDGET_EXHAUSTED') ctx.set('Retry-After', String(secondsToNextMonth()));
      return agentPage(ctx, agent, agentErrorStatus(err), { ...(chatId ? { chatId } : {}), message: form.data.message, error: err.message });
    }
    noteForAudit(ctx, { invocationId: started.invocationId, chatId: started.chatId });
    ctx.status = 303;
    ctx.redirect(`/console/agents/${encodeURIComponent(agent.id)}?chat=${encodeURIComponent(started.chatId)}&inv=${encodeURIComponent(started.invocationId)}#live-invocation`);
  });
}
