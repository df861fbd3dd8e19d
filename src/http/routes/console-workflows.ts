/**
 * The console's workflow pages and actions (docs/console.md "Workflows"): the list, a new
 * workflow, a workflow's page with its triggers and their schedules, the draft editor with its
 * validation problems shown where they are, publishing, the diff of two versions, creating and
 * deleting a trigger, pausing and resuming its schedule. Added to the console's router by
 * console.ts; every change goes through the services the management API uses (WorkflowAdmin and
 * TriggerAdmin, src/management/) and is audited with its action.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { koaBody } from 'koa-body';
import { z } from 'zod';
import { lineOf, locatePaths, parseJsonText, pathText } from '../../console/definition-text';
import { lineDiff } from '../../console/line-diff';
import type { WorkflowRecord } from '../../registry';
import type { DefinitionIssue } from '../../management';
import type { GatewayDeps } from '../deps';
import { HttpError } from '../http-error';
import { refusalStatus } from '../management-status';
import { consoleState, refusePage } from '../console/guard';
import { noteForAudit } from '../console/audit';
import { page, send } from '../console/layout';
import { diffBody, editorBody, type PlacedProblem, type Side } from '../console/definition-views';
import { formCreatedBody, SCHEDULE_INPUT_PREFIX, workflowBody, workflowsBody, type TriggerRow } from '../console/workflow-views';
import { formFields, typedValues, type FormField } from '../console/form-fields';
import { isRecord } from '../../common/narrow';
import { JSON_BODY_LIMIT } from '../middleware/json-body';
import { CreateTriggerSchema } from '../../management/schemas';
import type { ConsoleRouteKit } from '../console/kit';
import { callTemporal } from '../temporal-errors';
import { formOf } from '../validate';

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
  deleted: 'The trigger was deleted.', paused: 'The schedule was paused.', resumed: 'The schedule was resumed.', 'form-revoked': 'The hosted form was revoked; its URL no longer works.',
  inputs: 'The schedule\'s inputs were saved; its next runs get them.',
};
const TriggerFormSchema = z.object({
  name: z.string().max(200).optional(), kind: z.enum(['http', 'schedule', 'tool']).default('http'),
  cron: z.string().max(200).optional(), every: z.string().max(20).optional(), toolName: z.string().max(64).optional(), toolDescription: z.string().max(2000).optional(),
});

const sideOf = (value: unknown): Side | undefined => (value === 'draft' ? 'draft' : typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : undefined);

export function consoleWorkflowRoutes(router: Router, deps: GatewayDeps, kit: ConsoleRouteKit): void {
  const { session, csrf, audited, apiAction, parseForm } = kit;
  const { workflows, triggers, definitions } = deps.management;
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
    if (!(await workflows.delete(consoleState(ctx).session.orgId, String(ctx.params.id ?? ''))).ok) return notFound(ctx);
    ctx.status = 303;
    ctx.redirect('/console/workflows?done=deleted');
  });

  const workflowPage = async (ctx: Context, workflow: WorkflowRecord, status: number, extra: { notice?: string; error?: string } = {}): Promise<void> => {
    const { session: s } = consoleState(ctx);
    const [listed, schedules] = await Promise.all([deps.registry.triggers.list(s.orgId, workflow.id), deps.registry.schedules.list(s.orgId, workflow.id)]);
    const scheduleOf = new Map(schedules.map((r) => [r.triggerId, r]));
    const rows = await Promise.all(listed.map(async (trigger): Promise<TriggerRow> => {
      const schedule = scheduleOf.get(trigger.id);
      // Temporal's live state when it answers; the page is shown without it otherwise
      const state = schedule ? await triggers.liveState(trigger.id).catch(() => undefined) : undefined;
      const forms = await deps.console?.forms.list(s.orgId, trigger.id);
      return { trigger, ...(schedule ? { schedule } : {}), ...(state ? { state } : {}), ...(forms ? { forms } : {}) };
    }));
    const publicUrl = deps.config.publicUrl ?? `${ctx.protocol}://${ctx.host}`;
    const inputFields = await publishedInputFields(workflow);
    const asCode = await definitions.workflowAsCode(s.orgId, workflow);
    send(ctx, status, page({ title: workflow.name, csrf: s.csrfToken, section: 'workflows' }, workflowBody({ workflow, triggers: rows, csrf: s.csrfToken, publicUrl, inputFields, ...(asCode ? { asCode } : {}), ...extra })));
  };
  /** The fields of the published version's input schema (a schedule's inputs are checked against the latest version, as the API checks them). */
  const publishedInputFields = async (workflow: WorkflowRecord): Promise<FormField[]> => {
    const version = workflow.publishedVersion === null ? undefined : await deps.registry.workflows.getVersion(workflow.id, workflow.publishedVersion);
    return formFields(version?.definition.inputSchema).fields;
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

  /** The editor's text, as submitted. */
  const editorText = (ctx: Context): string => {
    const { definition } = formOf(ctx);
    return typeof definition === 'string' ? definition.replace(/\r\n/g, '\n') : '';
  };
  /** The editor again (400) with each problem placed in the text. */
  const editorAgain = (ctx: Context, text: string, problems: PlacedProblem[], workflow?: WorkflowRecord): void => {
    noteForAudit(ctx, { problems: problems.length });
    const { session: s } = consoleState(ctx);
    send(ctx, 400, page({ title: workflow ? `Edit ${workflow.name}` : 'New workflow', csrf: s.csrfToken, section: 'workflows' }, editorBody({
      ...(workflow ? { workflow } : {}), csrf: s.csrfToken, text, problems,
    })));
  };
  /** A definition's problems as WorkflowAdmin found them (the API's), placed in the text. */
  const placed = (text: string, issues: readonly DefinitionIssue[]): PlacedProblem[] => {
    const lines = locatePaths(text);
    return issues.map((i) => ({ path: pathText(i.path), message: i.message, line: lineOf(lines, i.path) }));
  };
  const notJson = (json: { message: string; line: number }): PlacedProblem[] => [{ path: 'JSON', message: `not valid JSON: ${json.message}`, line: json.line }];

  router.post('/workflows', session, audited(apiAction('POST', '/api/v1/workflows'), 'workflow', { noteTarget: 'workflowId' }), parseEditorForm, csrf, async (ctx) => {
    const text = editorText(ctx);
    const json = parseJsonText(text);
    if (!json.ok) return editorAgain(ctx, text, notJson(json));
    const created = await workflows.create(consoleState(ctx).session.orgId, json.value);
    if (!created.ok) return editorAgain(ctx, text, placed(text, created.issues ?? []));
    noteForAudit(ctx, { workflowId: created.value.id, name: created.value.name });
    redirect(ctx, created.value.id, 'created');
  });
  router.post('/workflows/:id/draft', session, audited(apiAction('PUT', '/api/v1/workflows/:id'), 'workflow', { param: 'id' }), parseEditorForm, csrf, async (ctx) => {
    const workflow = await ownWorkflow(ctx);
    if (!workflow) return;
    const text = editorText(ctx);
    const json = parseJsonText(text);
    if (!json.ok) return editorAgain(ctx, text, notJson(json), workflow);
    const saved = await workflows.updateDraft(workflow.orgId, workflow.id, json.value);
    if (!saved.ok) return saved.code === 'INVALID_DEFINITION' ? editorAgain(ctx, text, placed(text, saved.issues ?? []), workflow) : notFound(ctx);
    redirect(ctx, workflow.id, 'saved');
  });
  router.post('/workflows/:id/publish', session, audited(apiAction('POST', '/api/v1/workflows/:id/publish'), 'workflow', { param: 'id' }), parseForm, csrf, async (ctx) => {
    const workflow = await ownWorkflow(ctx);
    if (!workflow) return;
    const version = await workflows.publish(workflow.orgId, workflow.id);
    if (!version.ok) return version.code === 'PUBLISH_CONFLICT' ? workflowPage(ctx, workflow, refusalStatus(version), { error: version.message }) : notFound(ctx);
    noteForAudit(ctx, { version: version.value.version });
    redirect(ctx, version.value.workflowId, 'publish');
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
    // a schedule's inputs: the fields generated from the input schema, typed as the schema wants them
    const submitted = Object.fromEntries(Object.entries(isRecord(ctx.request.body) ? ctx.request.body : {})
      .filter(([name]) => name.startsWith(SCHEDULE_INPUT_PREFIX)).map(([name, value]) => [name.slice(SCHEDULE_INPUT_PREFIX.length), value]));
    const inputs = f.kind === 'schedule' ? typedValues(submitted, await publishedInputFields(workflow)) : {};
    const body = {
      workflowId: workflow.id, ...(present(f.name) ? { name: present(f.name) } : {}),
      ...(f.kind === 'tool' ? { tool: { name: f.toolName?.trim() ?? '', description: f.toolDescription?.trim() ?? '' } } : {}),
      ...(f.kind === 'schedule' ? { schedule: {
        ...(present(f.cron) ? { cron: present(f.cron) } : {}), ...(present(f.every) ? { interval: { every: present(f.every) } } : {}),
        ...(Object.keys(inputs).length ? { inputs } : {}),
      } } : {}),
    };
    noteForAudit(ctx, { workflowId: workflow.id, kind: f.kind });
    const notCreated = (status: number, message: string) => workflowPage(ctx, workflow, status, { error: `The trigger was not created: ${message}` });
    const parsed = CreateTriggerSchema.safeParse(body);
    if (!parsed.success) return notCreated(400, parsed.error.issues.map((i) => `${pathText(i.path.filter((p) => typeof p !== 'symbol'))}: ${i.message}`).join('; '));
    let created;
    try {
      created = await callTemporal(() => triggers.create(workflow.orgId, parsed.data));
    } catch (err) {
      // Temporal unreachable: said on the page, as a refusal is
      if (!(err instanceof HttpError) || !err.expose) throw err;
      return notCreated(err.status, err.message);
    }
    if (!created.ok) return notCreated(refusalStatus(created), created.message);
    noteForAudit(ctx, { triggerId: created.value.id });
    redirect(ctx, workflow.id, 'trigger');
  });

  /** The session's organization's trigger, or a 404 page. */
  const ownTrigger = async (ctx: Context) => {
    const trigger = await triggers.own(consoleState(ctx).session.orgId, String(ctx.params.id ?? ''));
    if (!trigger.ok) {
      refusePage(ctx, 404, 'No such trigger', 'This organization has no trigger with that ID.');
      return undefined;
    }
    return trigger.value;
  };
  router.post('/triggers/:id/delete', session, audited(apiAction('DELETE', '/api/v1/triggers/:id'), 'trigger', { param: 'id' }), parseForm, csrf, async (ctx) => {
    const trigger = await ownTrigger(ctx);
    if (!trigger) return;
    if (!(await triggers.delete(trigger.orgId, trigger.id)).ok) return refusePage(ctx, 404, 'No such trigger', 'This organization has no trigger with that ID.');
    redirect(ctx, trigger.workflowId, 'deleted');
  });
  router.post('/triggers/:id/forms', session, audited(apiAction('POST', '/api/v1/triggers/:id/forms'), 'trigger', { param: 'id' }), parseForm, csrf, async (ctx) => {
    const trigger = await ownTrigger(ctx);
    const forms = deps.console?.forms;
    if (!trigger || !forms) return;
    const wait = formOf(ctx).wait === 'true';
    const created = await forms.create(trigger.orgId, trigger.id, { wait });
    if (!created) return refusePage(ctx, 404, 'No such trigger', 'This organization has no trigger with that ID.');
    noteForAudit(ctx, { formId: created.form.id, wait });
    const { session: s } = consoleState(ctx);
    const publicUrl = (deps.config.publicUrl ?? `${ctx.protocol}://${ctx.host}`).replace(/\/$/, '');
    // the URL is a secret: shown on this answer only, never in a redirect's location
    send(ctx, 201, page({ title: 'Hosted form', csrf: s.csrfToken, section: 'workflows' }, formCreatedBody({
      url: `${publicUrl}/forms/${created.token}`, triggerId: trigger.id, workflowId: trigger.workflowId, wait,
    })));
  });
  router.post('/triggers/:id/forms/:formId/revoke', session, audited(apiAction('DELETE', '/api/v1/triggers/:id/forms/:formId'), 'trigger_form', { param: 'formId' }), parseForm, csrf, async (ctx) => {
    const trigger = await ownTrigger(ctx);
    if (!trigger) return;
    if (!(await deps.console?.forms.revoke(trigger.orgId, trigger.id, String(ctx.params.formId ?? '')))) return refusePage(ctx, 404, 'No such form', 'This trigger has no live form with that ID.');
    redirect(ctx, trigger.workflowId, 'form-revoked');
  });
  for (const [action, paused] of [['pause', true], ['resume', false]] as const) {
    router.post(`/triggers/:id/schedule/${action}`, session, audited(apiAction('POST', `/api/v1/triggers/:id/schedule/${action}`), 'trigger', { param: 'id' }), parseForm, csrf, async (ctx) => {
      const trigger = await ownTrigger(ctx);
      if (!trigger) return;
      const changed = await callTemporal(() => triggers.setPaused(trigger.orgId, trigger.id, paused, null));
      if (!changed.ok) return refusePage(ctx, 404, 'No schedule', 'This trigger has no schedule.');
      redirect(ctx, trigger.workflowId, paused ? 'paused' : 'resumed');
    });
  }
}
