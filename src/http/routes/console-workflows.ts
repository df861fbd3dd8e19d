/**
 * The console's workflow pages and actions (docs/console.md "Workflows"): the list, a new
 * workflow, a workflow's page with its triggers and their schedules, the draft editor with its
 * validation problems shown where they are, publishing, the diff of two versions, creating and
 * deleting a trigger, pausing and resuming its schedule. Added to the console's router by
 * console.ts; every change goes through what the management API uses (workflow-admin.ts, the
 * registry's workflow store, WorkflowPublishing, ScheduleService) and is audited with its action.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { koaBody } from 'koa-body';
import { z } from 'zod';
import { lineOf, locatePaths, parseJsonText, pathText } from '../../console/definition-text';
import { lineDiff } from '../../console/line-diff';
import { RegistryError, type WorkflowRecord } from '../../registry';
import type { GatewayDeps } from '../deps';
import { HttpError } from '../http-error';
import { consoleState, refusePage } from '../console/guard';
import { noteForAudit } from '../console/audit';
import { page, send } from '../console/layout';
import { diffBody, editorBody, type PlacedProblem, type Side } from '../console/definition-views';
import { workflowBody, workflowsBody, type TriggerRow } from '../console/workflow-views';
import { JSON_BODY_LIMIT } from '../middleware/json-body';
import { checkDefinition, createTrigger, CreateTriggerSchema, definitionSchemaOf, deleteTrigger, deleteWorkflow } from './workflow-admin';
import type { ConsoleRouteKit } from './console-kit';
import { callTemporal } from '../temporal-errors';

/** The editor's form: as large as the API's JSON body may be. */
const parseEditorForm = koaBody({ json: false, urlencoded: true, multipart: false, text: false, formLimit: JSON_BODY_LIMIT });

const NEW_WORKFLOW = `{
  "name": "My workflow",
  "inputSchema": { "type": "object", "properties": { "name": { "type": "string" } } },
  "steps": [
    { "name": "Greet", "type": "template", "template": "Hello {{inputs.name}}" }
  ]
}`;
const NOTICES: Record<string, string> = {
  publish: 'Published.', saved: 'The draft was saved.', created: 'The workflow was created.', trigger: 'The trigger was created.',
  deleted: 'The trigger was deleted.', paused: 'The schedule was paused.', resumed: 'The schedule was resumed.',
};
const TriggerFormSchema = z.object({
  name: z.string().max(200).optional(), kind: z.enum(['http', 'schedule', 'tool']).default('http'),
  cron: z.string().max(200).optional(), every: z.string().max(20).optional(), toolName: z.string().max(64).optional(), toolDescription: z.string().max(2000).optional(),
});

const sideOf = (value: unknown): Side | undefined => (value === 'draft' ? 'draft' : typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : undefined);

export function consoleWorkflowRoutes(router: Router, deps: GatewayDeps, kit: ConsoleRouteKit): void {
  const { session, csrf, audited, apiAction, parseForm } = kit;
  const definitionSchema = definitionSchemaOf(deps);
  const notFound = (ctx: Context): void => refusePage(ctx, 404, 'No such workflow', 'This organization has no workflow with that ID.');
  const ownWorkflow = async (ctx: Context): Promise<WorkflowRecord | undefined> => {
    const workflow = await deps.registry.workflows.get(consoleState(ctx).session.orgId, String(ctx.params.id ?? ''));
    if (!workflow) notFound(ctx);
    return workflow;
  };
  const redirect = (ctx: Context, workflowId: string, done: string, suffix = ''): void => {
    ctx.status = 303;
    ctx.redirect(`/console/workflows/${encodeURIComponent(workflowId)}${suffix}?done=${done}`);
  };

  router.get('/workflows', session, async (ctx) => {
    const { session: s } = consoleState(ctx);
    const notice = ctx.query.done === 'deleted' ? 'The workflow was deleted, with its triggers and schedules; runs already started go on.' : undefined;
    send(ctx, 200, page({ title: 'Workflows', csrf: s.csrfToken, section: 'workflows' }, workflowsBody(await deps.registry.workflows.list(s.orgId), notice)));
  });
  router.post('/workflows/:id/delete', session, audited(apiAction('DELETE', '/api/v1/workflows/:id'), 'workflow', { param: 'id' }), parseForm, csrf, async (ctx) => {
    if (!(await deleteWorkflow(deps, consoleState(ctx).session.orgId, String(ctx.params.id ?? '')))) return notFound(ctx);
    ctx.status = 303;
    ctx.redirect('/console/workflows?done=deleted');
  });

  const workflowPage = async (ctx: Context, workflow: WorkflowRecord, status: number, extra: { notice?: string; error?: string } = {}): Promise<void> => {
    const { session: s } = consoleState(ctx);
    const [triggers, schedules] = await Promise.all([deps.registry.triggers.list(s.orgId, workflow.id), deps.registry.schedules.list(s.orgId, workflow.id)]);
    const scheduleOf = new Map(schedules.map((r) => [r.triggerId, r]));
    const rows = await Promise.all(triggers.map(async (trigger): Promise<TriggerRow> => {
      const schedule = scheduleOf.get(trigger.id);
      // Temporal's live state when it answers; the page is shown without it otherwise
      const state = schedule ? await deps.schedules.state(trigger.id).catch(() => undefined) : undefined;
      return { trigger, ...(schedule ? { schedule } : {}), ...(state ? { state } : {}) };
    }));
    const publicUrl = deps.config.publicUrl ?? `${ctx.protocol}://${ctx.host}`;
    send(ctx, status, page({ title: workflow.name, csrf: s.csrfToken, section: 'workflows' }, workflowBody({ workflow, triggers: rows, csrf: s.csrfToken, publicUrl, ...extra })));
  };
  router.get('/workflows/new', session, (ctx) => {
    const { session: s } = consoleState(ctx);
    send(ctx, 200, page({ title: 'New workflow', csrf: s.csrfToken, section: 'workflows' }, editorBody({ csrf: s.csrfToken, text: NEW_WORKFLOW })));
  });
  router.get('/workflows/:id', session, async (ctx) => {
    const workflow = await ownWorkflow(ctx);
    const notice = typeof ctx.query.done === 'string' && Object.hasOwn(NOTICES, ctx.query.done) ? NOTICES[ctx.query.done] : undefined;
    if (workflow) await workflowPage(ctx, workflow, 200, notice ? { notice } : {});
  });
  router.get('/workflows/:id/draft', session, async (ctx) => {
    const workflow = await ownWorkflow(ctx);
    if (!workflow) return;
    const { session: s } = consoleState(ctx);
    send(ctx, 200, page({ title: `Edit ${workflow.name}`, csrf: s.csrfToken, section: 'workflows' }, editorBody({ workflow, csrf: s.csrfToken, text: JSON.stringify(workflow.draft, null, 2) })));
  });

  /** The submitted definition checked as the API checks it, or the editor again (400) with each problem placed in the text. */
  const submitted = (ctx: Context, workflow?: WorkflowRecord) => {
    const form = ctx.request.body as Record<string, unknown> | undefined;
    const text = typeof form?.definition === 'string' ? form.definition.replace(/\r\n/g, '\n') : '';
    const json = parseJsonText(text);
    let problems: PlacedProblem[];
    if (json.ok) {
      const checked = checkDefinition(definitionSchema, json.value);
      if (checked.ok) return checked.definition;
      const lines = locatePaths(text);
      problems = checked.issues.map((i) => ({ path: pathText(i.path), message: i.message, line: lineOf(lines, i.path) }));
    } else {
      problems = [{ path: 'JSON', message: `not valid JSON: ${json.message}`, line: json.line }];
    }
    noteForAudit(ctx, { problems: problems.length });
    const { session: s } = consoleState(ctx);
    send(ctx, 400, page({ title: workflow ? `Edit ${workflow.name}` : 'New workflow', csrf: s.csrfToken, section: 'workflows' }, editorBody({
      ...(workflow ? { workflow } : {}), csrf: s.csrfToken, text, problems,
    })));
    return undefined;
  };

  router.post('/workflows', session, audited(apiAction('POST', '/api/v1/workflows'), 'workflow', { noteTarget: 'workflowId' }), parseEditorForm, csrf, async (ctx) => {
    const definition = submitted(ctx);
    if (!definition) return;
    const workflow = await deps.registry.workflows.create(consoleState(ctx).session.orgId, definition);
    noteForAudit(ctx, { workflowId: workflow.id, name: workflow.name });
    redirect(ctx, workflow.id, 'created');
  });
  router.post('/workflows/:id/draft', session, audited(apiAction('PUT', '/api/v1/workflows/:id'), 'workflow', { param: 'id' }), parseEditorForm, csrf, async (ctx) => {
    const workflow = await ownWorkflow(ctx);
    if (!workflow) return;
    const definition = submitted(ctx, workflow);
    if (!definition) return;
    if (!(await deps.registry.workflows.updateDraft(workflow.orgId, workflow.id, definition))) return notFound(ctx);
    redirect(ctx, workflow.id, 'saved');
  });
  router.post('/workflows/:id/publish', session, audited(apiAction('POST', '/api/v1/workflows/:id/publish'), 'workflow', { param: 'id' }), parseForm, csrf, async (ctx) => {
    const workflow = await ownWorkflow(ctx);
    if (!workflow) return;
    let version;
    try {
      version = await deps.publishing.publish(workflow.orgId, workflow.id);
    } catch (err) {
      if (err instanceof RegistryError && err.code === 'CONFLICT') return workflowPage(ctx, workflow, 409, { error: err.message });
      throw err;
    }
    if (!version) return notFound(ctx);
    noteForAudit(ctx, { version: version.version });
    redirect(ctx, version.workflowId, 'publish');
  });

  router.get('/workflows/:id/diff', session, async (ctx) => {
    const workflow = await ownWorkflow(ctx);
    if (!workflow) return;
    const { session: s } = consoleState(ctx);
    const versions = workflow.versions;
    const latest = versions[versions.length - 1];
    const to = sideOf(ctx.query.to) ?? latest ?? 'draft';
    const from = sideOf(ctx.query.from) ?? (to === 'draft' ? latest : versions[versions.indexOf(to) - 1]) ?? to;
    const definitionOf = async (side: Side) => (side === 'draft' ? workflow.draft : (await deps.registry.workflows.getVersion(workflow.id, side))?.definition);
    const [a, b] = await Promise.all([definitionOf(from), definitionOf(to)]);
    const view = { id: workflow.id, name: workflow.name, versions };
    if (a === undefined || b === undefined) {
      send(ctx, 404, page({ title: `Compare ${workflow.name}`, csrf: s.csrfToken, section: 'workflows' }, diffBody({ workflow: view, from, to, lines: [], error: 'This workflow has no such version.' })));
      return;
    }
    const lines = lineDiff(JSON.stringify(a, null, 2), JSON.stringify(b, null, 2));
    send(ctx, 200, page({ title: `Compare ${workflow.name}`, csrf: s.csrfToken, section: 'workflows' }, diffBody({ workflow: view, from, to, lines })));
  });

  router.post('/workflows/:id/triggers', session, audited(apiAction('POST', '/api/v1/triggers'), 'trigger', { noteTarget: 'triggerId' }), parseForm, csrf, async (ctx) => {
    const workflow = await ownWorkflow(ctx);
    if (!workflow) return;
    const form = TriggerFormSchema.safeParse(ctx.request.body);
    if (!form.success) return workflowPage(ctx, workflow, 400, { error: 'The trigger form was not understood.' });
    const f = form.data;
    const present = (v: string | undefined): string | undefined => (v?.trim() ? v.trim() : undefined);
    const body = {
      workflowId: workflow.id, ...(present(f.name) ? { name: present(f.name) } : {}),
      ...(f.kind === 'tool' ? { tool: { name: f.toolName?.trim() ?? '', description: f.toolDescription?.trim() ?? '' } } : {}),
      ...(f.kind === 'schedule' ? { schedule: { ...(present(f.cron) ? { cron: present(f.cron) } : {}), ...(present(f.every) ? { interval: { every: present(f.every) } } : {}) } } : {}),
    };
    noteForAudit(ctx, { workflowId: workflow.id, kind: f.kind });
    try {
      const parsed = CreateTriggerSchema.safeParse(body);
      if (!parsed.success) throw new HttpError(400, 'invalid_body', parsed.error.issues.map((i) => `${pathText(i.path.filter((p) => typeof p !== 'symbol'))}: ${i.message}`).join('; '));
      const created = await createTrigger(deps, workflow.orgId, parsed.data);
      noteForAudit(ctx, { triggerId: created.id });
      redirect(ctx, workflow.id, 'trigger');
    } catch (err) {
      if (!(err instanceof HttpError) || !err.expose) throw err;
      await workflowPage(ctx, workflow, err.status, { error: `The trigger was not created: ${err.message}` });
    }
  });

  /** The session's organization's trigger, or a 404 page. */
  const ownTrigger = async (ctx: Context) => {
    const trigger = await deps.registry.triggers.get(String(ctx.params.id ?? ''));
    if (!trigger || trigger.orgId !== consoleState(ctx).session.orgId) {
      refusePage(ctx, 404, 'No such trigger', 'This organization has no trigger with that ID.');
      return undefined;
    }
    return trigger;
  };
  router.post('/triggers/:id/delete', session, audited(apiAction('DELETE', '/api/v1/triggers/:id'), 'trigger', { param: 'id' }), parseForm, csrf, async (ctx) => {
    const trigger = await ownTrigger(ctx);
    if (!trigger) return;
    if (!(await deleteTrigger(deps, trigger.orgId, trigger.id))) return refusePage(ctx, 404, 'No such trigger', 'This organization has no trigger with that ID.');
    redirect(ctx, trigger.workflowId, 'deleted');
  });
  for (const [action, paused] of [['pause', true], ['resume', false]] as const) {
    router.post(`/triggers/:id/schedule/${action}`, session, audited(apiAction('POST', `/api/v1/triggers/:id/schedule/${action}`), 'trigger', { param: 'id' }), parseForm, csrf, async (ctx) => {
      const trigger = await ownTrigger(ctx);
      if (!trigger) return;
      const record = await deps.registry.schedules.get(trigger.orgId, trigger.id);
      if (!record) return refusePage(ctx, 404, 'No schedule', 'This trigger has no schedule.');
      await callTemporal(() => deps.schedules.setPaused(record, paused, null));
      redirect(ctx, trigger.workflowId, paused ? 'paused' : 'resumed');
    });
  }
}
