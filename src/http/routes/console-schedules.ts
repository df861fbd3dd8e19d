/**
 * Editing the inputs of an existing schedule in the console (docs/console.md "Workflows"):
 * `/console/triggers/{id}/schedule`, a form generated from the input schema of the workflow's
 * latest published version (the version the schedule's runs start with, and the one the inputs
 * are checked against), pre-filled with the schedule's inputs. Saved through the same service as
 * `PUT /api/v1/triggers/{id}/schedule` (TriggerAdmin.putScheduleInputs: the timing and pause state
 * kept, a new revision, the Temporal schedule's action converged), for roles holding
 * `triggers.write`, audited `schedule.set`. Inputs the schema refuses come back beside their fields
 * (422), what was typed kept; a secret field is never sent to the browser, and left blank it keeps
 * its stored value. Added to the console's router by console-pages.ts.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { TriggerRecord, TriggerScheduleRecord } from '../../registry';
import type { ManagementRefusal } from '../../management';
import { roleHas } from '../../people/roles';
import { isRecord } from '../../common/narrow';
import { permissionDenied } from '../auth';
import type { GatewayDeps } from '../deps';
import { HttpError } from '../http-error';
import { refusalStatus } from '../management-status';
import { callTemporal } from '../temporal-errors';
import { noteForAudit } from '../console/audit';
import { editedInputs, fieldTexts, formFields, type FormField } from '../console/form-fields';
import { consoleState, refusePage } from '../console/guard';
import type { ConsoleRouteKit } from '../console/kit';
import { page, send } from '../console/layout';
import { scheduleInputsBody } from '../console/schedule-views';
import { SCHEDULE_INPUT_PREFIX } from '../console/workflow-views';

interface Scheduled {
  trigger: TriggerRecord;
  schedule: TriggerScheduleRecord;
  workflowName: string;
  version: number | null;
  fields: FormField[];
}

/** A refusal of the inputs, each issue beside its field where the form has one, the rest in one sentence. */
function placedErrors(refusal: ManagementRefusal, fields: FormField[]): { errors: Record<string, string>; error?: string } {
  const named = new Set(fields.map((f) => f.name));
  const errors: Record<string, string> = {};
  const elsewhere: string[] = [];
  for (const issue of refusal.code === 'INVALID_INPUTS' ? refusal.issues ?? [] : []) {
    const [, name, ...rest] = issue.path;
    const where = rest.map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`)).join('');
    if (typeof name === 'string' && named.has(name)) errors[name] ??= `${where ? `${where.replace(/^\./, '')}: ` : ''}${issue.message}`;
    else elsewhere.push(`${typeof name === 'string' ? name : 'the inputs'}${where} ${issue.message}`);
  }
  if (Object.keys(errors).length === 0 && elsewhere.length === 0) return { errors, error: `The inputs were not saved: ${refusal.message}` };
  return { errors, ...(elsewhere.length ? { error: `The inputs were not saved: ${elsewhere.join('; ')}.` } : {}) };
}

export function consoleScheduleRoutes(router: Router, deps: GatewayDeps, kit: ConsoleRouteKit): void {
  const { session, csrf, audited, apiAction, parseForm } = kit;
  const { triggers } = deps.management;

  /** The form is offered only to a role that may save it (a GET by another is refused with the reason). */
  const mayWrite = (ctx: Context): void => {
    const { session: s } = consoleState(ctx);
    if (!roleHas(s.role, 'triggers.write')) throw permissionDenied(s, 'triggers.write');
  };
  /** The session's organization's trigger with its schedule and the fields of its input schema, or a 404 page. */
  const scheduled = async (ctx: Context): Promise<Scheduled | undefined> => {
    const { orgId } = consoleState(ctx).session;
    const trigger = await triggers.own(orgId, String(ctx.params.id ?? ''));
    if (!trigger.ok) return void refusePage(ctx, 404, 'No such trigger', 'This organization has no trigger with that ID.');
    const schedule = await deps.registry.schedules.get(orgId, trigger.value.id);
    if (!schedule) return void refusePage(ctx, 404, 'No schedule', 'This trigger has no schedule.');
    const { workflowId } = trigger.value;
    const [workflow, latest] = await Promise.all([deps.registry.workflows.get(orgId, workflowId), deps.registry.workflows.publishedVersionNumber(workflowId)]);
    const version = latest ? await deps.registry.workflows.getVersion(workflowId, latest) : undefined;
    return {
      trigger: trigger.value, schedule, workflowName: workflow?.name ?? workflowId, version: version?.version ?? null,
      fields: formFields(version?.definition.inputSchema).fields,
    };
  };
  const formPage = async (ctx: Context, status: number, s: Scheduled, values: Record<string, string>, placed: { errors: Record<string, string>; error?: string }): Promise<void> => {
    const { session: who } = consoleState(ctx);
    // Temporal's live state when it answers; the page is shown without it otherwise
    const state = await triggers.liveState(s.trigger.id).catch(() => undefined);
    send(ctx, status, page({ title: `Schedule inputs of ${s.trigger.name ?? s.trigger.id}`, csrf: who.csrfToken, section: 'workflows' }, scheduleInputsBody({
      csrf: who.csrfToken, trigger: s.trigger, workflowName: s.workflowName, schedule: s.schedule, version: s.version, fields: s.fields,
      values, ...placed, ...(state ? { state } : {}),
    })));
  };

  router.get('/triggers/:id/schedule', session, async (ctx) => {
    mayWrite(ctx);
    const s = await scheduled(ctx);
    if (s) await formPage(ctx, 200, s, fieldTexts(s.schedule.config.inputs ?? {}, s.fields), { errors: {} });
  });

  router.post('/triggers/:id/schedule', session, audited(apiAction('PUT', '/api/v1/triggers/:id/schedule'), 'trigger', { param: 'id' }), parseForm, csrf, async (ctx) => {
    const s = await scheduled(ctx);
    if (!s) return;
    const body = isRecord(ctx.request.body) ? ctx.request.body : {};
    const submitted = Object.fromEntries(Object.entries(body)
      .filter(([name]) => name.startsWith(SCHEDULE_INPUT_PREFIX)).map(([name, value]) => [name.slice(SCHEDULE_INPUT_PREFIX.length), value]));
    const inputs = editedInputs(submitted, s.fields, s.schedule.config.inputs ?? {});
    // the names of the inputs, never their values (a secret among them)
    noteForAudit(ctx, { workflowId: s.trigger.workflowId, inputs: Object.keys(inputs) });
    const typed = Object.fromEntries(Object.entries(submitted).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
    const again = (status: number, placed: { errors: Record<string, string>; error?: string }) => formPage(ctx, status, s, typed, placed);
    let saved;
    try {
      saved = await callTemporal(() => triggers.putScheduleInputs(s.trigger.orgId, s.trigger.id, inputs));
    } catch (err) {
      // Temporal unreachable: said on the page, as a refusal is (nothing was saved: the row was put back)
      if (!(err instanceof HttpError) || !err.expose) throw err;
      return again(err.status, { errors: {}, error: `The inputs were not saved: ${err.message}` });
    }
    if (!saved.ok) return again(refusalStatus(saved), placedErrors(saved, s.fields));
    ctx.status = 303;
    ctx.redirect(`/console/workflows/${encodeURIComponent(s.trigger.workflowId)}?done=inputs`);
  });
}
