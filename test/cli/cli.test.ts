import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import http from 'node:http';
import { DEEP_TEXT_FORMS, INDENTED_FORMS } from '../support/deep-text';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { listenOnLoopback } from '../support/loopback';

const execFileAsync = promisify(execFile);
const CLI = path.resolve(__dirname, '../../src/cli/main.js');

interface CliResult { code: number; stdout: string; stderr: string }

describe('flowgate CLI', () => {
  let fg: TestFlowgate;
  let home: string;

  before(async () => {
    fg = await startTestFlowgate();
    home = mkdtempSync(path.join(os.tmpdir(), 'flowgate-cli-'));
  });
  after(async () => {
    await fg?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'),
    FLOWGATE_URL: fg.url, FLOWGATE_TOKEN: fg.adminToken, ...extra,
  });

  async function cli(args: string[], extra: Record<string, string> = {}): Promise<CliResult> {
    try {
      const { stdout, stderr } = await execFileAsync(process.execPath, [CLI, ...args], { env: env(extra), timeout: 90_000 });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  async function json<T = Record<string, unknown>>(args: string[], extra: Record<string, string> = {}): Promise<T> {
    const result = await cli(['--json', ...args], extra);
    assert.equal(result.code, 0, `flowgate ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    return JSON.parse(result.stdout) as T;
  }

  it('creates, publishes, triggers, watches and approves a run end to end, with --json outputs that parse', async () => {
    const file = path.join(home, `approval-${Date.now()}.yaml`);
    writeFileSync(file, [
      'name: cli-approval',
      'steps:',
      '  - { name: Prepare, type: template, template: "invoice {{inputs.invoice}}" }',
      '  - { name: Sign-off, type: approval, approvers: [ann@example.com], message: "Pay?", timeout: 1m }',
      '  - { name: Pay, type: template, template: "paid {{inputs.invoice}}" }',
    ].join('\n'));
    const workflow = await json<{ id: string }>(['workflows', 'create', file]);
    const published = await json<{ version: number }>(['workflows', 'publish', workflow.id]);
    assert.equal(published.version, 1);
    const trigger = await json<{ id: string }>(['triggers', 'create', workflow.id, '--name', 'cli']);
    const key = await json<{ id: string; key: string }>(['api-keys', 'create', '--name', 'cli']);

    const called = await json<{ runId: string }>(['call', trigger.id, '--input', 'invoice=INV-7'], { FLOWGATE_API_KEY: key.key });
    assert.match(called.runId, /^[0-9a-f-]{36}$/);

    // Watch in the background while the run waits for its approval.
    const watcher = spawn(process.execPath, [CLI, 'runs', 'watch', called.runId, '--timeout', '60'], { env: env() });
    let watched = '';
    watcher.stdout.on('data', (chunk: Buffer) => { watched += chunk.toString(); });
    const watchExit = new Promise<number | null>((resolve) => watcher.on('exit', resolve));

    let pending: { approvals: { approvers: { approver: string }[] }[] } = { approvals: [] };
    for (let i = 0; i < 60 && pending.approvals.length === 0; i++) {
      pending = await json(['approvals', 'list', called.runId]);
      if (pending.approvals.length === 0) await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(pending.approvals[0]?.approvers[0]?.approver, 'ann@example.com');
    const decided = await json<{ approver: string; decision: string }>(['approvals', 'approve', called.runId, '--comment', 'ok']);
    assert.deepEqual([decided.approver, decided.decision], ['ann@example.com', 'approve']);

    assert.equal(await watchExit, 0, `watch output:\n${watched}`);
    assert.match(watched, /step 2 Sign-off: PAUSED/);
    assert.match(watched, /step 3 Pay: COMPLETE/);
    assert.match(watched, /COMPLETE/);

    const status = await json<{ status: string }>(['runs', 'status', called.runId]);
    assert.equal(status.status, 'COMPLETE');
    const dir = path.join(home, `results-${Date.now()}`);
    const results = await json<{ downloaded: string[] }>(['runs', 'results', called.runId, '--download', dir]);
    const paid = results.downloaded.find((f) => f.includes('step-3') && f.endsWith('output.txt'));
    assert.ok(paid && existsSync(paid), `downloaded: ${results.downloaded.join(', ')}`);
    assert.equal(readFileSync(paid, 'utf8'), 'paid INV-7');

    const runs = await json<{ runs: { runId: string }[] }>(['runs', 'list', '--workflow', workflow.id]);
    assert.ok(runs.runs.some((r) => r.runId === called.runId));
    const workflows = await json<{ workflows: { id: string }[] }>(['workflows', 'list']);
    assert.ok(workflows.workflows.some((w) => w.id === workflow.id));
    const triggers = await json<{ triggers: { id: string }[] }>(['triggers', 'list', '--workflow', workflow.id]);
    assert.deepEqual(triggers.triggers.map((t) => t.id), [trigger.id]);
    const keys = await json<{ apiKeys: { id: string }[] }>(['api-keys', 'list']);
    assert.ok(keys.apiKeys.some((k) => k.id === key.id));
  });

  it('watch follows the status stream and resumes it with Last-Event-ID after a cut: nothing missed, nothing repeated', async function () {
    this.timeout(90_000);
    // A proxy in front of the gateway that cuts the first status stream after its first event.
    const lastEventIds: (string | undefined)[] = [];
    const proxy = await listenOnLoopback(http.createServer((req, res) => {
      const isStream = (req.url ?? '').includes('/stream');
      if (isStream) lastEventIds.push(req.headers['last-event-id'] as string | undefined);
      const cut = isStream && lastEventIds.length === 1;
      const upstream = http.request(new URL(req.url ?? '/', fg.url), { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        let seen = '';
        up.on('data', (chunk: Buffer) => {
          res.write(chunk);
          seen += chunk.toString('utf8');
          if (cut && /id: \d+\nevent: step\ndata: .*\n\n/.test(seen)) {
            up.destroy();
            setTimeout(() => res.destroy(), 50);
          }
        });
        up.on('end', () => res.end());
      });
      req.pipe(upstream);
    }));
    try {
      const p = await publishWorkflow(fg, {
        name: 'cli-watch-stream',
        steps: [
          { name: 'First', type: 'template', template: 'one' },
          { name: 'Nap', type: 'delay', duration: '3s' },
          { name: 'Last', type: 'template', template: 'three' },
        ],
      });
      const runId = (await trigger(fg, p, {})).headers.get('X-Pf-Run-Id') ?? '';
      const watched = await cli(['runs', 'watch', runId, '--timeout', '60'], { FLOWGATE_URL: proxy.url });
      assert.equal(watched.code, 0, `${watched.stdout}\n${watched.stderr}`);
      assert.ok(lastEventIds.length >= 2, `the stream was reopened (${lastEventIds.length} connection(s))`);
      assert.equal(lastEventIds[0], undefined);
      assert.match(lastEventIds[1] ?? '', /^\d+$/, 'the second connection resumed with Last-Event-ID');

      // What the whole stream says, read in one go after the run ended.
      const full = await (await fetch(`${fg.url}/api/v1/runs/${runId}/stream`, { headers: { Authorization: `Bearer ${fg.adminToken}` } })).text();
      const expected = [...full.matchAll(/event: step\ndata: (.*)\n/g)].map((m) => {
        const step = JSON.parse(m[1] ?? '{}') as { stepIndex: number; name: string; status: string };
        return `step ${step.stepIndex} ${step.name}: ${step.status}`;
      });
      assert.ok(expected.length >= 6, full);
      const lines = watched.stdout.split('\n').filter((l) => l.startsWith('step '));
      assert.deepEqual(lines, expected);
      assert.match(watched.stdout, new RegExp(`run ${runId}: COMPLETE`));
    } finally {
      await proxy.close();
    }
  });

  it('waits synchronously with call --wait and exits 0 on COMPLETE, 1 on FAILED', async () => {
    const file = path.join(home, `code-${Date.now()}.json`);
    writeFileSync(file, JSON.stringify({ name: 'cli-code', steps: [{ name: 'Check', type: 'code', source: 'if (inputs.fail) throw new Error("asked to fail"); return "ok " + inputs.n' }] }));
    const workflow = await json<{ id: string }>(['workflows', 'create', file, '--publish']);
    const trigger = await json<{ id: string }>(['triggers', 'create', workflow.id]);
    const key = await json<{ key: string }>(['api-keys', 'create']);
    const ok = await cli(['--json', '--api-key', key.key, 'call', trigger.id, '--wait', '60', '-i', 'n=3']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal((JSON.parse(ok.stdout) as { status: string }).status, 'COMPLETE');
    const failed = await cli(['--json', '--api-key', key.key, 'call', trigger.id, '--wait', '60', '-i', 'fail=true']);
    assert.equal(failed.code, 1, failed.stderr);
    assert.equal((JSON.parse(failed.stdout) as { status: string }).status, 'FAILED');
  });

  it('tells usage errors (64) and HTTP errors (1) apart, and prints completion scripts', async () => {
    assert.equal((await cli(['no-such-command'])).code, 64);
    assert.equal((await cli(['call', 'trg_x'])).code, 64, 'no API key');
    const missing = await cli(['workflows', 'show', 'wf_missing']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /HTTP 404/);
    const bash = await cli(['completion', 'bash']);
    assert.equal(bash.code, 0);
    assert.match(bash.stdout, /complete -F _flowgate flowgate/);
    assert.match(bash.stdout, /workflows\) COMPREPLY/);
  });

  it('refuses a workflow file nested 50,000 deep, as JSON or YAML, with a usage error naming the file (the YAML parser could abort the CLI)', async () => {
    for (const [form, text] of Object.entries(DEEP_TEXT_FORMS)) {
      const file = path.join(home, `deep-${Date.now()}.yaml`);
      writeFileSync(file, text(INDENTED_FORMS.has(form) ? 2_000 : 50_000));
      const refused = await cli(['workflows', 'create', file]);
      assert.equal(refused.code, 64, `${form}: ${refused.stderr}`);
      assert.ok(refused.stderr.includes(`${file}: the document nests deeper than 64 levels`), `${form}: ${refused.stderr}`);
    }
  });

  it('logs in once into a 0600 config file that later commands use', async () => {
    const login = await cli(['login', '--url', fg.url, '--token', fg.adminToken], { FLOWGATE_URL: '', FLOWGATE_TOKEN: '' });
    assert.equal(login.code, 0, login.stderr);
    const file = path.join(home, '.config', 'flowgate', 'config.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const listed = await execFileAsync(process.execPath, [CLI, '--json', 'workflows', 'list'], { env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: path.join(home, '.config') } });
    assert.ok(Array.isArray((JSON.parse(listed.stdout) as { workflows: unknown[] }).workflows));
  });
});
