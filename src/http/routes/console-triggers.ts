/**
 * A trigger's page in the console (docs/webhooks.md#in-the-console): the preset of a verified
 * trigger and its options, how many secrets it holds, its debounce or batch, its last deliveries
 * (verified, or refused with the reason), and replacing its secrets (a rotation) with the same
 * service, permission and audit action as `PUT /api/v1/triggers/{id}/verify/secrets`. Added to the
 * console's router by console-pages.ts.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { TriggerRecord } from '../../registry';
import { SecretsSchema } from '../../triggers/webhooks/config';
import type { GatewayDeps } from '../deps';
import { noteForAudit } from '../console/audit';
import { consoleState, refusePage } from '../console/guard';
import type { ConsoleRouteKit } from '../console/kit';
import { page, send } from '../console/layout';
import { triggerBody } from '../console/trigger-views';
import { formOf } from '../validate';

const NOTICES: Record<string, string> = {
  secrets: 'The secrets were replaced. They are not shown again.',
};
const SecretsFormSchema = z.object({ secret: z.string(), previousSecret: z.string().optional() });
const DELIVERIES_SHOWN = 20;

export function consoleTriggerRoutes(router: Router, deps: GatewayDeps, kit: ConsoleRouteKit): void {
  const { session, csrf, audited, apiAction, parseForm } = kit;
  const { triggers } = deps.management;

  /** The session's organization's trigger, or a 404 page. */
  const ownTrigger = async (ctx: Context): Promise<TriggerRecord | undefined> => {
    const trigger = await triggers.own(consoleState(ctx).session.orgId, String(ctx.params.id ?? ''));
    if (trigger.ok) return trigger.value;
    refusePage(ctx, 404, 'No such trigger', 'This organization has no trigger with that ID.');
    return undefined;
  };

  const triggerPage = async (ctx: Context, trigger: TriggerRecord, status: number, extra: { notice?: string; error?: string } = {}): Promise<void> => {
    const { session: s } = consoleState(ctx);
    const [workflow, stored, deliveries] = await Promise.all([
      deps.registry.workflows.get(s.orgId, trigger.workflowId),
      trigger.verify ? deps.registry.triggerWebhooks.secrets(trigger.id) : Promise.resolve(undefined),
      deps.webhooks ? deps.webhooks.deliveries(trigger.orgId, trigger.id, DELIVERIES_SHOWN) : Promise.resolve([]),
    ]);
    const publicUrl = deps.config.publicUrl ?? `${ctx.protocol}://${ctx.host}`;
    send(ctx, status, page({ title: `Trigger ${trigger.name ?? trigger.id}`, csrf: s.csrfToken, section: 'workflows' }, triggerBody({
      trigger, workflowName: workflow?.name, publicUrl, csrf: s.csrfToken, deliveries,
      ...(stored && stored.sealed.length > 0 ? { secrets: { count: stored.sealed.length, updatedAt: stored.updatedAt } } : {}),
      ...extra,
    })));
  };

  router.get('/triggers/:id', session, async (ctx) => {
    const trigger = await ownTrigger(ctx);
    if (!trigger) return;
    const notice = typeof ctx.query.done === 'string' && Object.hasOwn(NOTICES, ctx.query.done) ? NOTICES[ctx.query.done] : undefined;
    await triggerPage(ctx, trigger, 200, notice ? { notice } : {});
  });

  router.post('/triggers/:id/secrets', session, audited(apiAction('PUT', '/api/v1/triggers/:id/verify/secrets'), 'trigger', { param: 'id' }), parseForm, csrf, async (ctx) => {
    const trigger = await ownTrigger(ctx);
    if (!trigger) return;
    if (!trigger.verify || !deps.webhooks) return triggerPage(ctx, trigger, 409, { error: 'This trigger verifies no signature: it has no secrets to replace.' });
    const form = SecretsFormSchema.safeParse(formOf(ctx));
    if (!form.success) return triggerPage(ctx, trigger, 400, { error: 'The form was not understood.' });
    const given = [form.data.secret, form.data.previousSecret ?? ''].filter((v) => v !== '');
    const secrets = SecretsSchema.safeParse(given);
    // the reason names the rule, never the value given
    if (!secrets.success) return triggerPage(ctx, trigger, 400, { error: `The secrets were not replaced: ${secrets.error.issues.map((i) => i.message).join('; ')}.` });
    if (!(await deps.webhooks.replaceSecrets(trigger.orgId, trigger.id, secrets.data))) {
      return refusePage(ctx, 404, 'No such trigger', 'This organization has no verified trigger with that ID.');
    }
    noteForAudit(ctx, { secrets: secrets.data.length });
    ctx.status = 303;
    ctx.redirect(`/console/triggers/${encodeURIComponent(trigger.id)}?done=secrets`);
  });
}
