import assert from 'node:assert/strict';
import { AuditTrail, argumentsDigest, outcomeOf } from '../../src/audit/audit-trail';
import type { LogFields, Logger } from '../../src/observability/logger';
import { FlowgateMetrics } from '../../src/observability/metrics';
import type { AuditStore, NewAuditRecord } from '../../src/registry';

/** A logger that keeps its error lines. */
function keepingLogger(): Logger & { errors: { message: string; fields?: LogFields }[] } {
  const errors: { message: string; fields?: LogFields }[] = [];
  const none = (): void => undefined;
  const log: Logger & { errors: typeof errors } = { errors, debug: none, info: none, warn: none, error: (message, fields) => errors.push({ message, fields }), child: () => log };
  return log;
}

function storeThat(append: (record: NewAuditRecord) => Promise<unknown>): AuditStore {
  return { append, list: async () => [], removeOlderThan: async () => 0 } as unknown as AuditStore;
}

const actor = { actor: 'admin', actorName: null, credentialKind: 'admin_token' as const, credentialId: 'adm_0123456789ab' };
const source = { sourceIp: '127.0.0.1', userAgent: 'x'.repeat(1000), requestId: 'req-1' };

describe('AuditTrail: writing a record', () => {
  it('never throws when the registry refuses the write: the whole record goes to the error log and the failure is counted', async () => {
    const log = keepingLogger();
    const metrics = new FlowgateMetrics();
    const trail = new AuditTrail({ store: storeThat(async () => { throw new Error('registry down'); }), keyName: async () => 'k', log, metrics });
    assert.equal(await trail.record({ orgId: 'org_a', action: 'api_key.revoked', target: { type: 'api_key', id: 'key_1' }, status: 204 }, actor, source), false);
    assert.equal(log.errors.length, 1);
    const logged = log.errors[0]?.fields?.audit as NewAuditRecord;
    assert.equal(logged.action, 'api_key.revoked');
    assert.equal(logged.targetId, 'key_1');
    assert.equal(logged.userAgent?.length, 256, 'a user agent is kept short');
    assert.match(await metrics.text(), /flowgate_audit_records_total\{result="failed"\} 1/);
  });

  it('counts written records, and derives the outcome from the status', async () => {
    const written: NewAuditRecord[] = [];
    const metrics = new FlowgateMetrics();
    const trail = new AuditTrail({ store: storeThat(async (r) => written.push(r)), keyName: async () => 'ops', log: keepingLogger(), metrics });
    await trail.record({ orgId: 'org_a', action: 'workflow.created', status: 201 }, actor, source);
    await trail.toolCalled({ orgId: 'org_a', keyId: 'key_1', server: 'mail', tool: 'send', arguments: { to: 'x@example.com', b: 1 }, durationMs: 12.4, ran: true, isError: true }, source);
    assert.deepEqual(written.map((r) => [r.action, r.outcome, r.actorName]), [['workflow.created', 'success', null], ['tool.called', 'failed', 'ops']]);
    assert.equal(written[1]?.details.argumentsDigest, argumentsDigest({ b: 1, to: 'x@example.com' }), 'the digest does not depend on key order');
    assert.ok(!JSON.stringify(written).includes('x@example.com'));
    assert.match(await metrics.text(), /flowgate_audit_records_total\{result="written"\} 2/);
    assert.deepEqual([200, 302, 400, 404, 409, 500, 503].map(outcomeOf), ['success', 'success', 'refused', 'refused', 'refused', 'failed', 'failed']);
  });
});
