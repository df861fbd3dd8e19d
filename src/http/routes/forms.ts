/**
 * Hosted forms (docs/console.md "Hosted forms"): `GET /forms/{token}` shows a form generated from
 * the trigger's workflow input schema; `POST /forms/{token}` takes its fields and files (multipart,
 * the API trigger's reader and limits) and starts a run through the trigger service, then answers
 * with a confirmation page, or the result for a form that waits. A revoked or unknown form URL is
 * a 404. The management API creates, lists and revokes a trigger's form URLs
 * (`/api/v1/triggers/{id}/forms`).
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { TRIGGER_LIMITS } from '../../attachments/limits';
import type { OpenedForm } from '../../console/forms';
import type { RunView } from '../../runs/run-service';
import type { TriggerRefusal } from '../../runs/trigger-service';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { HttpError, notFound } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { adminOf, type GatewayState } from '../state';
import { mount, on, type Operations } from '../operation';
import { admin as security, errors, id, json, jsonRequest, noContent } from '../openapi-kit';
import { callTemporal, isTemporalUnavailable } from '../temporal-errors';
import { readTriggerInputs, ATTACHMENTS_FIELD } from '../trigger-input';
import { parseInput } from '../validate';
import { fieldKinds, fieldsHtml, formFields } from '../console/form-fields';
import { href, html, type Html } from '../console/html';
import { page, send as sendPage } from '../console/layout';
import { statusBadge } from '../console/run-views';

export const CreateFormSchema = z.object({
  /** the form waits for the run's result (up to FLOWGATE_SYNC_WAIT_SECONDS) and shows it */
  wait: z.boolean().default(false),
}).strict();

export function formUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/$/, '')}/forms/${token}`;
}

function formBody(id: string, form: { id: string; triggerId: string; wait: boolean; createdAt: string; revokedAt: string | null }, url?: string) {
  return { id, triggerId: form.triggerId, wait: form.wait, createdAt: form.createdAt, revokedAt: form.revokedAt, ...(url ? { url } : {}) };
}

/** A hosted form's pages: their URL carries the form's secret, so no link of theirs sends it on as a referrer. */
function send(ctx: Context, status: number, document: Html): void {
  sendPage(ctx, status, document, { referrer: 'no-referrer' });
}

function notHere(ctx: Context): void {
  send(ctx, 404, page({ title: 'Form not found' }, html`<h1>Form not found</h1><p>This form does not exist or is no longer offered. Ask whoever sent you the link for a new one.</p>`));
}

function unavailable(ctx: Context, refusal: TriggerRefusal): void {
  send(ctx, 409, page({ title: 'Form unavailable' }, html`<h1>This form is not taking submissions now</h1><p>${refusal.message}</p>`));
}

function formPage(ctx: Context, opened: OpenedForm, status = 200, error?: string, values: Record<string, string> = {}): void {
  const { definition } = opened.version;
  const { fields, files } = formFields(definition.inputSchema);
  const title = opened.trigger.name ?? definition.name;
  send(ctx, status, page({ title }, html`<h1>${title}</h1>
${definition.description ? html`<p>${definition.description}</p>` : ''}
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" enctype="multipart/form-data">
${fieldsHtml(fields, files, values)}
<div class="actions"><button type="submit">Submit</button></div>
</form>`));
}

function resultPage(ctx: Context, deps: GatewayDeps, view: RunView): void {
  const ttl = deps.config.resultUrlTtlSeconds;
  const top = view.outcomes.filter((o) => o.stepPath === undefined);
  const last = top[top.length - 1];
  const body: Html = html`<h1>${view.status === 'COMPLETE' ? 'Done' : 'The run did not complete'}</h1>
<p>Status: ${statusBadge(view.status)} · reference <code>${view.runId}</code></p>
${view.error ? html`<p class="error">${view.error}</p>` : ''}
${last ? html`<h2>Result</h2><pre>${last.result}</pre>
<p><a href="${href(deps.signer.sign(last.files['output.txt'].key, ttl, { name: 'result.txt', type: last.files['output.txt'].mimeType }))}" download="result.txt">Download the result</a> (${last.files['output.txt'].size} bytes)</p>` : ''}`;
  send(ctx, 200, page({ title: 'Result' }, body));
}

/** Form text as the schema wants it: empty non-text fields are absent, JSON fields parsed (left as text when not JSON: the schema says why). */
function shaped(inputs: Record<string, unknown>, kinds: Map<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(inputs)) {
    const kind = kinds.get(name);
    if (value === '' && kind !== undefined && kind !== 'text' && kind !== 'textarea' && kind !== 'email' && kind !== 'url') continue;
    if (kind === 'json' && typeof value === 'string') {
      try {
        out[name] = JSON.parse(value);
        continue;
      } catch { /* kept as text */ }
    }
    out[name] = value;
  }
  return out;
}

function textValues(inputs: Record<string, unknown> | ''): Record<string, string> {
  if (inputs === '') return {};
  return Object.fromEntries(Object.entries(inputs).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

export function formRoutes(deps: GatewayDeps): Router | undefined {
  const forms = deps.console?.forms;
  if (!forms) return undefined;
  const router = new Router();

  router.get('/forms/:token', async (ctx) => {
    const opened = await forms.open(ctx.params.token ?? '');
    if (!opened) return notHere(ctx);
    if (!opened.ok) return unavailable(ctx, opened);
    formPage(ctx, opened);
  });

  router.post('/forms/:token', async (ctx) => {
    const opened = await forms.open(ctx.params.token ?? '');
    if (!opened) return notHere(ctx);
    if (!opened.ok) return unavailable(ctx, opened);
    let received;
    try {
      received = await readTriggerInputs(ctx, { multipart: true, blobs: deps.blobs, signer: deps.signer, orgId: opened.trigger.orgId, limits: TRIGGER_LIMITS });
    } catch (err) {
      if (err instanceof HttpError) return formPage(ctx, opened, err.status, err.message);
      throw err;
    }
    const { fields } = formFields(opened.version.definition.inputSchema);
    const inputs = received.inputs === '' ? '' : shaped(received.inputs, fieldKinds(fields));
    if (inputs !== '' && Array.isArray(inputs[ATTACHMENTS_FIELD]) && inputs[ATTACHMENTS_FIELD].length === 0) delete inputs[ATTACHMENTS_FIELD];
    let outcome;
    try {
      outcome = await callTemporal(() => forms.submit(opened, { inputs, storedKeys: received.storedKeys }, deps.config.syncWaitSeconds * 1000));
    } catch (err) {
      if (isTemporalUnavailable(err) || (err instanceof HttpError && err.status === 503)) {
        return formPage(ctx, opened, 503, 'The service is busy or unreachable right now; please try again in a minute.', textValues(received.inputs));
      }
      throw err;
    }
    if (!outcome.ok) return formPage(ctx, opened, outcome.code === 'INVALID_INPUTS' ? 422 : 409, outcome.message, textValues(received.inputs));
    if (outcome.done) return resultPage(ctx, deps, outcome.view);
    send(ctx, 200, page({ title: 'Received' }, html`<h1>Thank you</h1>
<p role="status">Your submission was received${opened.form.wait ? ' and is still being worked on' : ''}.</p>
<p>Reference: <code>${outcome.started.runId}</code></p>`));
  });

  return router;
}

const TriggerFormSchema = z.object({
  id: z.string(), triggerId: z.string(), wait: z.boolean(), createdAt: z.string(), revokedAt: z.string().nullable(),
}).meta({ id: 'TriggerForm' });

export const FORM_MANAGEMENT_OPERATIONS = {
  createTriggerForm: {
    method: 'post', path: '/api/v1/triggers/:id/forms', permission: 'triggers.write', audit: on('trigger_form.created', 'trigger', 'id'),
    tags: ['management'], security, requestParams: { path: id('id', 'a trigger') },
    summary: 'Offer the trigger as a hosted form: a new form URL (shown once; only its hash is kept)', requestBody: jsonRequest(CreateFormSchema),
    responses: { '201': json(TriggerFormSchema.extend({ url: z.string().meta({ description: 'the form URL; it needs no header' }) }), 'the form and its URL'), ...errors(400, 401, 404) },
  },
  listTriggerForms: {
    method: 'get', path: '/api/v1/triggers/:id/forms', permission: 'read',
    tags: ['management'], summary: 'The trigger\'s form URLs (without their secret), revoked ones included', security, requestParams: { path: id('id', 'a trigger') },
    responses: { '200': json(z.object({ forms: z.array(TriggerFormSchema) }), 'the forms'), ...errors(401, 404) },
  },
  revokeTriggerForm: {
    method: 'delete', path: '/api/v1/triggers/:id/forms/:formId', permission: 'triggers.write', audit: on('trigger_form.revoked', 'trigger_form', 'formId'),
    tags: ['management'], summary: 'Revoke a form URL: it answers 404 from now on', security, requestParams: { path: z.object({ id: z.string(), formId: z.string() }) },
    responses: { '204': noContent, ...errors(401, 404) },
  },
} satisfies Operations;
const OPS = FORM_MANAGEMENT_OPERATIONS;

/** The management API's side: an administrator creates, lists and revokes a trigger's form URLs. */
export function formManagementRoutes(deps: GatewayDeps): Router<GatewayState> | undefined {
  const forms = deps.console?.forms;
  if (!forms) return undefined;
  const api = new Router<GatewayState>({ prefix: '/api/v1' });
  api.use(requireAdmin(deps), jsonBody());
  mount(api, OPS.createTriggerForm, async (ctx) => {
    const { wait } = parseInput(CreateFormSchema, ctx.request.body ?? {});
    const created = await forms.create(adminOf(ctx).orgId, ctx.params.id ?? '', { wait });
    if (!created) throw notFound('unknown_trigger', `no trigger ${ctx.params.id}`);
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = formBody(created.form.id, created.form, formUrl(deps.config.publicUrl ?? `${ctx.protocol}://${ctx.host}`, created.token));
  });
  mount(api, OPS.listTriggerForms, async (ctx) => {
    const list = await forms.list(adminOf(ctx).orgId, ctx.params.id ?? '');
    if (!list) throw notFound('unknown_trigger', `no trigger ${ctx.params.id}`);
    ctx.body = { forms: list.map((f) => formBody(f.id, f)) };
  });
  mount(api, OPS.revokeTriggerForm, async (ctx) => {
    if (!(await forms.revoke(adminOf(ctx).orgId, ctx.params.id ?? '', ctx.params.formId ?? ''))) {
      throw notFound('unknown_form', `no form ${ctx.params.formId} of trigger ${ctx.params.id}`);
    }
    ctx.status = 204;
  });
  return api;
}
