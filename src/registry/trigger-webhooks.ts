/**
 * Verified triggers' sealed signing secrets and their last deliveries (issue 51). The secrets are
 * ciphertext here (opened by src/triggers/webhooks/secrets.ts with the connection key) and read
 * fresh on every delivery, so a rotation counts at once on every replica.
 */
import type { Kysely } from 'kysely';
import { newId } from '../crypto/secrets';
import type { Database } from './db';
import { fromJson, nowIso } from './store-support';

/** Deliveries kept per trigger (the newest). */
export const KEPT_DELIVERIES = 50;

export type DeliveryOutcome = 'verified' | 'refused' | 'ignored' | 'answered' | 'queued';

export interface TriggerDeliveryRecord {
  id: string;
  triggerId: string;
  at: string;
  outcome: DeliveryOutcome;
  reason: string | null;
  deliveryId: string | null;
  runId: string | null;
}

export interface NewTriggerDelivery {
  outcome: DeliveryOutcome;
  reason?: string | null;
  deliveryId?: string | null;
  runId?: string | null;
}

export class TriggerWebhookStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** The sealed secrets of the trigger, newest first; undefined when it has none. */
  async secrets(triggerId: string): Promise<{ sealed: string[]; updatedAt: string } | undefined> {
    const row = await this.db.selectFrom('trigger_secrets').select(['secrets', 'updated_at']).where('trigger_id', '=', triggerId).executeTakeFirst();
    return row && { sealed: fromJson<string[]>(row.secrets), updatedAt: row.updated_at };
  }

  /** Replaces the organization's trigger's secrets; false when it has no such verified trigger. */
  async replaceSecrets(orgId: string, triggerId: string, sealed: string[]): Promise<boolean> {
    const result = await this.db.updateTable('trigger_secrets').set({ secrets: JSON.stringify(sealed), updated_at: nowIso() })
      .where('trigger_id', '=', triggerId).where('org_id', '=', orgId).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Records one delivery and keeps only the newest KEPT_DELIVERIES of the trigger. */
  async recordDelivery(orgId: string, triggerId: string, delivery: NewTriggerDelivery): Promise<void> {
    await this.db.insertInto('trigger_deliveries').values({
      id: newId('dlv'), trigger_id: triggerId, org_id: orgId, at: nowIso(), outcome: delivery.outcome,
      reason: delivery.reason ?? null, delivery_id: delivery.deliveryId ?? null, run_id: delivery.runId ?? null,
    }).execute();
    const oldest = await this.db.selectFrom('trigger_deliveries').select('at').where('trigger_id', '=', triggerId)
      .orderBy('at', 'desc').offset(KEPT_DELIVERIES).limit(1).executeTakeFirst();
    if (oldest) await this.db.deleteFrom('trigger_deliveries').where('trigger_id', '=', triggerId).where('at', '<=', oldest.at).execute();
  }

  /** The organization's trigger's last deliveries, newest first. */
  async deliveries(orgId: string, triggerId: string, limit = KEPT_DELIVERIES): Promise<TriggerDeliveryRecord[]> {
    const rows = await this.db.selectFrom('trigger_deliveries').selectAll()
      .where('trigger_id', '=', triggerId).where('org_id', '=', orgId)
      .orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map((r) => ({
      id: r.id, triggerId: r.trigger_id, at: r.at, outcome: toOutcome(r.outcome), reason: r.reason, deliveryId: r.delivery_id, runId: r.run_id,
    }));
  }
}

const OUTCOMES: readonly DeliveryOutcome[] = ['verified', 'refused', 'ignored', 'answered', 'queued'];
function toOutcome(text: string): DeliveryOutcome {
  return OUTCOMES.find((o) => o === text) ?? 'refused';
}
