/**
 * The retention sweep's audit half: records older than FLOWGATE_AUDIT_RETENTION_DAYS go through
 * the sweep's registry activity, younger ones and other organizations' young ones stay, on SQLite
 * and PostgreSQL, with the sweep's "now" given instead of waiting.
 */
import assert from 'node:assert/strict';
import { createRetentionActivities } from '../../activities/retention';
import type { BlobStore } from '../../src/blobs/blob-store';
import { openRegistry, type NewAuditRecord, type Registry } from '../../src/registry';
import { DAY_MS } from '../../src/retention/policy';
import { registryDialects } from '../support/registry-dialects';

function record(orgId: string, at: Date, action = 'workflow.created'): NewAuditRecord {
  return {
    orgId, at: at.toISOString(), actor: 'admin', actorName: null, credentialKind: 'admin_token', credentialId: 'adm_000000000000', action,
    targetType: 'workflow', targetId: 'wf_1', outcome: 'success', status: 201, sourceIp: '127.0.0.1', userAgent: null, requestId: null, details: {},
  };
}

for (const dialect of registryDialects({ tempDirPrefix: 'flowgate-audit-retention-', schemaPrefix: 'audit_retention_' })) {
  describe(`retention of audit records (${dialect.name})`, () => {
    let registry: Registry;
    beforeEach(async () => {
      registry = await openRegistry(await dialect.setUp());
    });
    afterEach(async () => {
      await registry?.close();
      await dialect.tearDown();
    });

    it('the sweep deletes records older than the audit period, in batches, and keeps the rest', async () => {
      const now = new Date('2027-06-01T00:00:00.000Z');
      for (let i = 0; i < 1003; i++) await registry.audit.append(record('org_a', new Date(now.getTime() - 400 * DAY_MS - i * 1000)));
      await registry.audit.append(record('org_a', new Date(now.getTime() - 10 * DAY_MS), 'api_key.created'));
      await registry.audit.append(record('org_b', new Date(now.getTime() - 364 * DAY_MS), 'api_key.revoked'));
      const activities = createRetentionActivities({
        blobs: {} as BlobStore, registry, retention: { enabled: true, stepFilesDays: 30, finishedRunsDays: 30, auditDays: 365 },
      });
      assert.deepEqual(await activities.sweepFinishedRuns({ now: now.toISOString() }), { removed: 0, auditRemoved: 1003, oauthClientsRemoved: 0 });
      assert.deepEqual((await registry.audit.list('org_a', {}, 10)).map((r) => r.action), ['api_key.created']);
      assert.deepEqual((await registry.audit.list('org_b', {}, 10)).map((r) => r.action), ['api_key.revoked']);
      assert.deepEqual(await activities.sweepFinishedRuns({ now: now.toISOString() }), { removed: 0, auditRemoved: 0, oauthClientsRemoved: 0 });
      const off = createRetentionActivities({ blobs: {} as BlobStore, registry, retention: { enabled: false, stepFilesDays: 30, finishedRunsDays: 30, auditDays: 1 } });
      assert.deepEqual(await off.sweepFinishedRuns({ now: now.toISOString() }), { disabled: true });
      assert.equal((await registry.audit.list('org_a', {}, 10)).length, 1, 'retention off deletes nothing');
    });
  });
}
