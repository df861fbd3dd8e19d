/**
 * Audit records appended in one turn of the event loop are committed together (one insert), each
 * append resolving once its record is in; a record the registry refuses fails alone. SQLite and
 * PostgreSQL.
 */
import assert from 'node:assert/strict';
import { openRegistry, type NewAuditRecord, type Registry } from '../../src/registry';
import { registryDialects } from '../support/registry-dialects';

function record(orgId: string, n: number): NewAuditRecord {
  return {
    orgId, actor: 'admin', actorName: null, credentialKind: 'admin_token', credentialId: 'adm_000000000000', action: 'tool.called',
    targetType: 'tool', targetId: `bench/echo-${n}`, outcome: 'success', status: 200, sourceIp: '127.0.0.1', userAgent: null, requestId: `req-${n}`, details: { n },
  };
}

for (const dialect of registryDialects({ tempDirPrefix: 'flowgate-audit-group-', schemaPrefix: 'audit_group_' })) {
  describe(`audit records committed in groups (${dialect.name})`, () => {
    let registry: Registry;
    beforeEach(async () => {
      registry = await openRegistry(await dialect.setUp());
    });
    afterEach(async () => {
      await registry?.close();
      await dialect.tearDown();
    });

    it('commits concurrent appends together, each resolving with its own record once it can be read', async () => {
      const appended = await Promise.all(Array.from({ length: 120 }, (_, n) => registry.audit.append(record('org_a', n))));
      assert.deepEqual(appended.map((r) => r.requestId), Array.from({ length: 120 }, (_, n) => `req-${n}`));
      assert.equal(new Set(appended.map((r) => r.id)).size, 120);
      const listed = await registry.audit.list('org_a', {}, 200);
      assert.equal(listed.length, 120);
      // newest first: the order they were appended in, reversed
      assert.deepEqual(listed.map((r) => r.requestId), appended.map((r) => r.requestId).reverse());
      assert.deepEqual(listed.at(-1)?.details, { n: 0 });
      // one at a time still works, each committed before it resolves
      const single = await registry.audit.append(record('org_a', 1000));
      assert.equal((await registry.audit.list('org_a', {}, 1))[0]?.id, single.id);
    });

    it('a record the registry refuses, or whose details cannot be encoded, fails alone; the others of its group are written', async () => {
      const refused = { ...record('org_a', 1), actor: null as unknown as string };
      const unencodable = { ...record('org_a', 3), details: { big: 1n } as unknown as Record<string, unknown> };
      const results = await Promise.allSettled([0, 1, 2, 3, 4].map((n) => registry.audit.append(n === 1 ? refused : n === 3 ? unencodable : record('org_a', n))));
      assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
      assert.deepEqual((await registry.audit.list('org_a', {}, 10)).map((r) => r.requestId), ['req-4', 'req-2', 'req-0']);
    });
  });
}
