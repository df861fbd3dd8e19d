/**
 * The console's alert rules (docs/console.md "Alert rules"), admins only (org.manage, as
 * `/api/v1/alerts`): list, create, edit, enable and disable, delete, and a rule's recent
 * deliveries (its `alert.delivered` and `alert.delivery_failed` audit records). The same service
 * as the API (AlertAdmin, src/management/alerts.ts), the same body schema (AlertRuleBodySchema, read
 * from the form by src/console/alert-form.ts), audited under the API's action names.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { alertFormOf, alertFormValues, alertRefusalField, readAlertForm, type AlertFormField, type AlertFormValues } from '../../console/alert-form';
import type { AlertRuleView } from '../../contracts/alert-bodies';
import { roleHas } from '../../people/roles';
import { permissionDenied } from '../auth';
import type { GatewayDeps } from '../deps';
import { noteForAudit } from '../console/audit';
import { alertFormBody, alertsBody, deliveriesSection, type AlertDeliveryRow } from '../console/alert-views';
import { consoleState, refusePage } from '../console/guard';
import { html } from '../console/html';
import type { ConsoleRouteKit } from '../console/kit';
import { page, send } from '../console/layout';
import { refusalStatus } from '../management-status';

/** A rule's recent deliveries: its newest `alert.*` records. */
const DELIVERIES = 20;
const NOTICES: Record<string, string> = {
  created: 'The alert rule was created.', saved: 'The alert rule was saved.', enabled: 'The alert rule is enabled.', disabled: 'The alert rule is disabled: it delivers nothing until enabled.',
  deleted: 'The alert rule was deleted.',
};

export function consoleAlertRoutes(router: Router, deps: GatewayDeps, kit: ConsoleRouteKit): void {
  const { session, csrf, audited, apiAction, parseForm } = kit;
  const { alerts } = deps.management;
  /** A page of the family: the session's role must hold org.manage (a refusal says why, as the actions'). */
  const admin = (ctx: Context): { orgId: string; csrfToken: string } => {
    const { session: s } = consoleState(ctx);
    if (!roleHas(s.role, 'org.manage')) throw permissionDenied(s, 'org.manage');
    return s;
  };

  const formPage = async (ctx: Context, status: number, values: AlertFormValues, errors: Partial<Record<AlertFormField, string>>, rule?: AlertRuleView, notice?: string): Promise<void> => {
    const s = admin(ctx);
    const [workflows, connections, triggers] = await Promise.all([
      deps.registry.workflows.list(s.orgId), deps.registry.connections.list(s.orgId, 'mail'), deps.registry.triggers.list(s.orgId),
    ]);
    const body = alertFormBody({
      csrf: s.csrfToken, values, errors, ...(rule ? { rule: { id: rule.id, name: rule.name } } : {}), ...(notice ? { notice } : {}),
      workflows: workflows.map((w) => ({ id: w.id, name: `${w.name} (${w.id})` })),
      mailConnections: connections.map((c) => ({ id: c.id, name: c.name ? `${c.name} (${c.id})` : c.id })),
      triggers: triggers.map((t) => ({ id: t.id, name: t.name ? `${t.name} (${t.id})` : t.id })),
    });
    let deliveries = html``;
    if (rule) {
      const { records } = await deps.audit.list(s.orgId, { action: 'alert.', target: `alert_rule:${rule.id}` }, DELIVERIES);
      const rows: AlertDeliveryRow[] = records.filter((r) => r.action === 'alert.delivered' || r.action === 'alert.delivery_failed').map((r) => ({ at: r.at, action: r.action, details: r.details }));
      deliveries = deliveriesSection(rows);
    }
    send(ctx, status, page({ title: rule ? rule.name : 'New alert rule', csrf: s.csrfToken, section: 'alerts' }, html`${body}${deliveries}`));
  };

  const listPage = async (ctx: Context, status: number, extra: { notice?: string; error?: string } = {}): Promise<void> => {
    const s = admin(ctx);
    send(ctx, status, page({ title: 'Alert rules', csrf: s.csrfToken, section: 'alerts' }, alertsBody({ rules: await alerts.list(s.orgId), csrf: s.csrfToken, ...extra })));
  };
  const done = (ctx: Context, to: string, what: string): void => {
    ctx.status = 303;
    ctx.redirect(`${to}?done=${what}`);
  };
  const noticeOf = (ctx: Context): { notice?: string } => {
    const notice = typeof ctx.query.done === 'string' ? NOTICES[ctx.query.done] : undefined;
    return notice ? { notice } : {};
  };
  /** The organization's rule, or a 404 page (another organization's looks missing). */
  const ownRule = async (ctx: Context): Promise<AlertRuleView | undefined> => {
    const found = await alerts.get(admin(ctx).orgId, String(ctx.params.id ?? ''));
    if (!found.ok) refusePage(ctx, 404, 'No such alert rule', 'This organization has no alert rule with that ID.');
    return found.ok ? found.value : undefined;
  };

  router.get('/alerts', session, async (ctx) => listPage(ctx, 200, noticeOf(ctx)));
  router.get('/alerts/new', session, async (ctx) => formPage(ctx, 200, { kind: 'run_failed', destination: 'webhook', enabled: 'true' }, {}));
  router.post('/alerts/new', session, audited(apiAction('POST', '/api/v1/alerts'), 'alert_rule', { noteTarget: 'id' }), parseForm, csrf, async (ctx) => {
    const values = alertFormValues(ctx.request.body);
    const form = readAlertForm(values);
    if (!form.ok) return formPage(ctx, 400, values, form.errors);
    noteForAudit(ctx, { name: form.body.name, kind: form.body.condition.kind });
    const created = await alerts.create(admin(ctx).orgId, form.body);
    if (!created.ok) return formPage(ctx, refusalStatus(created), values, { [alertRefusalField(created.code, created.message)]: created.message });
    noteForAudit(ctx, { id: created.value.id });
    done(ctx, `/console/alerts/${encodeURIComponent(created.value.id)}`, 'created');
  });

  router.get('/alerts/:id', session, async (ctx) => {
    const rule = await ownRule(ctx);
    if (!rule) return;
    await formPage(ctx, 200, alertFormOf(rule), {}, rule, noticeOf(ctx).notice);
  });
  const updated = apiAction('PUT', '/api/v1/alerts/:id');
  router.post('/alerts/:id', session, audited(updated, 'alert_rule', { param: 'id' }), parseForm, csrf, async (ctx) => {
    const rule = await ownRule(ctx);
    if (!rule) return;
    const values = alertFormValues(ctx.request.body);
    const form = readAlertForm(values);
    if (!form.ok) return formPage(ctx, 400, values, form.errors, rule);
    noteForAudit(ctx, { name: form.body.name, kind: form.body.condition.kind, enabled: form.body.enabled });
    const saved = await alerts.replace(admin(ctx).orgId, rule.id, form.body);
    if (!saved.ok) return formPage(ctx, refusalStatus(saved), values, { [alertRefusalField(saved.code, saved.message)]: saved.message }, rule);
    done(ctx, `/console/alerts/${encodeURIComponent(rule.id)}`, 'saved');
  });
  for (const enabled of [true, false]) {
    router.post(`/alerts/:id/${enabled ? 'enable' : 'disable'}`, session, audited(updated, 'alert_rule', { param: 'id' }), parseForm, csrf, async (ctx) => {
      const rule = await ownRule(ctx);
      if (!rule) return;
      noteForAudit(ctx, { name: rule.name, kind: rule.kind, enabled });
      const saved = await alerts.replace(admin(ctx).orgId, rule.id, { name: rule.name, condition: rule.condition, destination: rule.destination, enabled });
      if (!saved.ok) return listPage(ctx, refusalStatus(saved), { error: saved.message });
      done(ctx, '/console/alerts', enabled ? 'enabled' : 'disabled');
    });
  }
  router.post('/alerts/:id/delete', session, audited(apiAction('DELETE', '/api/v1/alerts/:id'), 'alert_rule', { param: 'id' }), parseForm, csrf, async (ctx) => {
    const removed = await alerts.remove(admin(ctx).orgId, String(ctx.params.id ?? ''));
    if (!removed.ok) {
      refusePage(ctx, 404, 'No such alert rule', 'This organization has no alert rule with that ID.');
      return;
    }
    done(ctx, '/console/alerts', 'deleted');
  });
}
