/**
 * The management side of verified triggers (docs/webhooks.md): replace a trigger's secrets (a
 * rotation: the new one and the old one together, later the new one alone) and read its last
 * deliveries. The decisions are the WebhookReceiver's (src/triggers/webhooks/receiver.ts).
 */
import Router from '@koa/router';
import { z } from 'zod';
import { SecretsSchema } from '../../triggers/webhooks/config';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { notFound } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { adminOf, type GatewayRouter, type GatewayState } from '../state';
import { bodyOf, parseInput } from '../validate';

export const ReplaceSecretsSchema = z.object({ secrets: SecretsSchema }).strict();
export const DeliveriesQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(50).default(20) });

export function triggerWebhookRoutes(deps: GatewayDeps): GatewayRouter | undefined {
  const webhooks = deps.webhooks;
  if (!webhooks) return undefined;
  const router = new Router<GatewayState>({ prefix: '/api/v1' });
  router.use(requireAdmin(deps), jsonBody());
  router.put('/triggers/:id/verify/secrets', async (ctx) => {
    const { secrets } = parseInput(ReplaceSecretsSchema, bodyOf(ctx));
    if (!(await webhooks.replaceSecrets(adminOf(ctx).orgId, ctx.params.id ?? '', secrets))) throw notFound('unknown_trigger', `no verified trigger ${ctx.params.id}`);
    ctx.body = { id: ctx.params.id, secrets: secrets.length };
  });
  router.get('/triggers/:id/deliveries', async (ctx) => {
    const { limit } = parseInput(DeliveriesQuerySchema, ctx.query, 'invalid_query');
    const trigger = await deps.registry.triggers.get(ctx.params.id ?? '');
    if (!trigger || trigger.orgId !== adminOf(ctx).orgId) throw notFound('unknown_trigger', `no trigger ${ctx.params.id}`);
    ctx.body = { deliveries: await webhooks.deliveries(trigger.orgId, trigger.id, limit) };
  });
  return router;
}
