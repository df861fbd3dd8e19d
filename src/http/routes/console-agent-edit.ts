/**
 * Creating and editing an agent in the console (docs/console.md "Agents"): `/console/agents/new`
 * and `/console/agents/{id}/edit`, a form the same service as `POST /api/v1/agents` and
 * `PATCH /api/v1/agents/{id}` takes (src/console/agent-form.ts reads it into their bodies), for
 * roles holding `agents.write`, audited under the API's actions (`agent.created`,
 * `agent.updated`). A field that does not read comes back beside its field (400); a server or
 * trigger the organization does not have, with the service's own message (400). Added before the
 * agent pages (src/http/console-pages.ts), so that `new` is not taken for an agent's ID.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { AgentError } from '../../agents/errors';
import { agentFormOf, agentFormValues, readAgentCreate, readAgentUpdate, type AgentFormField, type AgentFormValues } from '../../console/agent-form';
import type { AgentRecord } from '../../registry/agent-records';
import { permissionDenied } from '../auth';
import { agentFormBody } from '../console/agent-form-views';
import { noteForAudit } from '../console/audit';
import { consoleState, refusePage } from '../console/guard';
import type { ConsoleRouteKit } from '../console/kit';
import { page, send } from '../console/layout';
import type { GatewayDeps } from '../deps';
import { roleHas } from '../../people/roles';

export function consoleAgentEditRoutes(router: Router, deps: GatewayDeps, kit: ConsoleRouteKit): void {
  if (!deps.console?.agents) return;
  const service = deps.agents;
  const { session, csrf, parseForm, audited } = kit;
  const defaultModel = deps.config.llm.model;

  const formPage = (ctx: Context, status: number, values: AgentFormValues, errors: Partial<Record<AgentFormField, string>>, agent?: AgentRecord, error?: string): void => {
    const { session: s } = consoleState(ctx);
    send(ctx, status, page({ title: agent ? `Edit ${agent.name}` : 'Create an agent', csrf: s.csrfToken, section: 'agents' }, agentFormBody({
      csrf: s.csrfToken, values, errors, ...(agent ? { agent: { id: agent.id, name: agent.name } } : {}), ...(error ? { error } : {}), ...(defaultModel ? { defaultModel } : {}),
    })));
  };
  /** The form is offered only to a role that may save it (a GET by another is refused with the reason). */
  const mayWrite = (ctx: Context): void => {
    const { session: s } = consoleState(ctx);
    if (!roleHas(s.role, 'agents.write')) throw permissionDenied(s, 'agents.write');
  };
  const own = async (ctx: Context): Promise<AgentRecord | undefined> => {
    const agent = await deps.registry.agents.get(consoleState(ctx).session.orgId, String(ctx.params.id ?? ''));
    if (!agent) refusePage(ctx, 404, 'No such agent', 'This organization has no agent with that ID.');
    return agent;
  };

  router.get('/agents/new', session, async (ctx) => {
    mayWrite(ctx);
    formPage(ctx, 200, { maxTurns: '10', maxToolCalls: '20', timeoutSeconds: '600' }, {});
  });
  router.post('/agents/new', session, audited(kit.apiAction('POST', '/api/v1/agents'), 'agent', { noteTarget: 'agentId' }), parseForm, csrf, async (ctx) => {
    const values = agentFormValues(ctx.request.body);
    const read = readAgentCreate(values);
    if (!read.ok) return formPage(ctx, 400, values, read.errors);
    let created: AgentRecord;
    try {
      created = await service.create(consoleState(ctx).session.orgId, read.input);
    } catch (err) {
      if (!(err instanceof AgentError)) throw err;
      return formPage(ctx, 400, values, {}, undefined, err.message);
    }
    noteForAudit(ctx, { agentId: created.id, name: created.name });
    ctx.status = 303;
    ctx.redirect(`/console/agents/${encodeURIComponent(created.id)}?done=created`);
  });

  router.get('/agents/:id/edit', session, async (ctx) => {
    mayWrite(ctx);
    const agent = await own(ctx);
    if (agent) formPage(ctx, 200, agentFormOf(agent), {}, agent);
  });
  router.post('/agents/:id/edit', session, audited(kit.apiAction('PATCH', '/api/v1/agents/:id'), 'agent', { param: 'id' }), parseForm, csrf, async (ctx) => {
    const agent = await own(ctx);
    if (!agent) return;
    const values = agentFormValues(ctx.request.body);
    const read = readAgentUpdate(values);
    if (!read.ok) return formPage(ctx, 400, values, read.errors, agent);
    try {
      await service.update(agent.orgId, agent.id, read.input);
    } catch (err) {
      if (!(err instanceof AgentError)) throw err;
      return formPage(ctx, err.code === 'NOT_FOUND' ? 404 : 400, values, {}, agent, err.message);
    }
    ctx.status = 303;
    ctx.redirect(`/console/agents/${encodeURIComponent(agent.id)}?done=saved`);
  });
}
