/**
 * Definitions as code, all or nothing (issue 53): a write refused after the checks rolls back the
 * apply's earlier writes. A real flowgate on the suite's Temporal, the real CLI in a child process;
 * the refused writes are real ones (a remote MCP server at a closed loopback port, an agent naming
 * a server the organization does not have), and what is checked afterwards is the registry through
 * `flowgate plan`, the API, and the trigger's schedule as Temporal holds it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../temporal/ports';
import { scheduleIdFor } from '../../src/schedules/schedule-service';
import { asAdminOf, startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { runCli, type CliResult } from '../support/cli-run';

const execFileAsync = promisify(execFile);

interface AuditRecord { action: string; outcome: string; status: number; details: Record<string, unknown> }

describe('definitions as code: a failed apply is rolled back', () => {
  let fg: TestFlowgate;
  let home: string;

  before(async () => {
    fg = await startTestFlowgate();
    home = mkdtempSync(path.join(os.tmpdir(), 'flowgate-defs-rollback-'));
  });
  after(async () => {
    await fg?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const cli = (args: string[], token: string): Promise<CliResult> => runCli(args, { url: fg.url, token, home, timeoutMs: 150_000 });
  const ok = <T>(reply: { status: number; body: T }, status = 200): T => {
    assert.equal(reply.status, status, JSON.stringify(reply.body));
    return reply.body;
  };
  const write = (dir: string, file: string, text: string): void => {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  };
  const edit = (dir: string, file: string, from: string, to: string): void => {
    const text = readFileSync(path.join(dir, file), 'utf8');
    assert.ok(text.includes(from), `${file} holds ${from}`);
    writeFileSync(path.join(dir, file), text.replace(from, to));
  };

  /** The original folder: a workflow, a trigger of it with a schedule, an agent that starts the trigger. */
  function originalFolder(dir: string): void {
    write(dir, 'workflows/report.yaml', 'kind: workflow\nname: report\nsteps:\n  - { name: Say, type: template, template: v1 }\n');
    write(dir, 'triggers/nightly.yaml', 'kind: trigger\nname: nightly\nworkflow: report\nschedule: { cron: "0 3 * * *", timeZone: Europe/Berlin }\n');
    write(dir, 'agents/helper.yaml', 'kind: agent\nname: helper\ninstructions: Run the nightly report when asked.\nworkflows:\n  - { trigger: nightly, toolName: nightly_report }\n');
  }

  /** The trigger's schedule as Temporal holds it: its spec, state, and the version and steps its runs start. */
  async function temporalSchedule(triggerId: string) {
    const described = await fg.client.schedule.getHandle(scheduleIdFor(triggerId)).describe();
    const args: unknown = described.action.type === 'startWorkflow' ? described.action.args?.[0] : undefined;
    const definition = typeof args === 'object' && args !== null && 'definition' in args ? args.definition : undefined;
    return {
      spec: JSON.parse(JSON.stringify(described.spec)) as unknown, paused: described.state.paused,
      version: described.action.type === 'startWorkflow' ? described.action.memo?.automationVersion : undefined, definition,
    };
  }

  async function appliedOriginal(name: string) {
    const org = ok(await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name }), 201);
    const as = asAdminOf(fg, org.adminToken);
    const original = path.join(home, `${name}-original`);
    originalFolder(original);
    const applied = await cli(['apply', original], org.adminToken);
    assert.equal(applied.code, 0, `${applied.stdout}${applied.stderr}`);
    const workflows = ok(await as.admin<{ workflows: { id: string; name: string; publishedVersion: number }[] }>('GET', '/api/v1/workflows')).workflows;
    const triggers = ok(await as.admin<{ triggers: { id: string; name: string }[] }>('GET', '/api/v1/triggers')).triggers;
    const report = workflows.find((w) => w.name === 'report');
    const nightly = triggers.find((t) => t.name === 'nightly');
    assert.ok(report && nightly);
    assert.equal(report.publishedVersion, 1);
    const changed = path.join(home, `${name}-changed`);
    cpSync(original, changed, { recursive: true });
    const git = (...args: string[]) => execFileAsync('git', ['-c', 'user.email=ci@example.com', '-c', 'user.name=ci', '-c', 'init.defaultBranch=main', ...args], { cwd: changed });
    return { token: org.adminToken, as, original, changed, git, reportId: report.id, triggerId: nightly.id, schedule: await temporalSchedule(nightly.id) };
  }

  /** The original folder plans as no change: the registry is back where it was (and no drift: each object's form is the one last applied). */
  async function assertBack(token: string, original: string, why: string): Promise<void> {
    const plan = await cli(['plan', original], token);
    assert.equal(plan.code, 0, `${why}: the original folder plans as no change:\n${plan.stdout}${plan.stderr}`);
    assert.match(plan.stdout, /0 to create, 0 to change, 0 to delete; 0 drifted/);
  }

  it('a remote server that cannot be reached, after a workflow changed and one created: 409, both undone, the schedule starts the old steps again, the failure audited', async () => {
    const { token, as, original, changed, git, reportId, triggerId, schedule } = await appliedOriginal('defs-rollback-server');
    const closed = await freePort();
    edit(changed, 'workflows/report.yaml', 'template: v1', 'template: v2');
    edit(changed, 'triggers/nightly.yaml', '0 3 * * *', '0 5 * * *');
    write(changed, 'workflows/extra.yaml', 'kind: workflow\nname: extra\nsteps:\n  - { name: Hi, type: template, template: extra }\n');
    write(changed, 'servers/ghost.yaml', `kind: toolServer\nname: ghost\nurl: http://127.0.0.1:${closed}/mcp\n`);
    await git('init', '--quiet');
    await git('add', '-A');
    await git('commit', '--quiet', '-m', 'ghost');
    const sha = (await git('rev-parse', 'HEAD')).stdout.trim();
    const planned = await cli(['--json', 'plan', changed], token);
    assert.equal(planned.code, 2, planned.stderr);
    assert.deepEqual((JSON.parse(planned.stdout) as { changes: { action: string; kind: string; name: string }[] }).changes.map((c) => `${c.action} ${c.kind}/${c.name}`).sort(),
      ['change trigger/nightly', 'change workflow/report', 'create toolServer/ghost', 'create workflow/extra'], 'the server is written after the workflows (DEFINITION_KINDS), before the trigger');

    const applied = await cli(['apply', changed], token);
    assert.equal(applied.code, 1, `${applied.stdout}${applied.stderr}`);
    assert.match(applied.stderr, /HTTP 409: apply failed at toolServer\/ghost: could not list the remote server's tools/);
    assert.match(applied.stderr, /rolled back: every write before it was undone \(workflow\/report, workflow\/extra\)/);

    await assertBack(token, original, 'after the rollback (report is published again as version 3, equal to version 1)');
    const workflows = ok(await as.admin<{ workflows: { name: string }[] }>('GET', '/api/v1/workflows')).workflows.map((w) => w.name);
    assert.deepEqual(workflows, ['report'], 'the workflow created by the failed apply is gone');
    assert.deepEqual(ok(await as.admin<{ servers: unknown[] }>('GET', '/api/v1/servers')).servers, [], 'no server was registered');
    const report = ok(await as.admin<{ publishedVersion: number; draft: { steps: { template?: string }[] } }>('GET', `/api/v1/workflows/${reportId}`));
    assert.equal(report.publishedVersion, 3, 'a published version cannot be withdrawn: version 1\'s definition is published again as version 3 (version 2 was the apply\'s)');
    assert.equal(report.draft.steps[0]?.template, 'v1', 'the draft is back too');

    const now = await temporalSchedule(triggerId);
    assert.ok(schedule.definition, 'the schedule\'s run input is read from Temporal');
    assert.deepEqual(now.spec, schedule.spec, 'the schedule\'s timing in Temporal is unchanged');
    assert.equal(now.paused, schedule.paused);
    assert.equal(now.version, 3, 'the schedule starts the re-published version (a version number apart, the same steps)');
    assert.deepEqual(now.definition, schedule.definition, 'the schedule starts the original steps again');

    const records = ok(await as.admin<{ records: AuditRecord[] }>('GET', '/api/v1/audit?limit=100')).records;
    const failed = records.find((r) => r.action === 'definitions.apply_failed');
    assert.ok(failed, `the failed apply is recorded: ${JSON.stringify(records.map((r) => r.action))}`);
    assert.equal(failed.status, 409);
    assert.equal(failed.outcome, 'refused');
    assert.equal(failed.details.error, 'apply_failed');
    assert.equal(failed.details.failedAt, 'toolServer/ghost');
    assert.equal(failed.details.rolledBack, true);
    assert.deepEqual(failed.details.notUndone, []);
    assert.equal(failed.details.commit, sha);
    assert.match(String(failed.details.reason), /could not list the remote server's tools/);
    assert.equal(records.filter((r) => r.action === 'definitions.applied').length, 1, 'only the first apply is recorded as applied');
  });

  it('an agent refused after the trigger changed in place: the trigger, its schedule in Temporal and its disabled state are put back', async () => {
    const { token, as, original, changed, triggerId, schedule } = await appliedOriginal('defs-rollback-agent');
    const trigger = ok(await as.admin<Record<string, unknown>>('GET', `/api/v1/triggers/${triggerId}`));
    edit(changed, 'triggers/nightly.yaml', '0 3 * * *', '30 5 * * 1');
    writeFileSync(path.join(changed, 'triggers/nightly.yaml'), `${readFileSync(path.join(changed, 'triggers/nightly.yaml'), 'utf8')}callbackUrl: https://example.com/done\npriority: 2\ndisabled: true\n`);
    edit(changed, 'agents/helper.yaml', 'workflows:', 'servers:\n  - { name: nosuch, allTools: true }\nworkflows:');

    const applied = await cli(['apply', changed], token);
    assert.equal(applied.code, 1, `${applied.stdout}${applied.stderr}`);
    assert.match(applied.stderr, /HTTP 409: apply failed at agent\/helper: servers\[0\]\.name: no server "nosuch"/);
    assert.match(applied.stderr, /rolled back: every write before it was undone \(trigger\/nightly\)/);

    await assertBack(token, original, 'after the rollback');
    const now = ok(await as.admin<Record<string, unknown>>('GET', `/api/v1/triggers/${triggerId}`));
    const { schedule: scheduleNow, ...fields } = now;
    const { schedule: _before, ...fieldsBefore } = trigger;
    assert.deepEqual(fields, fieldsBefore, 'the same trigger (its ID kept), with the fields it had: no callback, no priority, enabled');
    assert.equal(now.enabled, true);
    assert.ok(scheduleNow, 'its schedule is still there');
    const temporal = await temporalSchedule(triggerId);
    assert.deepEqual(temporal.spec, schedule.spec, 'the schedule\'s timing in Temporal is back to the original');
    assert.equal(temporal.paused, schedule.paused);
    assert.equal(temporal.version, 1, 'no workflow changed: the schedule starts version 1');

    const records = ok(await as.admin<{ records: AuditRecord[] }>('GET', '/api/v1/audit?limit=100')).records;
    const failed = records.find((r) => r.action === 'definitions.apply_failed');
    assert.equal(failed?.details.failedAt, 'agent/helper', JSON.stringify(failed));
    assert.equal(failed?.details.rolledBack, true);
  });
});
