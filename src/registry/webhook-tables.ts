/**
 * The tables of verified and shaped triggers (issue 51; migration 0021), apart from tables.ts so
 * that it stays one screenful per concern. Conventions as in db.ts.
 */

/** A verified trigger's signing secrets (src/triggers/webhooks/secrets.ts): sealed with the connection key, never in clear. */
export interface TriggerSecretsTable {
  trigger_id: string;
  org_id: string;
  /** JSON array of sealed secrets (one or two: two while a rotation is under way), the newest first */
  secrets: string;
  updated_at: string;
}

/** The last deliveries of a verified trigger (the console's trigger page): what came and how it was answered. */
export interface TriggerDeliveriesTable {
  id: string;
  trigger_id: string;
  org_id: string;
  at: string;
  /** verified | refused | ignored | answered (a ping, a challenge) | queued (a shaped trigger's window) */
  outcome: string;
  /** a refusal's check, or what was answered; never a secret or an expected signature */
  reason: string | null;
  delivery_id: string | null;
  run_id: string | null;
}
