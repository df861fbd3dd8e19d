/**
 * A file registry's write-ahead log is checkpointed on a thread of its own, never in the commits
 * of the event loop's connection; the log stays bounded under a stream of writes; the thread ends
 * before the connection closes, so the file opens again at once; and should the thread fail,
 * SQLite's own checkpoints come back to the connection.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { createDb, migrateToLatest, openRegistry, type Database } from '../../src/registry';
import { checkpointedOffThread } from '../../src/registry/db';
import { CHECKPOINT_EVERY_MS, SqliteCheckpoints } from '../../src/registry/sqlite-checkpoints';
import { walIndex } from '../support/sqlite-wal';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function autocheckpointPages(db: Kysely<Database>): Promise<number | undefined> {
  const [row] = (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)).rows;
  return row?.wal_autocheckpoint;
}

describe('SQLite registry checkpoints off the event loop', () => {
  let dir: string;
  let file: string;
  let db: Kysely<Database> | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'flowgate-checkpoints-'));
    file = join(dir, 'registry.db');
  });
  afterEach(async () => {
    await db?.destroy();
    db = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the log bounded under a stream of writes, checkpointed by the thread alone', async () => {
    const statements: string[] = [];
    db = createDb({ kind: 'sqlite', file }, (event) => {
      statements.push(event.query.sql.trim().toLowerCase());
    });
    await migrateToLatest(db, 'sqlite');
    assert.equal(await autocheckpointPages(db), 0, 'no checkpoint in the connection\'s commits');
    assert.equal(checkpointedOffThread(db), true);
    await sql`create table payload (n integer primary key, body text not null)`.execute(db);
    // eight bursts of 500 rows of 1 kB, each its own commit, a little more than a checkpoint apart:
    // unchecked, the log would hold them all (about 4 MB)
    const walSizes: number[] = [];
    for (let burst = 0; burst < 8; burst++) {
      for (let n = 0; n < 500; n++) {
        await sql`insert into payload (n, body) values (${burst * 500 + n}, ${'x'.repeat(1000)})`.execute(db);
      }
      walSizes.push(statSync(`${file}-wal`).size);
      await sleep(CHECKPOINT_EVERY_MS + 150);
    }
    const largest = Math.max(...walSizes);
    assert.ok(largest < 2.5 * (walSizes[0] ?? 0), `the log was reused, not grown: ${walSizes.join(', ')} bytes`);
    const last = walIndex(file);
    assert.ok(last.frames > 0 && last.backfilled === last.frames, `the last burst checkpointed too: ${JSON.stringify(last)}`);
    assert.equal(statements.filter((s) => s.includes('wal_checkpoint')).length, 0, 'none on the registry\'s connection');
  });

  it('closes the thread before the connection: the log is checkpointed away, and the file opens again at once', async () => {
    for (let round = 0; round < 3; round++) {
      const registry = await openRegistry({ kind: 'sqlite', file });
      for (let n = 0; n < 20; n++) {
        await registry.audit.append({
          orgId: 'org_a', actor: 'admin', actorName: null, credentialKind: 'admin_token', credentialId: 'adm_0', action: 'tool.called',
          targetType: null, targetId: null, outcome: 'success', status: 200, sourceIp: null, userAgent: null, requestId: null, details: { round, n },
        }, 'committed');
      }
      await sleep(CHECKPOINT_EVERY_MS + 100); // the thread has started and checkpointed
      await registry.close();
      assert.equal(existsSync(`${file}-wal`), false, 'the registry\'s connection closed last, and took the log with it');
    }
    const registry = await openRegistry({ kind: 'sqlite', file });
    try {
      assert.equal((await registry.audit.list('org_a', {}, 100)).length, 60);
    } finally {
      await registry.close();
    }
  });

  it('gives the checkpoints back to the connection when the thread fails', async () => {
    db = createDb({ kind: 'sqlite', file });
    await sql`select 1`.execute(db);
    assert.equal(await autocheckpointPages(db), 0);
    // the connection keeps its open file; the thread, which opens its own only when first asked, finds none
    unlinkSync(file);
    await sleep(CHECKPOINT_EVERY_MS + 750);
    assert.equal(checkpointedOffThread(db), false);
    assert.equal(await autocheckpointPages(db), 1000, 'SQLite\'s default again');
  });

  it('reports a thread that cannot checkpoint, once', async () => {
    const reasons: string[] = [];
    const checkpoints = new SqliteCheckpoints(join(dir, 'missing', 'registry.db'), (reason) => reasons.push(reason), 10);
    try {
      checkpoints.written();
      for (let waited = 0; reasons.length === 0 && waited < 5_000; waited += 50) await sleep(50);
      checkpoints.written();
      await sleep(100);
      assert.equal(reasons.length, 1, reasons.join('\n'));
      assert.match(reasons[0] ?? '', /registry file .* is gone/);
      assert.equal(checkpoints.healthy, false);
    } finally {
      await checkpoints.close();
    }
  });

  it('starts no thread for an in-memory registry', async () => {
    db = createDb({ kind: 'sqlite', file: ':memory:' });
    await sql`select 1`.execute(db);
    assert.equal(checkpointedOffThread(db), false);
  });
});
