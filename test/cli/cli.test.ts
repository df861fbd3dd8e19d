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
    // The history of a run still waiting: the transitions so far, at once (the stream is not followed).
    const startedAt = Date.now();
    const paused = await json<{ transitions: { stepIndex: number; name: string; status: string; at: string }[]; status?: string }>(['runs', 'history', called.runId]);
    assert.ok(Date.now() - startedAt < 20_000, `runs history took ${Date.now() - startedAt} ms`);
    assert.equal(paused.status, undefined, 'the run has not ended');
    assert.ok(paused.transitions.some((t) => t.stepIndex === 2 && t.status === 'PAUSED'), JSON.stringify(paused));
    const decided = await json<{ approver: string; decision: string }>(['approvals', 'approve', called.runId, '--comment', 'ok']);
    assert.deepEqual([decided.approver, decided.decision], ['ann@example.com', 'approve']);

    assert.equal(await watchExit, 0, `watch output:\n${watched}`);
    assert.match(watched, /step 2 Sign-off: PAUSED/);
    assert.match(watched, /step 3 Pay: COMPLETE/);
    assert.match(watched, /COMPLETE/);

    const status = await json<{ status: string }>(['runs', 'status', called.runId]);
    assert.equal(status.status, 'COMPLETE');
    const history = await cli(['runs', 'history', called.runId]);
    assert.equal(history.code, 0, history.stderr);
    const lines = history.stdout.split('\n');
    assert.match(lines[0] ?? '', /^SEQ +AT +STEP +NAME +STATUS +AFTER$/);
    for (const [step, name, state] of [['1', 'Prepare', 'RUNNING'], ['1', 'Prepare', 'COMPLETE'], ['2', 'Sign-off', 'PAUSED'], ['2', 'Sign-off', 'COMPLETE'], ['3', 'Pay', 'COMPLETE']]) {
      assert.ok(lines.some((l) => new RegExp(`^\\d+ +\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z +${step} +${name} +${state}\\b`).test(l)), `${step} ${name} ${state} in:\n${history.stdout}`);
    }
    // the approval's wait is timed: the step had been PAUSED for a measurable while before it went on
    assert.ok(lines.some((l) => /Sign-off +(RUNNING|COMPLETE) +\d+(\.\d)? (s|ms)$/.test(l)), history.stdout);
    assert.match(history.stdout, new RegExp(`run ${called.runId}: COMPLETE`));
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
    // Without --json: the run's result itself (the last step's), nothing else on stdout.
    const printed = await cli(['--api-key', key.key, 'call', trigger.id, '--wait', '60', '-i', 'n=4']);
    assert.equal(printed.code, 0, printed.stderr);
    assert.equal(printed.stdout, 'ok 4');
    assert.match(printed.stderr, /: COMPLETE/);
    const failed = await cli(['--json', '--api-key', key.key, 'call', trigger.id, '--wait', '60', '-i', 'fail=true']);
    assert.equal(failed.code, 1, failed.stderr);
    assert.equal((JSON.parse(failed.stdout) as { status: string }).status, 'FAILED');
  });

  it('call --wait on a run that stops at an approval prints the run ID and the wait, then exits 3', async () => {
    const file = path.join(home, `wait-approval-${Date.now()}.json`);
    writeFileSync(file, JSON.stringify({ name: 'cli-wait-approval', steps: [
      { name: 'Prepare', type: 'template', template: 'invoice {{inputs.invoice}}' },
      { name: 'Sign-off', type: 'approval', approvers: ['bob@example.com', 'ann@example.com'], message: 'Pay?', timeout: '1h' },
    ] }));
    const workflow = await json<{ id: string }>(['workflows', 'create', file, '--publish']);
    const trigger = await json<{ id: string }>(['triggers', 'create', workflow.id]);
    const key = await json<{ key: string }>(['api-keys', 'create']);
    const waited = await cli(['--api-key', key.key, 'call', trigger.id, '--wait', '-i', 'invoice=INV-9']);
    assert.equal(waited.code, 3, `exit 3 (waiting for people): ${waited.stderr}`);
    const runId = /run ([0-9a-f-]{36}) started/.exec(waited.stderr)?.[1] ?? '';
    assert.ok(runId, waited.stderr);
    assert.match(waited.stderr, new RegExp(`run ${runId} PAUSED at step 2 \\(Sign-off\\): approval by bob@example.com, ann@example.com \\(0 of 1\\) until \\d{4}-`));
    assert.equal(waited.stdout, '', 'nothing on stdout: the run has no result yet');
    // --json: the run's status body, PAUSED with what it waits on
    const asJson = await cli(['--json', '--api-key', key.key, 'call', trigger.id, '--wait', '-i', 'invoice=INV-10']);
    assert.equal(asJson.code, 3, asJson.stderr);
    const body = JSON.parse(asJson.stdout) as { status: string; waitingOn?: { kind: string; stepIndex: number } };
    assert.equal(body.status, 'PAUSED');
    assert.deepEqual([body.waitingOn?.kind, body.waitingOn?.stepIndex], ['approval', 2]);
  });

  /**
   * A CLI run as a person sees it: the moment (ms after the spawn) each stderr line matching one of
   * `marks` first appeared, and the exit code. Killed (and failed) past 60 s.
   */
  async function timedCli(args: string[], marks: Record<string, RegExp>): Promise<{ code: number | null; stderr: string; stdout: string; at: Record<string, number> }> {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], { env: env() });
    let stderr = '';
    let stdout = '';
    const at: Record<string, number> = {};
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      for (const [name, mark] of Object.entries(marks)) if (at[name] === undefined && mark.test(stderr)) at[name] = performance.now() - started;
    });
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    const killer = setTimeout(() => child.kill(), 60_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(killer);
    at.exit = performance.now() - started;
    return { code, stderr, stdout, at };
  }

  it('call --wait on an approval workflow prints the run ID and the wait within 2 s (measured), then exits 3', async () => {
    const file = path.join(home, `timed-approval-${Date.now()}.json`);
    writeFileSync(file, JSON.stringify({ name: 'cli-timed-approval', steps: [
      { name: 'Prepare', type: 'template', template: 'invoice {{inputs.invoice}}' },
      { name: 'Sign-off', type: 'approval', approvers: ['bob@example.com'], message: 'Pay?', timeout: '1h' },
    ] }));
    const workflow = await json<{ id: string }>(['workflows', 'create', file, '--publish']);
    const trigger = await json<{ id: string }>(['triggers', 'create', workflow.id]);
    const key = await json<{ key: string }>(['api-keys', 'create']);
    // The CLI's own start-up on this machine (node loading the CLI and exiting), measured the same way:
    // the figure held to 2 s is the time from there to the wait line, so a loaded test machine's slow
    // process start does not count; the whole time from the spawn is held to a generous bound.
    const startup = (await timedCli(['--version'], {})).at.exit ?? 0;
    const figures: { total: number; afterStartup: number; started: number }[] = [];
    for (let i = 0; i < 3; i++) {
      const run = await timedCli(['--api-key', key.key, 'call', trigger.id, '--wait', '-i', `invoice=INV-${20 + i}`], {
        started: /run [0-9a-f-]{36} started\n/, paused: /PAUSED at step \d+ \(Sign-off\): approval by bob@example\.com[^\n]*\n/,
      });
      assert.equal(run.code, 3, `exit 3 (waiting for people): ${run.stderr}`);
      const runId = /run ([0-9a-f-]{36}) started/.exec(run.stderr)?.[1] ?? '';
      assert.match(run.stderr, new RegExp(`^run ${runId} started\\nrun ${runId} PAUSED at step 2 \\(Sign-off\\): approval by bob@example\\.com \\(0 of 1\\) until \\d{4}-`));
      assert.equal(run.stdout, '');
      const { paused = Infinity, started = Infinity } = run.at;
      figures.push({ total: Math.round(paused), afterStartup: Math.round(paused - startup), started: Math.round(started) });
    }
    const median = [...figures].sort((a, b) => a.afterStartup - b.afterStartup)[1]!;
    console.log(`      call --wait to the approval line (ms, from spawn / after the CLI's ${Math.round(startup)} ms start-up / run ID line): ${figures.map((f) => `${f.total} / ${f.afterStartup} / ${f.started}`).join(', ')}`);
    assert.ok(median.afterStartup < 2000, `the wait line came ${median.afterStartup} ms after the CLI's start-up (median of ${JSON.stringify(figures)})`);
    assert.ok(median.total < 10_000, `the wait line came ${median.total} ms after the spawn`);
  });

  it('call --wait prints the designated output, and runs results --download saves it under its file name', async () => {
    const file = path.join(home, `designated-${Date.now()}.json`);
    writeFileSync(file, JSON.stringify({ name: 'cli-designated', steps: [
      { name: 'Answer', type: 'template', template: 'the answer is {{inputs.n}}' },
      { name: 'Log', type: 'template', template: 'logged' },
    ] }));
    const workflow = await json<{ id: string }>(['workflows', 'create', file, '--publish']);
    const trigger = await json<{ id: string }>(['triggers', 'create', workflow.id, '--output-step', '1', '--output-file', 'answer.md']);
    const key = await json<{ key: string }>(['api-keys', 'create']);
    const called = await cli(['--api-key', key.key, 'call', trigger.id, '--wait', '60', '-i', 'n=42']);
    assert.equal(called.code, 0, called.stderr);
    assert.equal(called.stdout, 'the answer is 42', 'the designated step 1, not the last step');
    const runId = /run ([0-9a-f-]{36}): COMPLETE/.exec(called.stderr)?.[1] ?? '';
    assert.ok(runId, called.stderr);
    // --json: the whole body, as before
    const whole = await cli(['--json', '--api-key', key.key, 'call', trigger.id, '--wait', '60', '-i', 'n=1']);
    assert.equal((JSON.parse(whole.stdout) as { results: unknown[] }).results.length, 2);

    const dir = path.join(home, `designated-results-${Date.now()}`);
    const results = await json<{ downloaded: string[] }>(['runs', 'results', runId, '--download', dir]);
    assert.ok(results.downloaded.includes(path.join(dir, 'answer.md')), results.downloaded.join(', '));
    assert.equal(readFileSync(path.join(dir, 'answer.md'), 'utf8'), 'the answer is 42');
    assert.equal(readFileSync(path.join(dir, 'step-2', 'output.txt'), 'utf8'), 'logged');
  });

  it('runs open prints the run\'s Temporal Web UI link, or says what to set when it cannot know the UI', async () => {
    const p = await publishWorkflow(fg, { name: 'cli-open', steps: [{ name: 'One', type: 'template', template: 'one' }] });
    const runId = (await trigger(fg, p, {})).headers.get('X-Pf-Run-Id') ?? '';
    const configured = await cli(['runs', 'open', runId], { FLOWGATE_TEMPORAL_UI_URL: 'https://temporal.example.com/', FLOWGATE_TEMPORAL_NAMESPACE: 'prod' });
    assert.equal(configured.code, 0, configured.stderr);
    assert.equal(configured.stdout, `https://temporal.example.com/namespaces/prod/workflows/${runId}\n`);
    const missing = await cli(['runs', 'open', '00000000-0000-4000-8000-000000000000'], { FLOWGATE_TEMPORAL_UI_URL: 'https://temporal.example.com' });
    assert.equal(missing.code, 1, 'an unknown run is a 404, not a dead link');
    // This test flowgate uses a shared Temporal (TEMPORAL_ADDRESS): it knows no UI, and the CLI does not guess.
    const unknown = await cli(['runs', 'open', runId]);
    assert.equal(unknown.code, 64, unknown.stderr);
    assert.match(unknown.stderr, /FLOWGATE_TEMPORAL_UI_URL/);
    // A gateway that started the dev server's UI names the run's page in a Link header: the CLI prints it.
    const proxy = await listenOnLoopback(http.createServer((req, res) => {
      const upstream = http.request(new URL(req.url ?? '/', fg.url), { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, { ...up.headers, link: `<http://127.0.0.1:18233/namespaces/default/workflows/${runId}>; rel="temporal-ui"` });
        up.pipe(res);
      });
      req.pipe(upstream);
    }));
    try {
      const linked = await json<{ url: string }>(['runs', 'open', runId], { FLOWGATE_URL: proxy.url });
      assert.equal(linked.url, `http://127.0.0.1:18233/namespaces/default/workflows/${runId}`);
    } finally {
      await proxy.close();
    }
  });

  it('triggers change: changes a trigger in place from a file and --set pairs (same ID and URL), null removes a field; a refused field exits 1, nothing to change 64', async () => {
    const p = await publishWorkflow(fg, { name: 'cli-trigger-change', steps: [{ name: 'Hello', type: 'template', format: 'plaintext', template: 'hi' }] }, { name: 'before', callbackUrl: 'https://hooks.example.com/done' });
    const file = path.join(home, 'trigger-change.yaml');
    writeFileSync(file, 'designatedOutput: { stepIndex: 1, fileName: hello.txt }\npriority: 2\n');
    const changed = await json<{ id: string; name: string | null; callbackUrl?: string | null; designatedOutput?: unknown; priority?: unknown }>(
      ['triggers', 'change', p.triggerId, file, '--set', 'name=after', '--set', 'callbackUrl=null']);
    assert.equal(changed.id, p.triggerId);
    const shown = await fg.admin<{ name: string; callbackUrl?: string | null; designatedOutput?: unknown; priority?: unknown }>('GET', `/api/v1/triggers/${p.triggerId}`);
    assert.equal(shown.body.name, 'after');
    assert.equal(shown.body.callbackUrl ?? null, null, 'null removed the callback URL');
    assert.deepEqual(shown.body.designatedOutput, { stepIndex: 1, fileName: 'hello.txt' });
    assert.equal(shown.body.priority, 2);
    // the same URL and key still call it
    const called = await trigger(fg, p, {});
    assert.equal(called.status, 200, await called.text());
    assert.ok(called.headers.get('X-Pf-Run-Id'));

    const refused = await cli(['triggers', 'change', p.triggerId, '--set', 'priority=0']);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /HTTP 400: priority: /);
    assert.equal((await fg.admin<{ priority: unknown }>('GET', `/api/v1/triggers/${p.triggerId}`)).body.priority, 2, 'a refused change changes nothing');
    const nothing = await cli(['triggers', 'change', p.triggerId]);
    assert.equal(nothing.code, 64);
    assert.match(nothing.stderr, /nothing to change/);
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

  it('keeps its config under XDG_CONFIG_HOME when it is set, and says where in --help', async () => {
    const xdg = path.join(home, `xdg-${Date.now()}`);
    const login = await cli(['login', '--url', fg.url, '--token', fg.adminToken, '--temporal-ui', 'https://ui.example.com'], { FLOWGATE_URL: '', FLOWGATE_TOKEN: '', XDG_CONFIG_HOME: xdg });
    assert.equal(login.code, 0, login.stderr);
    const file = path.join(xdg, 'flowgate', 'config.json');
    assert.match(login.stderr, new RegExp(`saved to ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal((JSON.parse(readFileSync(file, 'utf8')) as { temporalUiUrl?: string }).temporalUiUrl, 'https://ui.example.com');
    const listed = await execFileAsync(process.execPath, [CLI, '--json', 'workflows', 'list'], { env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: xdg } });
    assert.ok(Array.isArray((JSON.parse(listed.stdout) as { workflows: unknown[] }).workflows));
    const help = await cli(['--help'], { XDG_CONFIG_HOME: xdg });
    assert.ok(help.stdout.includes(file), help.stdout);
    assert.match(help.stdout, /\$XDG_CONFIG_HOME\/flowgate\/config\.json/);
    assert.match((await cli(['login', '--help'], { XDG_CONFIG_HOME: xdg })).stdout, /XDG_CONFIG_HOME/);
  });
});
