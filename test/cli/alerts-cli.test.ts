import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { publishWorkflow, startTestFlowgate, type TestFlowgate } from '../support/flowgate';

const execFileAsync = promisify(execFile);
const CLI = path.resolve(__dirname, '../../src/cli/main.js');

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

  async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const env = { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), FLOWGATE_URL: fg.url, FLOWGATE_TOKEN: fg.adminToken };
    try {
      const { stdout, stderr } = await execFileAsync(process.execPath, [CLI, ...args], { env, timeout: 60_000 });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

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
});
