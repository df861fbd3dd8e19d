import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { publishWorkflow, startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { runCli, type CliResult } from '../support/cli-run';


describe('flowgate alerts (CLI)', () => {
  let fg: TestFlowgate;
  let home: string;
  before(async () => {
    fg = await startTestFlowgate();
    home = mkdtempSync(path.join(os.tmpdir(), 'flowgate-alerts-cli-'));
  });
  after(async () => {
    await fg?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const cli = (args: string[]): Promise<CliResult> => runCli(args, { url: fg.url, token: fg.adminToken, home });

  it('creates rules from flags and from a file, lists them as a table and as JSON, deletes one; a rule without a destination is a usage error', async () => {
    const p = await publishWorkflow(fg, { name: 'alerts-cli', steps: [{ name: 'Hi', type: 'template', template: 'hi' }] });
    const byFlags = await cli(['--json', 'alerts', 'create', '--name', 'burst', '--workflow', p.workflowId, '--window', '60', '--threshold', '5', '--webhook', 'https://ops.example.com/hook']);
    assert.equal(byFlags.code, 0, byFlags.stderr);
    const rule = JSON.parse(byFlags.stdout) as { id: string; kind: string; condition: Record<string, unknown>; destination: Record<string, unknown> };
    assert.equal(rule.kind, 'failure_rate');
    assert.deepEqual(rule.condition, { kind: 'failure_rate', workflowId: p.workflowId, windowSeconds: 60, threshold: 5 });
    assert.deepEqual(rule.destination, { type: 'webhook', url: 'https://ops.example.com/hook' });

    const file = path.join(home, 'rule.json');
    writeFileSync(file, JSON.stringify({ name: 'handler', condition: { kind: 'run_failed' }, destination: { type: 'workflow', triggerId: p.triggerId } }));
    const byFile = await cli(['alerts', 'create', file]);
    assert.equal(byFile.code, 0, byFile.stderr);
    assert.match(byFile.stdout, /^created alert rule alr_\S+ \(handler\)$/m);

    const table = await cli(['alerts', 'list']);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /^ID\s+NAME\s+KIND\s+WORKFLOW\s+WHEN\s+DESTINATION\s+ENABLED$/);
    assert.match(lines[1] ?? '', new RegExp(`${rule.id}\\s+burst\\s+failure_rate\\s+${p.workflowId}\\s+>= 5 failures in 60s\\s+webhook: https://ops.example.com/hook\\s+true`));
    assert.match(lines[2] ?? '', /handler\s+run_failed\s+\(any\)\s+any failure\s+workflow: trg_/);

    const usage = await cli(['alerts', 'create', '--name', 'nowhere']);
    assert.equal(usage.code, 64);
    assert.match(usage.stderr, /exactly one destination/);

    const deleted = await cli(['alerts', 'delete', rule.id]);
    assert.equal(deleted.code, 0, deleted.stderr);
    const json = await cli(['--json', 'alerts', 'list']);
    assert.deepEqual((JSON.parse(json.stdout) as { alerts: { name: string }[] }).alerts.map((a) => a.name), ['handler']);
    const missing = await cli(['alerts', 'show', rule.id]);
    assert.equal(missing.code, 1);
  });

  it('creates approval_waiting (--after) and budget (--percent) rules and lists what they watch', async () => {
    const waiting = await cli(['--json', 'alerts', 'create', '--name', 'stuck', '--after', '3600', '--webhook', 'https://ops.example.com/stuck']);
    assert.equal(waiting.code, 0, waiting.stderr);
    const rule = JSON.parse(waiting.stdout) as { id: string; condition: Record<string, unknown> };
    assert.deepEqual(rule.condition, { kind: 'approval_waiting', afterSeconds: 3600 });
    const budget = await cli(['--json', 'alerts', 'create', '--name', 'spend', '--percent', '80', '--webhook', 'https://ops.example.com/spend']);
    assert.equal(budget.code, 0, budget.stderr);
    const spend = JSON.parse(budget.stdout) as { id: string; condition: Record<string, unknown> };
    assert.deepEqual(spend.condition, { kind: 'budget', percent: 80 });
    const table = await cli(['alerts', 'list']);
    assert.match(table.stdout, /stuck\s+approval_waiting\s+\(any\)\s+approval waiting > 3600s/);
    assert.match(table.stdout, /spend\s+budget\s+\(any\)\s+monthly budget >= 80%/);
    const refused = await cli(['alerts', 'create', '--name', 'bad', '--kind', 'budget', '--percent', '150', '--webhook', 'https://ops.example.com/x']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /percent/);
    for (const id of [rule.id, spend.id]) assert.equal((await cli(['alerts', 'delete', id])).code, 0);
  });
});
