import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AuditRecordBody } from '../../src/contracts/audit-bodies';
import { startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { runCli, type CliResult } from '../support/cli-run';


describe('flowgate audit (CLI)', () => {
  let fg: TestFlowgate;
  let home: string;
  before(async () => {
    fg = await startTestFlowgate();
    home = mkdtempSync(path.join(os.tmpdir(), 'flowgate-audit-cli-'));
  });
  after(async () => {
    await fg?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const cli = (args: string[]): Promise<CliResult> => runCli(args, { url: fg.url, token: fg.adminToken, home });

  it('lists the trail newest first as a table and as JSON, with filters and paging; a bad filter exits 1 with the reason', async () => {
    const created = await fg.admin<{ id: string; key: string }>('POST', '/api/v1/api-keys', { name: 'cli-key' });
    assert.equal((await fg.admin('DELETE', `/api/v1/api-keys/${created.body.id}`)).status, 204);

    const json = await cli(['--json', 'audit', '--action', 'api_key.*', '--target', `api_key:${created.body.id}`]);
    assert.equal(json.code, 0, json.stderr);
    const body = JSON.parse(json.stdout) as { records: AuditRecordBody[]; nextCursor: string | null };
    assert.deepEqual(body.records.map((r) => r.action), ['api_key.revoked', 'api_key.created']);
    assert.equal(body.nextCursor, null);
    assert.ok(!json.stdout.includes(created.body.key), 'never the key');

    const table = await cli(['audit', '--action', 'api_key.', '--limit', '1']);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /^AT\s+ACTOR\s+ACTION\s+TARGET\s+OUTCOME\s+STATUS\s+SOURCE$/);
    assert.equal(lines.length, 2);
    assert.match(lines[1] ?? '', new RegExp(`instance-admin\\s+api_key\\.revoked\\s+api_key:${created.body.id}\\s+success\\s+204`));
    const cursor = /--cursor (aud_[0-9a-f]+)/.exec(table.stderr)?.[1];
    assert.ok(cursor, table.stderr);
    const next = await cli(['--json', 'audit', '--action', 'api_key.', '--limit', '1', '--cursor', cursor]);
    assert.equal((JSON.parse(next.stdout) as { records: AuditRecordBody[] }).records[0]?.action, 'api_key.created');

    const bad = await cli(['audit', '--outcome', 'maybe']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /outcome/);
  });
});
