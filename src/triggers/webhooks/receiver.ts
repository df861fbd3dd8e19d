/**
 * A verified trigger's deliveries (issue 51, docs/webhooks.md): the service behind
 * `POST /ext/triggers/{id}` without an API key, for a trigger with `verify`. The HTTP layer
 * (src/http/webhook-delivery.ts) reads the raw body and asks, in order:
 *
 *   lookup   is the trigger verified (else the call is an ordinary API key call);
 *   verify   the signature over the raw bytes, against the secrets read fresh (a rotation counts
 *            at once); a refusal is recorded with the trigger's deliveries, audited and counted;
 *   deliver  after the body is parsed: a GitHub `ping`, a Slack `url_verification` and events the
 *            trigger does not take are answered without a run; else the run starts with the
 *            provider's delivery ID as its idempotency key (a redelivery answers the same run),
 *            or, for a debounced or batched trigger, the event joins its window.
 */
import type { AuditSource, AuditTrail } from '../../audit/audit-trail';
import type { Logger } from '../../observability/logger';
import type { NewTriggerDelivery, Registry, TriggerRecord } from '../../registry';
import type { RunStarts, TriggerRefusal, TriggerService } from '../../runs/trigger-service';
import { ShapeKeyError, ShapedEventTooLarge, type ShapeQueue } from '../shaping/shape-queue';
import { newTriggerId } from '../../registry';
import type { TriggerShaping } from '../../common/shaping';
import { StoredVerifySchema, verifyOptions, type BatchSchema, type DebounceSchema, type TriggerVerify, type VerifyChange, type VerifyInput } from './config';
import type { z } from 'zod';
import { deliveryIdOf, verifySignature, type RefusalCheck, type SignedCall, type Verdict } from './presets';
import type { TriggerSecrets } from './secrets';

/** A trigger with `verify`, as lookup found it. */
export interface VerifiedTrigger {
  trigger: TriggerRecord;
  verify: TriggerVerify;
}

export type DeliveryAnswer =
  /** answered without a run: a ping, a challenge, an event the trigger does not take */
  | { kind: 'answered'; status: 200; body: Record<string, unknown>; ignored: boolean; note: string }
  | { kind: 'started'; runId: string; automationId: string; replayed: boolean; deliveryId?: string }
  | { kind: 'queued'; mode: 'debounce' | 'batch'; key: string; eventId: string }
  /** the trigger refuses the call as an API key call would be refused (disabled, not published, inputs) */
  | { kind: 'refused'; refusal: TriggerRefusal }
  | { kind: 'invalid'; status: 413 | 422; code: string; message: string };

/** Counted per preset and outcome (flowgate_webhook_deliveries_total). */
export type DeliveryMeter = (preset: string, outcome: 'verified' | 'refused', check?: RefusalCheck) => void;

export interface WebhookReceiverDeps {
  registry: Registry;
  triggers: TriggerService;
  runs: RunStarts;
  queue: ShapeQueue;
  secrets: TriggerSecrets;
  audit: AuditTrail;
  meter?: DeliveryMeter;
  log: Pick<Logger, 'warn'>;
}

export const WEBHOOK_REFUSED = 'webhook.refused';

/** What POST /api/v1/triggers was given about verification and shaping. */
export interface TriggerWebhookParts {
  verify?: VerifyInput;
  debounce?: z.infer<typeof DebounceSchema>;
  batch?: z.infer<typeof BatchSchema>;
}

/** Who started a verified trigger's run (no API key did). */
export function webhookStarter(preset: string): string {
  return `webhook:${preset}`;
}

export class WebhookReceiver {
  constructor(private readonly deps: WebhookReceiverDeps) {}

  /** The trigger when it is verified; undefined for an API key trigger or none. */
  async lookup(triggerId: string): Promise<VerifiedTrigger | undefined> {
    if (triggerId === '') return undefined;
    const trigger = await this.deps.registry.triggers.get(triggerId);
    if (!trigger?.verify) return undefined;
    const verify = StoredVerifySchema.safeParse(trigger.verify);
    return verify.success ? { trigger, verify: verify.data } : undefined;
  }

  /** Checks the signature under the trigger's secrets as they are now. */
  async verify(hook: VerifiedTrigger, call: SignedCall): Promise<Verdict> {
    const stored = await this.deps.registry.triggerWebhooks.secrets(hook.trigger.id);
    if (!stored || stored.sealed.length === 0) return { ok: false, check: 'signature_mismatch', reason: 'the trigger holds no secret to verify with' };
    return verifySignature(hook.verify, this.deps.secrets.open(hook.trigger.id, stored.sealed), call);
  }

  /** A refused delivery: kept with the trigger's deliveries, audited and counted. Never throws. */
  async refused(hook: VerifiedTrigger, verdict: Extract<Verdict, { ok: false }>, source: AuditSource): Promise<void> {
    const { trigger, verify } = hook;
    this.deps.meter?.(verify.preset, 'refused', verdict.check);
    await this.record(trigger, { outcome: 'refused', reason: `${verdict.check}: ${verdict.reason}` });
    await this.deps.audit.record({
      orgId: trigger.orgId, action: WEBHOOK_REFUSED, target: { type: 'trigger', id: trigger.id }, status: 401, outcome: 'refused',
      details: { preset: verify.preset, check: verdict.check },
    }, { actor: 'webhook', actorName: null, credentialKind: 'webhook_signature', credentialId: `trigger:${trigger.id}` }, source);
  }

  /** A verified delivery whose body has been parsed (`inputs`); `textual`: form values the schema may convert. */
  async deliver(hook: VerifiedTrigger, call: { header: SignedCall['header']; headers: Record<string, string>; inputs: Record<string, unknown> | ''; textual: boolean }): Promise<DeliveryAnswer> {
    const { trigger, verify } = hook;
    this.deps.meter?.(verify.preset, 'verified');
    const deliveryId = deliveryIdOf(verify, call, call.inputs);
    const special = this.answerWithoutRun(verify, call.header, call.inputs);
    if (special) {
      await this.record(trigger, { outcome: special.ignored ? 'ignored' : 'answered', reason: special.note, deliveryId });
      return special;
    }
    const target = await this.deps.triggers.resolve(trigger.orgId, trigger.id);
    if (!target.ok) return this.refusedRun(trigger, target, deliveryId);
    if (trigger.shaping) {
      const answer = await this.enqueue(hook, call, deliveryId);
      if (answer.kind === 'queued') await this.record(trigger, { outcome: 'queued', reason: `${answer.mode} window ${answer.key || '(one per trigger)'}`, deliveryId });
      return answer;
    }
    const run = await this.deps.triggers.prepare(target, { inputs: call.inputs, coerce: call.textual, startedBy: webhookStarter(verify.preset) });
    if (!run.ok) return this.refusedRun(trigger, run, deliveryId);
    const started = await this.deps.triggers.start(this.deps.runs, run, deliveryId === undefined ? undefined : `delivery:${deliveryId}`);
    await this.record(trigger, { outcome: 'verified', deliveryId, runId: started.runId, reason: started.replayed ? 'a redelivery: the run it started before' : null });
    return { kind: 'started', runId: started.runId, automationId: run.input.automationId, replayed: started.replayed, deliveryId };
  }

  /**
   * A call to a debounced or batched trigger (verified or with an API key): its single-event run
   * input is checked against the input schema first, so an event answered 202 is one the run can
   * take; then it joins its window.
   */
  async enqueue(hook: Pick<VerifiedTrigger, 'trigger'>, call: { headers: Record<string, string>; inputs: Record<string, unknown> | '' }, eventId?: string): Promise<DeliveryAnswer> {
    const { trigger } = hook;
    if (!trigger.shaping) throw new Error(`trigger ${trigger.id} is not shaped`);
    const target = await this.deps.triggers.resolve(trigger.orgId, trigger.id);
    if (!target.ok) return { kind: 'refused', refusal: target };
    const mode = 'debounce' in trigger.shaping ? 'debounce' : 'batch';
    const probe = await this.deps.triggers.prepare(target, {
      inputs: { events: [{ id: eventId ?? 'probe', receivedAt: new Date().toISOString(), inputs: call.inputs }], shaping: { mode, key: '', count: 1 } },
      coerce: false, startedBy: webhookStarter('probe'),
    });
    if (!probe.ok) return { kind: 'refused', refusal: probe };
    await this.deps.triggers.discard(probe.storedKeys);
    try {
      const queued = await this.deps.queue.enqueue(trigger, trigger.shaping, { inputs: call.inputs, headers: call.headers, eventId });
      return { kind: 'queued', mode: queued.mode, key: queued.key, eventId: queued.eventId };
    } catch (err) {
      if (err instanceof ShapeKeyError) return { kind: 'invalid', status: 422, code: 'invalid_shape_key', message: err.message };
      if (err instanceof ShapedEventTooLarge) return { kind: 'invalid', status: 413, code: 'payload_too_large', message: err.message };
      throw err;
    }
  }

  /**
   * The registry fields of a new verified or shaped trigger: its ID drawn first, so that its
   * secrets are sealed bound to it; the options without the secrets; the shaping.
   */
  triggerFields(parts: TriggerWebhookParts): { id: string; verify: TriggerVerify | null; sealedSecrets?: string[]; shaping: TriggerShaping | null } {
    const id = newTriggerId();
    const shaping: TriggerShaping | null = parts.debounce ? { debounce: parts.debounce } : parts.batch ? { batch: parts.batch } : null;
    if (!parts.verify) return { id, verify: null, shaping };
    return { id, verify: verifyOptions(parts.verify), sealedSecrets: this.deps.secrets.seal(id, parts.verify.secrets), shaping };
  }

  /** `verify` of a change in place (PATCH): the options kept, the new secrets sealed bound to the trigger's ID when given. */
  changeFields(triggerId: string, verify: VerifyChange): { verify: TriggerVerify; sealedSecrets?: string[] } {
    const { secrets, ...options } = verify;
    return { verify: options, ...(secrets ? { sealedSecrets: this.deps.secrets.seal(triggerId, secrets) } : {}) };
  }

  /** The trigger's last deliveries (the console, the API). */
  deliveries(orgId: string, triggerId: string, limit?: number) {
    return this.deps.registry.triggerWebhooks.deliveries(orgId, triggerId, limit);
  }

  /** Replaces a verified trigger's secrets (one, or two during a rotation); false when the organization has no such verified trigger. */
  async replaceSecrets(orgId: string, triggerId: string, secrets: readonly string[]): Promise<boolean> {
    const trigger = await this.deps.registry.triggers.get(triggerId);
    if (!trigger || trigger.orgId !== orgId || !trigger.verify) return false;
    return this.deps.registry.triggerWebhooks.replaceSecrets(orgId, triggerId, this.deps.secrets.seal(triggerId, secrets));
  }

  /** A GitHub ping, a Slack URL verification, or an event outside the trigger's `events`. */
  private answerWithoutRun(verify: TriggerVerify, header: SignedCall['header'], inputs: Record<string, unknown> | ''): Extract<DeliveryAnswer, { kind: 'answered' }> | undefined {
    if (verify.preset === 'github') {
      const event = header('x-github-event') ?? '';
      if (event === 'ping') return { kind: 'answered', status: 200, body: { ok: true, event }, ignored: false, note: 'ping answered; no run' };
      if (verify.events && !verify.events.includes(event)) {
        const note = `event ${JSON.stringify(event.slice(0, 64))} is not one the trigger takes; no run`;
        return { kind: 'answered', status: 200, body: { ok: true, event, ignored: true, reason: note }, ignored: true, note };
      }
    }
    if (verify.preset === 'slack' && inputs !== '' && inputs.type === 'url_verification' && typeof inputs.challenge === 'string') {
      // Slack reads the challenge back from a JSON body of this one field
      return { kind: 'answered', status: 200, body: { challenge: inputs.challenge }, ignored: false, note: 'url_verification answered; no run' };
    }
    return undefined;
  }

  private async refusedRun(trigger: TriggerRecord, refusal: TriggerRefusal, deliveryId?: string): Promise<DeliveryAnswer> {
    await this.record(trigger, { outcome: 'refused', reason: `${refusal.code}: ${refusal.message}`.slice(0, 500), deliveryId });
    return { kind: 'refused', refusal };
  }

  private async record(trigger: TriggerRecord, delivery: NewTriggerDelivery): Promise<void> {
    await this.deps.registry.triggerWebhooks.recordDelivery(trigger.orgId, trigger.id, delivery).catch((error: unknown) => {
      this.deps.log.warn('could not record a webhook delivery', { triggerId: trigger.id, error });
    });
  }
}
