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
import { mount, on, type Operations } from '../operation';
import { admin as security, errors, id, json, jsonRequest } from '../openapi-kit';

export const ReplaceSecretsSchema = z.object({ secrets: SecretsSchema }).strict();
export const DeliveriesQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(50).default(20) });

const SecretsReplacedSchema = z.object({ id: z.string(), secrets: z.number().int().meta({ description: 'how many secrets the trigger now holds' }) }).meta({ id: 'TriggerSecretsReplaced' });
const DeliveriesSchema = z.object({
  deliveries: z.array(z.looseObject({
    id: z.string(), triggerId: z.string(), at: z.string(), outcome: z.enum(['verified', 'refused', 'ignored', 'answered', 'queued']).meta({ description: 'verified (a run started), refused (the reason names the check), ignored (an event the trigger does not take), answered (a ping, a challenge), queued (joined a debounce or batch window)' }),
    reason: z.string().nullable().meta({ description: 'the check that failed (never the expected value)' }),
    deliveryId: z.string().nullable(), runId: z.string().nullable(),
  })),
}).meta({ id: 'TriggerDeliveries' });
const trigger = id('id', 'a verified trigger');

export const TRIGGER_WEBHOOK_OPERATIONS = {
  replaceTriggerSecrets: {
    method: 'put', path: '/api/v1/triggers/:id/verify/secrets', permission: 'triggers.write', audit: on('trigger.secrets_replaced', 'trigger', 'id', ['secrets']),
    tags: ['triggers'], summary: 'Replace a verified trigger\'s signing secrets (rotation: the new and the old together, later the new alone)', security,
    requestParams: { path: trigger }, requestBody: jsonRequest(ReplaceSecretsSchema),
    responses: { '200': json(SecretsReplacedSchema, 'the secrets were replaced (never shown again)'), ...errors(400, 401, 403, 404, 415) },
  },
  listTriggerDeliveries: {
    method: 'get', path: '/api/v1/triggers/:id/deliveries', permission: 'read',
    tags: ['triggers'], summary: 'A trigger\'s last deliveries to its verified endpoint, verified or refused (with the reason)', security,
    requestParams: { path: trigger, query: DeliveriesQuerySchema },
    responses: { '200': json(DeliveriesSchema, 'the last deliveries, newest first'), ...errors(400, 401, 404) },
  },
} satisfies Operations;
const OPS = TRIGGER_WEBHOOK_OPERATIONS;

export function triggerWebhookRoutes(deps: GatewayDeps): GatewayRouter | undefined {
  const webhooks = deps.webhooks;
  if (!webhooks) return undefined;
  const router = new Router<GatewayState>({ prefix: '/api/v1' });
  router.use(requireAdmin(deps), jsonBody());
  mount(router, OPS.replaceTriggerSecrets, async (ctx) => {
    const { secrets } = parseInput(ReplaceSecretsSchema, bodyOf(ctx));
    if (!(await webhooks.replaceSecrets(adminOf(ctx).orgId, ctx.params.id ?? '', secrets))) throw notFound('unknown_trigger', `no verified trigger ${ctx.params.id}`);
    ctx.body = { id: ctx.params.id, secrets: secrets.length };
  });
  mount(router, OPS.listTriggerDeliveries, async (ctx) => {
    const { limit } = parseInput(DeliveriesQuerySchema, ctx.query, 'invalid_query');
    const trigger = await deps.registry.triggers.get(ctx.params.id ?? '');
    if (!trigger || trigger.orgId !== adminOf(ctx).orgId) throw notFound('unknown_trigger', `no trigger ${ctx.params.id}`);
    ctx.body = { deliveries: await webhooks.deliveries(trigger.orgId, trigger.id, limit) };
  });
  return router;
}
