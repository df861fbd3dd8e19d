/**
 * A tool call's audit record on a registry in a SQLite file is journaled (one write() before the
 * answer) and inserted into the table within INGEST_EVERY_MS: it survives a crash of the process
 * that wrote it, is read at once through the store, and leaves no journal file behind once it is in
 * the table. A line a crash cut short is skipped; a live process's journal is its own.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createDb, openRegistry, type NewAuditRecord, type Registry } from '../../src/registry';
import { INGEST_EVERY_MS, MAX_JOURNALED } from '../../src/registry/audit-records';

function record(n: number): NewAuditRecord {
  return {
    orgId: 'org_a', actor: 'api-key:key_1', actorName: null, credentialKind: 'runtime_token', credentialId: 'key_1', action: 'tool.called',
    targetType: 'tool', targetId: `bench/echo-${n}`, outcome: 'success', status: 200, sourceIp: '127.0.0.1', userAgent: null, requestId: `req-${n}`, details: { n },
  };
}

/** Rows of the audit table, read through a connection of its own (not the store's). */
async function tableCount(file: string): Promise<number> {
  const db = createDb({ kind: 'sqlite', file });
  try {
    const { rows } = await sql<{ n: number }>`select count(*) as n from audit_records`.execute(db);
    return Number(rows[0]?.n);
  } finally {
    await db.destroy();
  }
}

const journalFiles = (file: string): string[] => (existsSync(`${file}-audit-journal`) ? readdirSync(`${file}-audit-journal`) : []);

describe('audit journal (a registry in a SQLite file)', function () {
  this.timeout(60_000);
  let dir: string;
  let file: string;
  let registry: Registry | undefined;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'flowgate-audit-journal-'));
    file = path.join(dir, 'registry.db');
  });
  afterEach(async () => {
    await registry?.close();
    registry = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a tool-call record once journaled, reads it at once, and has it in the table within the interval', async () => {
    registry = await openRegistry({ kind: 'sqlite', file });
    const appended = await Promise.all([1, 2, 3].map((n) => registry!.audit.append(record(n), 'committed')));
    assert.equal(journalFiles(file).length, 1, 'journaled in one file');
    assert.equal(await tableCount(file), 0, 'not yet in the table');
    // read through the store at once: it inserts what the journal holds first
    assert.deepEqual((await registry.audit.list('org_a', {}, 10)).map((r) => r.id), appended.map((r) => r.id).reverse());
    assert.equal(await tableCount(file), 3);
    assert.deepEqual(journalFiles(file), [], 'the file goes once its records are in');

    await registry.audit.append(record(4), 'committed');
    await new Promise((resolve) => setTimeout(resolve, INGEST_EVERY_MS + 400));
    assert.equal(await tableCount(file), 4, `in the table within ${INGEST_EVERY_MS} ms, unread`);
    assert.deepEqual(journalFiles(file), []);
  });

  it('refuses at once a tool-call record the table would refuse, or whose details cannot be encoded; the others are journaled', async () => {
    registry = await openRegistry({ kind: 'sqlite', file });
    const refused = { ...record(1), actor: null as unknown as string };
    const unencodable = { ...record(3), details: { big: 1n } as unknown as Record<string, unknown> };
    const results = await Promise.allSettled([0, 1, 2, 3].map((n) => registry!.audit.append(n === 1 ? refused : n === 3 ? unencodable : record(n), 'committed')));
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    assert.deepEqual((await registry.audit.list('org_a', {}, 10)).map((r) => r.requestId), ['req-2', 'req-0']);
  });

  it('commits a tool-call record to the table when the journal cannot be written', async () => {
    registry = await openRegistry({ kind: 'sqlite', file });
    // a file where the journal's directory would be
    writeFileSync(`${file}-audit-journal`, 'not a directory');
    await registry.audit.append(record(1), 'committed');
    assert.equal(await tableCount(file), 1, 'in the table before it answered');
  });

  it(`keeps at most ${MAX_JOURNALED} records waiting for a registry that cannot take them; past that a record is committed, and fails with it`, async () => {
    registry = await openRegistry({ kind: 'sqlite', file });
    // closed: nothing the journal holds goes into the table any more
    await registry.close();
    const waiting = await Promise.allSettled(Array.from({ length: MAX_JOURNALED }, (_, n) => registry!.audit.append(record(n), 'committed')));
    assert.ok(waiting.every((r) => r.status === 'fulfilled'), 'journaled');
    await assert.rejects(registry.audit.append(record(MAX_JOURNALED), 'committed'));
    registry = undefined;
  });

  it('keeps every other record synced in the table before it answers', async () => {
    registry = await openRegistry({ kind: 'sqlite', file });
    await registry.audit.append({ ...record(1), action: 'api_key.created' });
    assert.equal(await tableCount(file), 1);
    assert.deepEqual(journalFiles(file), []);
  });

  it('loses no journaled record to a crash: the next start inserts it', async () => {
    // a process that journals two records, says so, and is killed before it can insert them
    const child = spawn(process.execPath, ['-e', `
      const { openRegistry } = require(${JSON.stringify(path.resolve(__dirname, '../../src/registry'))});
      (async () => {
        const registry = await openRegistry({ kind: 'sqlite', file: ${JSON.stringify(file)} });
        const record = (n) => ({ orgId: 'org_a', actor: 'api-key:key_1', actorName: null, credentialKind: 'runtime_token', credentialId: 'key_1',
          action: 'tool.called', targetType: 'tool', targetId: 'bench/echo', outcome: 'success', status: 200, sourceIp: null, userAgent: null, requestId: 'req-' + n, details: {} });
        await registry.audit.append(record(1), 'committed');
        await registry.audit.append(record(2), 'committed');
        process.stdout.write('appended\\n');
        setInterval(() => {}, 1000);
      })();
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('appended')) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.once('exit', (code) => reject(new Error(`the child exited first (${code})`)));
    });
    await new Promise((resolve) => child.once('close', resolve));
    assert.equal(journalFiles(file).length, 1, 'the crash left the journal');
    assert.equal(await tableCount(file), 0);

    registry = await openRegistry({ kind: 'sqlite', file });
    assert.deepEqual((await registry.audit.list('org_a', {}, 10)).map((r) => r.requestId), ['req-2', 'req-1']);
    assert.deepEqual(journalFiles(file), []);
    // opened again: nothing inserted twice
    await registry.close();
    registry = await openRegistry({ kind: 'sqlite', file });
    assert.equal(await tableCount(file), 2);
  });

  it('skips a line a crash cut short, and leaves a live process\'s journal to it', async () => {
    registry = await openRegistry({ kind: 'sqlite', file });
    const kept = await registry.audit.append(record(1), 'committed');
    await registry.close();
    registry = undefined;
    const journal = `${file}-audit-journal`;
    mkdirSync(journal, { recursive: true });
    const values = (n: number): unknown[] => [`aud_00000000000${n}0000000000000000`, 'org_a', '2026-11-27T00:00:00.000Z', 'admin', null, 'admin_token', 'adm_1', 'tool.called', null, null, 'success', 200, null, null, `req-dead-${n}`, '{}'];
    // a process that is gone (a pid no process has): one whole line, one cut short
    writeFileSync(path.join(journal, '999999999-dead-1.jsonl'), `${JSON.stringify(values(2))}\n${JSON.stringify(values(3)).slice(0, 40)}`);
    // a process that lives: its file is its own to insert
    const live = spawn('sleep', ['30']);
    try {
      writeFileSync(path.join(journal, `${live.pid}-alive-1.jsonl`), `${JSON.stringify(values(4))}\n`);
      registry = await openRegistry({ kind: 'sqlite', file });
      const listed = await registry.audit.list('org_a', {}, 10);
      assert.deepEqual(listed.map((r) => r.requestId).sort(), ['req-1', 'req-dead-2']);
      assert.equal(listed.find((r) => r.requestId === 'req-1')?.id, kept.id);
      assert.deepEqual(journalFiles(file), [`${live.pid}-alive-1.jsonl`]);
    } finally {
      live.kill();
    }
  });
});
