/**
 * The HTTP face of verified and shaped triggers (issue 51, docs/webhooks.md); the decisions are
 * the WebhookReceiver's (src/triggers/webhooks/receiver.ts).
 *
 * A POST to `/ext/triggers/{id}` without X-API-KEY, for a trigger with `verify`: the body is read
 * whole as raw bytes (nothing parses it before the signature is checked over exactly those
 * bytes), then verified; a refusal is 401 `signature_refused` naming the check. A verified call
 * is parsed as a trigger body (JSON or form) and answered: 200 for a ping or a challenge, 202
 * naming the run (a redelivery names the same run, `Idempotent-Replayed: true`), or 202 naming
 * the event's window on a debounced or batched trigger. A call to a shaped trigger with an API
 * key is answered 202 the same way (answerShapedCall).
 */
import type { Context } from 'koa';
import { z } from 'zod';
import { TRIGGER_LIMITS } from '../attachments/limits';
import { discardRequest } from '../attachments/receive-multipart';
import type { TriggerRecord } from '../registry';
import type { TriggerRefusalCode } from '../runs/trigger-service';
import type { DeliveryAnswer, VerifiedTrigger } from '../triggers/webhooks/receiver';
import type { GatewayDeps } from './deps';
import { HttpError, refusalError, temporalUnavailable, type RefusalStatus } from './http-error';
import { BodyTooLargeError, IncompleteBodyError, readBoundedBody } from './read-body';
import type { AuditSource } from '../audit/audit-trail';
import { isTemporalUnavailable } from './temporal-errors';
import { inputsFromRawBody } from './trigger-input';

/** A verified delivery's run (202): started, or the first delivery's run for a redelivery (`replayed`). */
export const VerifiedRunAcceptedSchema = z.object({
  runId: z.string(),
  automationId: z.string(),
  replayed: z.boolean().meta({ description: 'true: a redelivery (the same delivery ID), answered with the run the first delivery started (header Idempotent-Replayed: true)' }),
  deliveryId: z.string().optional().meta({ description: 'the provider\'s delivery ID, the run\'s idempotency key' }),
}).meta({ id: 'VerifiedRunAccepted', description: 'a verified call (no API key, the sender\'s signature checked) started its run, or a redelivery named the run of the first (docs/webhooks.md)' });

/** A call to a debounced or batched trigger (202): its event is in its window, held by Temporal. */
export const ShapedEventAcceptedSchema = z.object({
  accepted: z.literal(true),
  eventId: z.string().meta({ description: 'the delivery ID, the Idempotency-Key, or a drawn UUID (also in X-Pf-Event-Id)' }),
  shaping: z.object({ mode: z.enum(['debounce', 'batch']), key: z.string().meta({ description: 'the window\'s key (empty: one window per trigger)' }) }),
}).meta({ id: 'ShapedEventAccepted', description: 'the event joined its debounce or batch window; its run starts when the window closes, with the window\'s events in order (docs/webhooks.md#debounce-and-batch)' });

/** A verified call answered without a run (200): a GitHub ping, an event the trigger does not take, a Slack url_verification. */
export const WebhookAnsweredSchema = z.union([
  z.object({ ok: z.literal(true), event: z.string(), ignored: z.boolean().optional(), reason: z.string().optional() }),
  z.object({ challenge: z.string() }),
]).meta({ id: 'WebhookAnswered', description: 'a verified call answered without a run: a GitHub ping ({ok, event}), an event outside the trigger\'s events ({ok, event, ignored, reason}), a Slack url_verification ({challenge})' });

/** The trigger service's refusals as statuses: the trigger routes' and the verified deliveries' one table. */
export const TRIGGER_REFUSAL_STATUS: RefusalStatus<TriggerRefusalCode> = {
  UNKNOWN_TRIGGER: { status: 404, code: 'unknown_trigger' },
  NOT_PUBLISHED: { status: 409, code: 'not_published' },
  DISABLED: { status: 409, code: 'trigger_disabled' },
  INVALID_INPUTS: { status: 422, code: 'invalid_inputs' },
  INVALID_INPUT_SCHEMA: { status: 409, code: 'invalid_input_schema' },
};

/** Request headers with names in lower case, one value each (repeats joined as Node joins them). */
function headersOf(ctx: Context): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(ctx.headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** As the audit middleware's sourceOf, for a plain Koa context. */
function sourceOf(ctx: Context): AuditSource {
  const requestId: unknown = ctx.state.requestId;
  return { sourceIp: ctx.request.ip || null, userAgent: ctx.get('User-Agent') || null, requestId: requestId === undefined ? null : String(requestId) };
}

async function readRaw(ctx: Context): Promise<Buffer> {
  const encoding = (ctx.get('Content-Encoding') || 'identity').trim().toLowerCase();
  if (encoding !== 'identity') {
    discardRequest(ctx.req);
    throw new HttpError(415, 'unsupported_media_type', `content encoding ${JSON.stringify(encoding.slice(0, 40))} is not accepted; send the body uncompressed`);
  }
  try {
    return await readBoundedBody(ctx.req, TRIGGER_LIMITS.bodyBytes);
  } catch (err) {
    if (err instanceof BodyTooLargeError) throw new HttpError(413, 'payload_too_large', `the body is larger than the limit of ${TRIGGER_LIMITS.bodyBytes} bytes`);
    if (err instanceof IncompleteBodyError) throw new HttpError(400, 'incomplete_body', err.message);
    throw err;
  }
}

function answer(ctx: Context, outcome: DeliveryAnswer): void {
  switch (outcome.kind) {
    case 'answered':
      ctx.status = outcome.status;
      ctx.body = outcome.body;
      return;
    case 'started':
      if (outcome.replayed) ctx.set('Idempotent-Replayed', 'true');
      ctx.set('X-Pf-Run-Id', outcome.runId);
      ctx.set('X-Pf-Automation-Id', outcome.automationId);
      ctx.status = 202;
      ctx.body = { runId: outcome.runId, automationId: outcome.automationId, replayed: outcome.replayed, ...(outcome.deliveryId ? { deliveryId: outcome.deliveryId } : {}) } satisfies z.infer<typeof VerifiedRunAcceptedSchema>;
      return;
    case 'queued':
      ctx.set('X-Pf-Event-Id', outcome.eventId);
      ctx.status = 202;
      ctx.body = { accepted: true, eventId: outcome.eventId, shaping: { mode: outcome.mode, key: outcome.key } } satisfies z.infer<typeof ShapedEventAcceptedSchema>;
      return;
    case 'refused':
      throw refusalError(TRIGGER_REFUSAL_STATUS, outcome.refusal);
    case 'invalid':
      throw new HttpError(outcome.status, outcome.code, outcome.message);
  }
}

async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw isTemporalUnavailable(err) ? temporalUnavailable() : err;
  }
}

async function deliver(ctx: Context, deps: GatewayDeps, hook: VerifiedTrigger): Promise<void> {
  const receiver = deps.webhooks;
  if (!receiver) return;
  const raw = await readRaw(ctx);
  const header = (name: string): string | undefined => ctx.get(name) || undefined;
  const verdict = await receiver.verify(hook, { raw, header, now: Date.now() });
  if (!verdict.ok) {
    await receiver.refused(hook, verdict, sourceOf(ctx));
    throw new HttpError(401, 'signature_refused', `${verdict.check}: ${verdict.reason}`);
  }
  const { inputs, textual } = inputsFromRawBody(ctx, raw);
  answer(ctx, await guarded(() => receiver.deliver(hook, { header, headers: headersOf(ctx), inputs, textual })));
}

/**
 * Answers the call when it is one for a verified trigger (a POST without X-API-KEY to a trigger
 * with `verify`); false when it is an ordinary API key call.
 */
export async function answerVerifiedCall(ctx: Context, deps: GatewayDeps): Promise<boolean> {
  if (!deps.webhooks || ctx.method !== 'POST' || ctx.get('X-API-KEY') !== '') return false;
  const hook = await deps.webhooks.lookup(String(ctx.params.triggerId ?? ''));
  if (!hook) return false;
  await deliver(ctx, deps, hook);
  return true;
}

/** A call with an API key to a debounced or batched trigger: its event joins its window (202). */
export async function answerShapedCall(ctx: Context, deps: GatewayDeps, trigger: TriggerRecord, inputs: Record<string, unknown> | '', idempotencyKey?: string): Promise<void> {
  if (!deps.webhooks) throw new HttpError(501, 'not_available', 'this gateway cannot queue shaped calls');
  const receiver = deps.webhooks;
  answer(ctx, await guarded(() => receiver.enqueue({ trigger }, { headers: headersOf(ctx), inputs }, idempotencyKey)));
}
