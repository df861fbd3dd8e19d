/**
 * Standard Webhooks signing secrets of completion callbacks, one per organization: created on
 * first use (or first read through the management API), sealed at rest with the connection key,
 * rotated on request. After a rotation the previous secret keeps signing beside the new one for
 * PREVIOUS_SECRET_GRACE_MS (the header then carries two `v1,` signatures), so receivers can switch
 * without dropping deliveries.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Registry, WebhookSecretRecord } from '../registry';
import type { ConnectionCipher } from '../crypto/connection-cipher';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

export interface WebhookSecretView {
  secret: string;
  createdAt: string;
  rotatedAt: string | null;
  /** until when the previous secret still signs too (after a rotation) */
  previousSignsUntil: string | null;
}

function newSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

export class WebhookSecrets {
  constructor(private readonly registry: Registry, private readonly cipher: ConnectionCipher, private readonly now: () => number = Date.now) {}

  /** The organization's secret, created when it has none yet. */
  async read(orgId: string): Promise<WebhookSecretView> {
    const record = await this.record(orgId);
    return this.view(record);
  }

  /** A new secret; the previous one keeps signing for PREVIOUS_SECRET_GRACE_MS. */
  async rotate(orgId: string): Promise<WebhookSecretView> {
    const current = await this.record(orgId);
    await this.registry.webhookSecrets.rotate(orgId, this.cipher.seal(newSecret(), binding(orgId)), current.secret);
    return this.read(orgId);
  }

  /** The `webhook-signature` header value for one delivery attempt. */
  async sign(orgId: string, messageId: string, timestamp: Date, body: string): Promise<string> {
    const record = await this.record(orgId);
    const secrets = [this.cipher.open(record.secret, binding(orgId))];
    if (record.previousSecret && record.rotatedAt && Date.parse(record.rotatedAt) + PREVIOUS_SECRET_GRACE_MS > this.now()) {
      secrets.push(this.cipher.open(record.previousSecret, binding(orgId)));
    }
    return secrets.map((secret) => new Webhook(secret).sign(messageId, timestamp, body)).join(' ');
  }

  private async record(orgId: string): Promise<WebhookSecretRecord> {
    const existing = await this.registry.webhookSecrets.get(orgId);
    if (existing) return existing;
    await this.registry.webhookSecrets.createIfAbsent(orgId, this.cipher.seal(newSecret(), binding(orgId)));
    const created = await this.registry.webhookSecrets.get(orgId);
    if (!created) throw new Error(`organization ${orgId} has no webhook secret after creating one`);
    return created;
  }

  private view(record: WebhookSecretRecord): WebhookSecretView {
    const previousSignsUntil = record.previousSecret && record.rotatedAt ? Date.parse(record.rotatedAt) + PREVIOUS_SECRET_GRACE_MS : undefined;
    return {
      secret: this.cipher.open(record.secret, binding(record.orgId)),
      createdAt: record.createdAt,
      rotatedAt: record.rotatedAt,
      previousSignsUntil: previousSignsUntil !== undefined && previousSignsUntil > this.now() ? new Date(previousSignsUntil).toISOString() : null,
    };
  }
}

function binding(orgId: string): string {
  return `webhook-secret:${orgId}`;
}
