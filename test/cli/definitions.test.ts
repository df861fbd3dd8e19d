/**
 * Definitions as code end to end (issue 53): a real flowgate on the suite's Temporal, the real CLI
 * in a child process, a real Git repository read through `file://` at a branch, and a remote MCP
 * server on loopback for the custom server.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { asAdminOf, startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { runCli, type CliResult } from '../support/cli-run';
import type { PlanBody } from '../../src/cli/definitions';
import { startFakeRemoteMcp, type FakeRemoteMcp } from '../support/fake-remote-mcp';
import { eventually } from '../support/eventually';
import { consoleHttp } from '../support/console-http';
import { startGitHttp } from '../support/git-http';

const execFileAsync = promisify(execFile);

interface RunBody { status: string; automationVersion: number; sourceCommit?: string }

describe('definitions as code: flowgate export, plan and apply', () => {
  let fg: TestFlowgate;
  let remote: FakeRemoteMcp;
  let home: string;

  before(async () => {
    fg = await startTestFlowgate();
    remote = await startFakeRemoteMcp({ sessions: false });
    home = mkdtempSync(path.join(os.tmpdir(), 'flowgate-defs-test-'));
  });
  after(async () => {
    await fg?.stop();
    await remote?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const cli = (args: string[], token = fg.adminToken, env: Record<string, string> = {}): Promise<CliResult> => runCli(args, { url: fg.url, token, home, env, timeoutMs: 150_000 });
  const git = async (cwd: string, ...args: string[]): Promise<string> =>
    (await execFileAsync('git', ['-c', 'user.email=ci@example.com', '-c', 'user.name=ci', '-c', 'init.defaultBranch=main', ...args], { cwd })).stdout.trim();
  const ok = <T>(reply: { status: number; body: T }, status = 200): T => {
    assert.equal(reply.status, status, JSON.stringify(reply.body));
    return reply.body;
  };

  /** An organization with two workflows, a trigger with a schedule, a custom server and an agent. */
  async function seed(as: TestFlowgate): Promise<{ reportId: string; triggerId: string }> {
    const report = ok(await as.admin<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'report', steps: [{ name: 'Nap', type: 'delay', duration: '3s' }, { name: 'Say', type: 'template', template: 'v1' }],
    }), 201);
    ok(await as.admin('POST', `/api/v1/workflows/${report.id}/publish`), 201);
    const cleanup = ok(await as.admin<{ id: string }>('POST', '/api/v1/workflows', { name: 'cleanup', steps: [{ name: 'Done', type: 'template', template: 'clean' }] }), 201);
    ok(await as.admin('POST', `/api/v1/workflows/${cleanup.id}/publish`), 201);
    const nightly = ok(await as.admin<{ id: string }>('POST', '/api/v1/triggers', {
      workflowId: report.id, name: 'nightly', schedule: { cron: '0 3 * * *', timeZone: 'Europe/Berlin' },
    }), 201);
    const server = ok(await as.admin<{ id: string }>('POST', '/api/v1/servers', { name: 'calc', url: `${remote.url}/mcp`, durable: { maxAttempts: 3, initialIntervalSeconds: 1 } }), 201);
    ok(await as.admin('POST', '/api/v1/agents', {
      name: 'helper', instructions: 'Add numbers and run the nightly report when asked.',
      servers: [{ name: server.id, allTools: true }], workflows: [{ triggerId: nightly.id, toolName: 'nightly_report' }],
    }), 201);
    return { reportId: report.id, triggerId: nightly.id };
  }

  it('export, then plan: no change; one step edited: one change, applied from a Git ref as version 2 with the commit; drift; the audit trail; a viewer refused', async () => {
    const { reportId, triggerId } = await seed(fg);
    const repo = path.join(home, 'repo');
    const exported = await cli(['export', repo]);
    assert.equal(exported.code, 0, exported.stderr);
    assert.deepEqual(readdirSync(repo).sort(), ['agents', 'servers', 'triggers', 'workflows']);
    assert.deepEqual(readdirSync(path.join(repo, 'workflows')).sort(), ['cleanup.yaml', 'report.yaml']);
    const agentFile = readFileSync(path.join(repo, 'agents', 'helper.yaml'), 'utf8');
    assert.match(agentFile, /trigger: nightly/, 'the agent names its trigger by name');
    assert.match(agentFile, /name: calc/, 'the agent names the custom server by name');
    await git(repo, 'init', '--quiet');
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '--quiet', '-m', 'export');

    const unchanged = await cli(['plan', repo]);
    assert.equal(unchanged.code, 0, `${unchanged.stdout}${unchanged.stderr}`);
    assert.match(unchanged.stdout, /0 to create, 0 to change, 0 to delete; 0 drifted/);

    // a run started before the apply: it finishes on version 1
    const key = ok(await fg.admin<{ key: string }>('POST', '/api/v1/api-keys', { name: 'defs' }), 201);
    const before = await fg.request(`/ext/triggers/${triggerId}`, { method: 'POST', headers: { 'X-API-KEY': key.key, Prefer: 'wait=0' } });
    const beforeRun = (await before.json()) as { runId: string };
    assert.ok(beforeRun.runId, JSON.stringify(beforeRun));

    // one step edited in the folder
    const reportFile = path.join(repo, 'workflows', 'report.yaml');
    writeFileSync(reportFile, readFileSync(reportFile, 'utf8').replace('template: v1', 'template: v2'));
    await git(repo, 'commit', '--quiet', '-am', 'report says v2');
    const sha = await git(repo, 'rev-parse', 'HEAD');
    const planned = await cli(['--json', 'plan', `file://${repo}@main`]);
    assert.equal(planned.code, 2, planned.stderr);
    const plan = JSON.parse(planned.stdout) as PlanBody;
    assert.deepEqual(plan.changes.map((c) => `${c.action} ${c.kind}/${c.name}`), ['change workflow/report']);
    assert.match(plan.changes[0]?.diff ?? '', /- +template: v1\n\+ +template: v2/);

    // applied by an editor: the audit trail names them
    const editor = ok(await fg.admin<{ id: string }>('POST', '/api/v1/members', { email: 'eda@example.com', role: 'editor' }), 201);
    const editorToken = ok(await fg.admin<{ token: string }>('POST', `/api/v1/members/${editor.id}/tokens`), 201);
    const applied = await cli(['apply', `file://${repo}@main`], editorToken.token);
    assert.equal(applied.code, 0, `${applied.stdout}${applied.stderr}`);
    assert.match(applied.stdout, new RegExp(`0 to create, 1 to change, 0 to delete; 0 drifted \\(commit ${sha}\\)`));
    const workflow = ok(await fg.admin<{ publishedVersion: number }>('GET', `/api/v1/workflows/${reportId}`));
    assert.equal(workflow.publishedVersion, 2);
    assert.equal((await cli(['plan', repo])).code, 0, 'applied: no change left');
    // the same repository at a tag, and at an earlier commit by its SHA
    await git(repo, 'tag', 'v2');
    const tagged = await cli(['--json', 'plan', `file://${repo}@v2`]);
    assert.equal(tagged.code, 0, tagged.stderr);
    assert.equal((JSON.parse(tagged.stdout) as PlanBody).commit, sha, 'a tag is read at its commit');
    const exportSha = await git(repo, 'rev-parse', 'HEAD~1');
    const earlier = await cli(['--json', 'plan', `file://${repo}@${exportSha}`]);
    assert.equal(earlier.code, 2, earlier.stderr);
    const earlierPlan = JSON.parse(earlier.stdout) as PlanBody;
    assert.equal(earlierPlan.commit, exportSha);
    assert.deepEqual(earlierPlan.changes.map((c) => `${c.action} ${c.kind}/${c.name}`), ['change workflow/report']);
    assert.match(earlierPlan.changes[0]?.diff ?? '', /- +template: v2\n\+ +template: v1/, 'the commit before the edit would take it back');
    // the same refs over Git's smart HTTP protocol (git http-backend on loopback)
    const gitHttp = await startGitHttp(home);
    try {
      const overHttp = await cli(['--json', 'plan', `${gitHttp.url}/repo@v2`]);
      assert.equal(overHttp.code, 0, overHttp.stderr);
      assert.equal((JSON.parse(overHttp.stdout) as PlanBody).commit, sha, 'an http Git URL at a tag');
      const shaOverHttp = await cli(['--json', 'plan', `${gitHttp.url}/repo@${exportSha}`]);
      assert.equal(shaOverHttp.code, 2, shaOverHttp.stderr);
      assert.equal((JSON.parse(shaOverHttp.stdout) as PlanBody).commit, exportSha, 'an http Git URL at a commit');
    } finally {
      await gitHttp.close();
    }

    const first = await eventually(async () => {
      assert.equal(ok(await fg.admin<RunBody>('GET', `/api/v1/runs/${beforeRun.runId}`)).status, 'COMPLETE');
      return ok(await fg.admin<RunBody & { results: { stepVersion: number }[] }>('GET', `/api/v1/runs/${beforeRun.runId}/results`));
    }, 'the run started before the apply completes', 60_000);
    assert.equal(first.automationVersion, 1, 'the run started before the apply kept version 1');
    assert.equal(first.sourceCommit, undefined);
    assert.equal(first.results[1]?.stepVersion, 1, 'its second step is version 1\'s');
    const after = await fg.request(`/ext/triggers/${triggerId}`, { method: 'POST', headers: { 'X-API-KEY': key.key, Prefer: 'wait=0' } });
    const afterRun = (await after.json()) as { runId: string };
    assert.equal(ok(await fg.admin<RunBody>('GET', `/api/v1/runs/${afterRun.runId}`)).sourceCommit, sha, 'its status names the commit');
    const described = await fg.client.workflow.getHandle(afterRun.runId).describe();
    assert.equal(await described.staticSummary(), `report v2 @${sha.slice(0, 12)} · trigger ${triggerId}`, 'the Temporal Web UI summary names the commit');
    assert.match((await described.staticDetails()) ?? '', new RegExp(`applied from commit ${sha}`));
    const second = await eventually(async () => {
      assert.equal(ok(await fg.admin<RunBody>('GET', `/api/v1/runs/${afterRun.runId}`)).status, 'COMPLETE');
      return ok(await fg.admin<RunBody & { results: { stepVersion: number }[] }>('GET', `/api/v1/runs/${afterRun.runId}/results`));
    }, 'the run started after the apply completes', 60_000);
    assert.equal(second.automationVersion, 2);
    assert.equal(second.sourceCommit, sha, 'a run of the applied version records the commit');
    assert.equal(second.results[1]?.stepVersion, 2, 'the edited step is a new step version');

    // the audit trail names who applied which commit
    const audit = ok(await fg.admin<{ records: { action: string; actor: string; actorName: string | null; details: Record<string, unknown> }[] }>('GET', '/api/v1/audit?limit=100'));
    const record = audit.records.find((r) => r.action === 'definitions.applied');
    assert.ok(record, 'the apply is recorded');
    assert.equal(record.details.commit, sha);
    assert.equal(record.details.source, `file://${repo}@main`);
    assert.equal(record.details.changed, 1);
    assert.equal(record.actor, `member:${editor.id}`);
    assert.equal(record.actorName, 'eda@example.com');

    // the console's workflow page names the apply; a change made in the console after it is drift
    const web = consoleHttp(() => fg);
    const session = await web.signIn(fg.adminToken);
    const workflowPage = async (): Promise<string> => (await web.get(session, `/console/workflows/${reportId}`)).text();
    const appliedPage = await workflowPage();
    assert.match(appliedPage, new RegExp(`Defined as code</dt><dd>applied from <code>file://[^<]+@main</code> at commit <code>${sha.slice(0, 12)}</code>`));
    assert.doesNotMatch(appliedPage, /Changed outside the folder/);
    const draft = ok(await fg.admin<{ draft: Record<string, unknown> }>('GET', `/api/v1/workflows/${reportId}`));
    const saved = await web.post(session, `/console/workflows/${reportId}/draft`, { definition: JSON.stringify({ ...draft.draft, steps: [{ name: 'Say', type: 'template', template: 'console' }] }) });
    assert.equal(saved.status, 303, await saved.text());
    const published = await web.post(session, `/console/workflows/${reportId}/publish`, {});
    assert.equal(published.status, 303, await published.text());
    assert.match(await workflowPage(), /Changed outside the folder since that apply: the next <code>flowgate plan<\/code> shows it as drift/);
    const drifted = await cli(['--json', 'plan', repo]);
    assert.equal(drifted.code, 2);
    const driftPlan = JSON.parse(drifted.stdout) as PlanBody;
    const change = driftPlan.changes.find((c) => c.name === 'report');
    assert.equal(change?.drift, true, JSON.stringify(driftPlan));
    assert.match(change?.note ?? '', new RegExp(`changed outside the folder since the last apply \\(of ${sha}\\)`));
    assert.equal(driftPlan.drifted, 1);

    // a viewer's token cannot apply
    const member = ok(await fg.admin<{ id: string }>('POST', '/api/v1/members', { email: 'vera@example.com', role: 'viewer' }), 201);
    const token = ok(await fg.admin<{ token: string }>('POST', `/api/v1/members/${member.id}/tokens`), 201);
    assert.equal((await cli(['plan', repo], token.token)).code, 2, 'a viewer may plan');
    const refused = await cli(['apply', repo], token.token);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /HTTP 403/);
    const direct = await asAdminOf(fg, token.token).admin('POST', '/api/v1/apply', { files: [] });
    assert.equal(direct.status, 403);
    assert.equal(ok(await fg.admin<{ publishedVersion: number }>('GET', `/api/v1/workflows/${reportId}`)).publishedVersion, 3, 'nothing applied by the viewer');
  });

  it('a changed trigger is changed in place: one change in the plan, the same ID and URL, every call after it takes the new form', async () => {
    const org = ok(await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: 'defs-trigger-in-place' }), 201);
    const as = asAdminOf(fg, org.adminToken);
    const { triggerId } = await seed(as);
    const dir = path.join(home, 'in-place');
    assert.equal((await cli(['export', dir], org.adminToken)).code, 0);
    const key = ok(await as.admin<{ key: string }>('POST', '/api/v1/api-keys', { name: 'caller' }), 201);
    const call = async (): Promise<string> => {
      const reply = await fg.request(`/ext/triggers/${triggerId}`, { method: 'POST', headers: { 'X-API-KEY': key.key, Prefer: 'wait=0' } });
      const body = (await reply.json()) as { runId?: string };
      assert.ok(body.runId, `${reply.status} ${JSON.stringify(body)}`);
      return body.runId;
    };
    // called once before the change: the gateway keeps the trigger as it was
    const before = await call();
    assert.equal(ok(await as.admin<RunBody & { callback?: unknown }>('GET', `/api/v1/runs/${before}`)).callback, undefined);

    const file = path.join(dir, 'triggers', 'nightly.yaml');
    const callbackUrl = `${remote.url}/done`;
    writeFileSync(file, `${readFileSync(file, 'utf8').trimEnd()}\ncallbackUrl: ${callbackUrl}\nconcurrency:\n  limit: 2\n`);
    const planned = await cli(['--json', 'plan', dir], org.adminToken);
    assert.equal(planned.code, 2, planned.stderr);
    const plan = JSON.parse(planned.stdout) as PlanBody;
    assert.deepEqual(plan.changes.map((c) => `${c.action} ${c.kind}/${c.name}`), ['change trigger/nightly'], 'one change, no delete and create');
    assert.match(plan.changes[0]?.diff ?? '', /\+ callbackUrl: /);
    const applied = await cli(['apply', dir], org.adminToken);
    assert.equal(applied.code, 0, `${applied.stdout}${applied.stderr}`);
    assert.match(applied.stdout, /0 to create, 1 to change, 0 to delete/);

    const triggers = ok(await as.admin<{ triggers: { id: string; name: string; callbackUrl: string | null; concurrency: unknown; schedule: unknown }[] }>('GET', '/api/v1/triggers')).triggers;
    assert.deepEqual(triggers.map((t) => [t.id, t.name, t.callbackUrl, t.concurrency]), [[triggerId, 'nightly', callbackUrl, { limit: 2 }]], 'the same trigger, changed');
    assert.ok(triggers[0]?.schedule, 'its schedule stayed');
    assert.equal((await cli(['plan', dir], org.adminToken)).code, 0, 'applied: no change left (the agent still names the same trigger)');
    // the same URL and key; the gateway that kept the old form takes the new one at once
    const after = await call();
    const status = ok(await as.admin<RunBody & { callback?: unknown }>('GET', `/api/v1/runs/${after}`));
    assert.ok(status.callback, `a run started after the change names the new callback: ${JSON.stringify(status)}`);

    // the API path apply uses: role-checked and audited
    const viewer = ok(await as.admin<{ id: string }>('POST', '/api/v1/members', { email: 'vic@example.com', role: 'viewer' }), 201);
    const viewerToken = ok(await as.admin<{ token: string }>('POST', `/api/v1/members/${viewer.id}/tokens`), 201);
    assert.equal((await asAdminOf(fg, viewerToken.token).admin('PATCH', `/api/v1/triggers/${triggerId}`, { callbackUrl: null })).status, 403);
    const patched = ok(await as.admin<{ id: string; callbackUrl: string | null; priority: number | null }>('PATCH', `/api/v1/triggers/${triggerId}`, { callbackUrl: null, priority: 2 }));
    assert.deepEqual([patched.id, patched.callbackUrl, patched.priority], [triggerId, null, 2]);
    assert.equal((await as.admin('PATCH', `/api/v1/triggers/${triggerId}`, { designatedOutput: { stepIndex: 9 } })).status, 422);
    const audit = ok(await as.admin<{ records: { action: string; target: { type: string; id: string | null } | null }[] }>('GET', '/api/v1/audit?limit=100')).records;
    const updates = audit.filter((r) => r.action === 'trigger.updated');
    assert.ok(updates.length >= 2, `each change through the API is recorded, a refused one too: ${JSON.stringify(audit.map((r) => r.action))}`);
    assert.deepEqual(updates[0]?.target, { type: 'trigger', id: triggerId });
    const drifted = JSON.parse((await cli(['--json', 'plan', dir], org.adminToken)).stdout) as PlanBody;
    assert.deepEqual(drifted.changes.map((c) => `${c.action} ${c.kind}/${c.name} ${c.drift}`), ['change trigger/nightly true'], 'a change through the API is drift');
  });

  it('an invalid file: plan exits 1 naming each file and path; apply changes nothing', async () => {
    const org = ok(await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: 'defs-invalid' }), 201);
    const as = asAdminOf(fg, org.adminToken);
    const dir = path.join(home, 'invalid');
    const write = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    };
    write('workflows/good.yaml', 'kind: workflow\nname: good\nsteps:\n  - { name: Hi, type: template, template: hi }\n');
    write('workflows/bad.yaml', 'kind: workflow\nname: bad\nsteps:\n  - { name: Call, type: http }\n');
    write('triggers/t.yaml', 'kind: trigger\nname: t\nworkflow: good\nschedule: { cron: "0 3 * * *", timeZone: Mars/Olympus }\n');
    write('triggers/more.yaml', 'kind: trigger\nname: u\nworkflow: nowhere\n---\nkind: trigger\nname: v\nworkflow: good\npriority: 9\n');
    const planned = await cli(['plan', dir], org.adminToken);
    assert.equal(planned.code, 1, planned.stdout);
    assert.match(planned.stderr, /workflows\/bad\.yaml: steps\.0(\.url)?: /);
    assert.match(planned.stderr, /triggers\/t\.yaml: schedule\.timeZone: unknown time zone/);
    assert.match(planned.stderr, /triggers\/more\.yaml#1: workflow: no workflow "nowhere" in the folder or the organization/);
    assert.match(planned.stderr, /triggers\/more\.yaml#2: priority: /);
    const applied = await cli(['apply', dir], org.adminToken);
    assert.equal(applied.code, 1);
    const direct = await as.admin<{ error?: unknown }>('POST', '/api/v1/apply', { files: [{ path: 'w.yaml', text: 'kind: workflow\nname: w\nsteps: []\n' }] });
    assert.equal(direct.status, 400, JSON.stringify(direct.body));
    assert.deepEqual(ok(await as.admin<{ workflows: unknown[] }>('GET', '/api/v1/workflows')).workflows, [], 'nothing was created');
  });

  it('a verified trigger: its secret is a reference filled from the environment at apply, and a signed delivery starts a run', async () => {
    const org = ok(await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: 'defs-verified' }), 201);
    const as = asAdminOf(fg, org.adminToken);
    const dir = path.join(home, 'verified');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'all.yaml'), [
      'kind: workflow', 'name: on-push', 'steps:', '  - { name: Hi, type: template, template: pushed }', '---',
      'kind: trigger', 'name: github-push', 'workflow: on-push', 'verify: { preset: github, secretRefs: [DEFS_HOOK_SECRET], events: [push] }', '',
    ].join('\n'));
    const missing = await cli(['apply', dir], org.adminToken);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /HTTP 400: all\.yaml#2 verify\.secretRefs: no value for the secret reference DEFS_HOOK_SECRET/);
    assert.deepEqual(ok(await as.admin<{ workflows: unknown[] }>('GET', '/api/v1/workflows')).workflows, [], 'nothing applied');

    const secret = 'defs-hook-secret-0123456789';
    const applied = await cli(['apply', dir], org.adminToken, { DEFS_HOOK_SECRET: secret });
    assert.equal(applied.code, 0, `${applied.stdout}${applied.stderr}`);
    assert.equal((await cli(['plan', dir], org.adminToken)).code, 0, 'the reference is not compared: no change, and no secret needed to plan');
    const exported = path.join(home, 'verified-export');
    assert.equal((await cli(['export', exported], org.adminToken)).code, 0);
    assert.match(readFileSync(path.join(exported, 'triggers', 'github-push.yaml'), 'utf8'), /secretRefs:\n\s+- GITHUB_PUSH_SECRET/);

    const triggers = ok(await as.admin<{ triggers: { id: string; name: string }[] }>('GET', '/api/v1/triggers')).triggers;
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    const delivery = await fg.request(`/ext/triggers/${triggers[0]?.id ?? ''}`, {
      method: 'POST', body, headers: { 'Content-Type': 'application/json', 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': randomUUID(), 'X-Hub-Signature-256': signature },
    });
    assert.ok([200, 201, 202].includes(delivery.status), `${delivery.status} ${await delivery.text()}`);
  });

  it('promotion: the same folder with an overlay creates the same objects in a second organization', async () => {
    const dev = ok(await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: 'defs-dev' }), 201);
    await seed(asAdminOf(fg, dev.adminToken));
    const folder = path.join(home, 'promote');
    assert.equal((await cli(['export', folder], dev.adminToken)).code, 0);
    const overlay = path.join(home, 'production.overlay.yaml');
    writeFileSync(overlay, 'kind: overlay\npatches:\n  trigger/nightly:\n    schedule: { paused: true }\n  toolServer/calc:\n    description: the calculator in production\n');

    const prod = ok(await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: 'defs-prod' }), 201);
    const planned = await cli(['--json', 'plan', folder, '--overlay', overlay], prod.adminToken);
    assert.equal(planned.code, 2, planned.stderr);
    assert.deepEqual((JSON.parse(planned.stdout) as PlanBody).changes.map((c) => `${c.action} ${c.kind}/${c.name}`).sort(),
      ['create agent/helper', 'create toolServer/calc', 'create trigger/nightly', 'create workflow/cleanup', 'create workflow/report']);
    const applied = await cli(['apply', folder, '--overlay', overlay], prod.adminToken);
    assert.equal(applied.code, 0, `${applied.stdout}${applied.stderr}`);
    assert.equal((await cli(['plan', folder, '--overlay', overlay], prod.adminToken)).code, 0, 'applied with the overlay: no change left');

    const prodAs = asAdminOf(fg, prod.adminToken);
    const names = ok(await prodAs.admin<{ workflows: { name: string }[] }>('GET', '/api/v1/workflows')).workflows.map((w) => w.name).sort();
    assert.deepEqual(names, ['cleanup', 'report']);
    const schedules = ok(await prodAs.admin<{ schedules: { cron?: string[]; state: { paused: boolean } }[] }>('GET', '/api/v1/schedules'));
    assert.equal(schedules.schedules.length, 1);
    assert.equal(schedules.schedules[0]?.state.paused, true, 'the overlay paused the schedule in production (Temporal\'s state)');
    assert.deepEqual(schedules.schedules[0]?.cron, ['0 3 * * *']);
    const servers = ok(await prodAs.admin<{ servers: { name: string; description: string; durable: unknown }[] }>('GET', '/api/v1/servers')).servers;
    assert.deepEqual(servers.map((s) => [s.name, s.description, s.durable]), [['calc', 'the calculator in production', { maxAttempts: 3, initialIntervalSeconds: 1 }]],
      'the durable policy travels with the server');
    const agents = ok(await prodAs.admin<{ agents: { name: string; servers: { name: string }[] }[] }>('GET', '/api/v1/agents')).agents;
    assert.equal(agents.length, 1);
    assert.notEqual(agents[0]?.servers[0]?.name, 'calc', 'the agent names the production server by its ID');
    // without the overlay, the production organization differs from the folder
    assert.equal((await cli(['plan', folder], prod.adminToken)).code, 2);
  });

  it('members and connections: roles set, a connection\'s secret from the environment and never shown, drift, an editor refused members, prune', async () => {
    const org = ok(await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: 'defs-people' }), 201);
    const as = asAdminOf(fg, org.adminToken);
    const eda = ok(await as.admin<{ id: string }>('POST', '/api/v1/members', { email: 'eda@example.com', role: 'viewer' }), 201);
    const dir = path.join(home, 'people');
    mkdirSync(path.join(dir, 'connections'), { recursive: true });
    writeFileSync(path.join(dir, 'members.yaml'), 'kind: member\nemail: Eda@example.com\nrole: editor\n---\nkind: member\nemail: nia@example.com\nrole: operator\n');
    writeFileSync(path.join(dir, 'connections', 'billing.yaml'), [
      'kind: connection', 'name: billing', 'application: custom', 'settings:', '  baseUrl: https://billing.example.com/v1',
      '  auth: { kind: api_key, name: X-Api-Key, value: { secretRef: { env: DEFS_BILLING_KEY } } }', '',
    ].join('\n'));
    const secret = 'billing-key-0123456789abcdef';

    const planned = await cli(['--json', 'plan', dir], org.adminToken, { DEFS_BILLING_KEY: secret });
    assert.equal(planned.code, 2, planned.stderr);
    assert.doesNotMatch(planned.stdout, new RegExp(secret), 'a plan never shows a secret');
    assert.deepEqual((JSON.parse(planned.stdout) as PlanBody).changes.map((c) => `${c.action} ${c.kind}/${c.name}`),
      ['change member/eda@example.com', 'create member/nia@example.com', 'create connection/billing']);
    const missing = await cli(['apply', dir], org.adminToken);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /connections\/billing\.yaml settings\.auth\.value: no value for the secret reference DEFS_BILLING_KEY/);
    const applied = await cli(['apply', dir], org.adminToken, { DEFS_BILLING_KEY: secret });
    assert.equal(applied.code, 0, `${applied.stdout}${applied.stderr}`);
    assert.doesNotMatch(applied.stdout + applied.stderr, new RegExp(secret));
    const members = ok(await as.admin<{ members: { id: string; email: string; role: string }[] }>('GET', '/api/v1/members')).members;
    assert.deepEqual(members.map((m) => `${m.email} ${m.role}`), ['eda@example.com editor', 'nia@example.com operator']);
    assert.equal(members[0]?.id, eda.id, 'an existing member keeps their ID');
    const connections = ok(await as.admin<{ connections: { id: string; name: string; application: string }[] }>('GET', '/api/v1/connections')).connections;
    assert.deepEqual(connections.map((c) => `${c.name} ${c.application}`), ['billing custom']);
    assert.doesNotMatch(JSON.stringify(connections), new RegExp(secret));
    assert.equal((await cli(['plan', dir], org.adminToken)).code, 0, 'applied: no change left, and no secret needed to plan');

    // export writes them without the secret; the export plans as no change
    const exported = path.join(home, 'people-export');
    assert.equal((await cli(['export', exported], org.adminToken)).code, 0);
    assert.match(readFileSync(path.join(exported, 'members.yaml'), 'utf8'), /email: nia@example\.com\nrole: operator/);
    const connectionFile = readFileSync(path.join(exported, 'connections', 'billing.yaml'), 'utf8');
    assert.match(connectionFile, /fromApi: true/);
    assert.doesNotMatch(connectionFile, new RegExp(secret));
    assert.equal((await cli(['plan', exported], org.adminToken)).code, 0, 'the export plans as no change (fromApi keeps the held secret)');
    const reapplied = await cli(['apply', exported], org.adminToken);
    assert.equal(reapplied.code, 0, reapplied.stderr);

    // a role changed through the API: drift
    ok(await as.admin('PATCH', `/api/v1/members/${eda.id}`, { role: 'approver' }));
    const drifted = JSON.parse((await cli(['--json', 'plan', dir], org.adminToken)).stdout) as PlanBody;
    assert.deepEqual(drifted.changes.map((c) => `${c.action} ${c.kind}/${c.name} ${c.drift}`), ['change member/eda@example.com true']);
    assert.match(drifted.changes[0]?.diff ?? '', /- role: approver\n\+ role: editor/);

    // an editor may apply workflows, not members
    const editorToken = ok(await as.admin<{ token: string }>('POST', `/api/v1/members/${eda.id}/tokens`), 201);
    ok(await as.admin('PATCH', `/api/v1/members/${eda.id}`, { role: 'editor' }));
    writeFileSync(path.join(dir, 'members.yaml'), 'kind: member\nemail: eda@example.com\nrole: admin\n---\nkind: member\nemail: nia@example.com\nrole: operator\n');
    const escalated = await cli(['apply', dir], editorToken.token);
    assert.equal(escalated.code, 1);
    assert.match(escalated.stderr, /HTTP 403: .*the role editor lacks members\.manage/);
    const after = ok(await as.admin<{ members: { id: string; role: string }[] }>('GET', '/api/v1/members')).members;
    assert.equal(after.find((m) => m.id === eda.id)?.role, 'editor', 'nothing applied');

    // a member left out of the folder stays unless --prune
    writeFileSync(path.join(dir, 'members.yaml'), 'kind: member\nemail: eda@example.com\nrole: editor\n');
    const kept = JSON.parse((await cli(['--json', 'plan', dir], org.adminToken)).stdout) as PlanBody;
    assert.deepEqual(kept.changes.map((c) => `${c.action} ${c.kind}/${c.name}`), ['delete-skipped member/nia@example.com']);
    const pruned = await cli(['apply', dir, '--prune'], org.adminToken, { DEFS_BILLING_KEY: secret });
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.deepEqual(ok(await as.admin<{ members: { email: string }[] }>('GET', '/api/v1/members')).members.map((m) => m.email), ['eda@example.com']);
  });
});
