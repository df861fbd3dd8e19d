/**
 * Each organization's Standard Webhooks signing secret (completion callbacks). Stored sealed: the
 * registry holds ciphertext only, opened by src/runs/webhook-secrets.ts with the connection key.
 */
import type { Kysely } from 'kysely';
import type { Database } from './db';
import { nowIso } from './store-support';

export interface WebhookSecretRecord {
  orgId: string;
  /** sealed */
  secret: string;
  /** sealed; the secret before the last rotation */
  previousSecret: string | null;
  createdAt: string;
  rotatedAt: string | null;
}

export class WebhookSecretStore {
  constructor(private readonly db: Kysely<Database>) {}

  async get(orgId: string): Promise<WebhookSecretRecord | undefined> {
    const row = await this.db.selectFrom('webhook_secrets').selectAll().where('org_id', '=', orgId).executeTakeFirst();
    return row && {
      orgId: row.org_id, secret: row.secret, previousSecret: row.previous_secret, createdAt: row.created_at, rotatedAt: row.rotated_at,
    };
  }

  /** Writes the organization's first secret; a concurrent first write wins and this one changes nothing. */
  async createIfAbsent(orgId: string, sealed: string): Promise<void> {
    await this.db.insertInto('webhook_secrets')
      .values({ org_id: orgId, secret: sealed, previous_secret: null, created_at: nowIso(), rotated_at: null })
      .onConflict((oc) => oc.column('org_id').doNothing())
      .execute();
  }

  /** Replaces the secret; the replaced one is kept as `previousSecret`. */
  async rotate(orgId: string, sealed: string, previousSealed: string): Promise<void> {
    await this.db.updateTable('webhook_secrets')
      .set({ secret: sealed, previous_secret: previousSealed, rotated_at: nowIso() })
      .where('org_id', '=', orgId)
      .execute();
  }
}
