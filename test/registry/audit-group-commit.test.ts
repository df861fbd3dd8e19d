/**
 * Audit records appended in one turn of the event loop are committed together (one insert), each
 * append resolving once its record is in; a record the registry refuses fails alone. Tool-call
 * records are committed without waiting for the disk, and flushed soon after (off the event loop
 * when the registry is a file); any other record
 * in a group makes its commit a synced one. SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { sql, type Kysely, type LogEvent } from 'kysely';
import { AuditStore, createDb, migrateToLatest, openRegistry, type Database, type DatabaseConfig, type NewAuditRecord, type Registry } from '../../src/registry';
import { CHECKPOINT_EVERY_MS } from '../../src/registry/sqlite-checkpoints';
import { walIndex } from '../support/sqlite-wal';
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

  describe(`audit records: what waits for the disk (${dialect.name})`, () => {
    let db: Kysely<Database>;
    let config: DatabaseConfig;
    const statements: string[] = [];
    const relax = dialect.name === 'SQLite' ? 'pragma synchronous = normal' : 'set local synchronous_commit = off';
    beforeEach(async () => {
      config = await dialect.setUp();
      db = createDb(config, (event: LogEvent) => {
        statements.push(event.query.sql.trim().toLowerCase());
      });
      await migrateToLatest(db, config.kind);
      statements.length = 0;
    });
    afterEach(async () => {
      await db?.destroy();
      await dialect.tearDown();
    });

    const inserts = (): string[] => statements.filter((s) => s.startsWith('insert into'));

    it('commits tool-call records unsynced, every other record synced, and a mixed group synced', async () => {
      const store = new AuditStore(db);
      await Promise.all([0, 1, 2].map((n) => store.append(record('org_a', n), 'committed')));
      assert.equal(inserts().length, 1, 'one group');
      assert.equal(statements.filter((s) => s === relax).length, 1, statements.join('\n'));
      assert.ok(statements.indexOf(relax) < statements.findIndex((s) => s.startsWith('insert into')), 'relaxed before the insert');
      if (dialect.name === 'SQLite') {
        assert.equal(statements.at(-1), 'pragma synchronous = full', 'set back at once');
        const [mode] = (await sql<{ synchronous: number }>`pragma synchronous`.execute(db)).rows;
        assert.equal(mode?.synchronous, 2, 'the registry\'s connection is FULL again');
      }
      // readable at once, through another connection too (committed, not merely buffered)
      const other = createDb(config);
      try {
        assert.equal((await new AuditStore(other).list('org_a', {}, 10)).length, 3);
      } finally {
        await other.destroy();
      }

      statements.length = 0;
      await store.append(record('org_a', 10));
      await Promise.all([store.append(record('org_a', 11), 'committed'), store.append(record('org_a', 12))]);
      assert.equal(inserts().length, 2);
      assert.equal(statements.filter((s) => s === relax).length, 0, 'a synced record, alone or in a group, is never relaxed');
    });

    if (dialect.name === 'SQLite') {
      it(`has unsynced records checkpointed, and so flushed, off the event loop within ${CHECKPOINT_EVERY_MS} ms`, async () => {
        const store = new AuditStore(db);
        await store.append(record('org_a', 1), 'committed');
        const file = config.kind === 'sqlite' ? config.file : assert.fail('a SQLite registry');
        const before = walIndex(file);
        assert.ok(before.backfilled < before.frames, `the commit left its pages in the log: ${JSON.stringify(before)}`);
        await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_EVERY_MS + 750));
        const after = walIndex(file);
        assert.ok(after.frames > 0 && after.backfilled === after.frames, `every frame of the log checkpointed: ${JSON.stringify(after)}`);
        assert.equal(statements.filter((s) => s.startsWith('pragma wal_checkpoint')).length, 0, 'none on the registry\'s connection');
        const [auto] = (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)).rows;
        assert.equal(auto?.wal_autocheckpoint, 0, 'nor in its commits');
      });
    }
  });
}
