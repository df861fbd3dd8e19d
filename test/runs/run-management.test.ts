import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pollStatus, publishWorkflow, startTestFlowgate, trigger, type Published, type StatusBody, type TestFlowgate } from '../support/flowgate';
import { countingUpstream } from '../support/fleet';

const execFileAsync = promisify(execFile);
const CLI = path.resolve(__dirname, '../../src/cli/main.js');

interface Started { runId: string; automationId: string; automationVersion: number; origin: { kind: string; runId: string }; fromStep?: number; reusedSteps?: number[] }
interface FullStatus extends StatusBody { origin?: { kind: string; runId: string }; stepInfo: Record<string, { status: string; name: string; executionOrder: number | null; reusedFrom?: string }> }


describe('managing runs and triggers: disable, enable, rerun, resume (API and CLI)', () => {
  let fg: TestFlowgate;
  let home: string;
  before(async () => {
    fg = await startTestFlowgate();
    home = mkdtempSync(path.join(os.tmpdir(), 'flowgate-cli-live-'));
  });
  after(async () => {
    await fg?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await execFileAsync(process.execPath, [CLI, ...args], {
        env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), FLOWGATE_URL: fg.url, FLOWGATE_TOKEN: fg.adminToken },
        timeout: 60_000,
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  const adminStatus = async (runId: string): Promise<FullStatus> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { body } = await fg.admin<FullStatus>('GET', `/api/v1/runs/${runId}`);
      if (['COMPLETE', 'FAILED', 'TIMEOUT'].includes(body.status)) return body;
      if (Date.now() > deadline) throw new Error(`run ${runId} did not end: ${JSON.stringify(body)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  it('a disabled trigger answers 409 trigger_disabled and starts nothing; enabled again it works (API)', async () => {
    const p = await publishWorkflow(fg, { name: 'disable-api', steps: [{ name: 'One', type: 'template', template: 'x' }] });
    const disabled = await fg.admin<{ enabled: boolean; disabledAt: string }>('POST', `/api/v1/triggers/${p.triggerId}/disable`);
    assert.equal(disabled.status, 200);
    assert.equal(disabled.body.enabled, false);
    assert.ok(disabled.body.disabledAt);
    const refused = await trigger(fg, p, {});
    assert.equal(refused.status, 409);
    assert.equal(((await refused.json()) as { error: string }).error, 'trigger_disabled');
    assert.equal(refused.headers.get('X-Pf-Run-Id'), null);
    const webhook = await fg.request(`/ext/webhook/${p.apiKey}/triggers/${p.triggerId}`, { method: 'POST' });
    assert.equal(webhook.status, 409);
    const listed = await fg.admin<{ triggers: { id: string; enabled: boolean }[] }>('GET', `/api/v1/triggers?workflowId=${p.workflowId}`);
    assert.equal(listed.body.triggers[0]?.enabled, false);
    assert.equal((await fg.admin('POST', `/api/v1/triggers/${p.triggerId}/enable`)).status, 200);
    assert.equal((await trigger(fg, p, {})).status, 200);
    assert.equal((await fg.admin('POST', '/api/v1/triggers/trg_nope/disable')).status, 404);
  });

  it('re-runs a run with the same inputs on the latest or the same version (API)', async function () {
    this.timeout(60_000);
    const created = await fg.admin<{ id: string }>('POST', '/api/v1/workflows', { name: 'rerun', steps: [{ name: 'Greet', type: 'template', template: 'v1 {{inputs.name}}' }] });
    const wf = created.body.id;
    await fg.admin('POST', `/api/v1/workflows/${wf}/publish`);
    const trg = await fg.admin<{ id: string }>('POST', '/api/v1/triggers', { workflowId: wf });
    const key = await fg.admin<{ id: string; key: string }>('POST', '/api/v1/api-keys', {});
    const p: Published = { workflowId: wf, triggerId: trg.body.id, apiKey: key.body.key, apiKeyId: key.body.id, version: 1, stepMap: {} };
    const runId = (await trigger(fg, p, { name: 'Ada' })).headers.get('X-Pf-Run-Id') ?? '';
    await pollStatus(fg, p, runId);
    await fg.admin('PUT', `/api/v1/workflows/${wf}`, { name: 'rerun', steps: [{ name: 'Greet', type: 'template', template: 'v2 {{inputs.name}}' }] });
    await fg.admin('POST', `/api/v1/workflows/${wf}/publish`);

    const latest = await fg.admin<Started>('POST', `/api/v1/runs/${runId}/rerun`, {});
    assert.equal(latest.status, 201, JSON.stringify(latest.body));
    assert.notEqual(latest.body.runId, runId);
    assert.equal(latest.body.automationVersion, 2);
    assert.deepEqual(latest.body.origin, { kind: 'rerun', runId });
    const same = await fg.admin<Started>('POST', `/api/v1/runs/${runId}/rerun`, { version: 'same' });
    assert.equal(same.body.automationVersion, 1);
    for (const [started, expected] of [[latest.body, 'v2 Ada'], [same.body, 'v1 Ada']] as const) {
      const status = await adminStatus(started.runId);
      assert.equal(status.status, 'COMPLETE');
      assert.deepEqual(status.origin, { kind: 'rerun', runId });
      const results = await fg.admin<{ results: { resultUrls: Record<string, { url: string }> }[] }>('GET', `/api/v1/runs/${started.runId}/results`);
      assert.equal(await (await fetch(results.body.results[0]!.resultUrls['output.txt']!.url)).text(), expected);
    }
    assert.equal((await fg.admin('POST', `/api/v1/runs/${runId}/rerun`, { version: 'oldest' })).status, 400);
    assert.equal((await fg.admin('POST', '/api/v1/runs/no-such-run/rerun', {})).status, 404);
  });

  it('resumes a failed run from its failed step, reusing the earlier results (API), and refuses a completed run', async function () {
    this.timeout(90_000);
    const up = await countingUpstream(500);
    try {
      const p = await publishWorkflow(fg, {
        name: 'resume', steps: [
          { name: 'Once', type: 'http', url: `${up.url}/once` },
          { name: 'Flaky', type: 'http', url: `${up.url}/flaky` },
          { name: 'Join', type: 'template', template: '{{steps.1.result}} + {{steps.2.result}}' },
        ],
      });
      const runId = (await trigger(fg, p, {})).headers.get('X-Pf-Run-Id') ?? '';
      const failed = await adminStatus(runId);
      assert.equal(failed.status, 'FAILED');
      assert.equal(failed.stepStatus['2'], 'FAILED');
      up.healthy.value = true;
      const resumed = await fg.admin<Started>('POST', `/api/v1/runs/${runId}/resume`);
      assert.equal(resumed.status, 201, JSON.stringify(resumed.body));
      assert.equal(resumed.body.fromStep, 2);
      assert.deepEqual(resumed.body.reusedSteps, [1]);
      const status = await adminStatus(resumed.body.runId);
      assert.equal(status.status, 'COMPLETE');
      assert.equal(status.stepInfo['1']?.reusedFrom, runId);
      assert.equal(status.stepInfo['2']?.reusedFrom, undefined);
      assert.deepEqual(status.origin, { kind: 'resume', runId });
      assert.equal(up.calls['/once'], 1, 'the step that completed is not run again');
      const results = await fg.admin<{ results: { resultUrls: Record<string, { url: string }> }[] }>('GET', `/api/v1/runs/${resumed.body.runId}/results`);
      assert.equal(await (await fetch(results.body.results[2]!.resultUrls['output.txt']!.url)).text(), '/once #1 + /flaky #2');
      const again = await fg.admin<{ error: string }>('POST', `/api/v1/runs/${resumed.body.runId}/resume`);
      assert.equal(again.status, 409);
      assert.equal(again.body.error, 'not_resumable');
    } finally {
      await up.close();
    }
  });

  it('does the same through the CLI: triggers disable|enable, runs rerun|resume', async function () {
    this.timeout(90_000);
    const up = await countingUpstream(500);
    try {
      const p = await publishWorkflow(fg, {
        name: 'cli-live', steps: [{ name: 'Once', type: 'http', url: `${up.url}/once` }, { name: 'Flaky', type: 'http', url: `${up.url}/flaky` }],
      });
      const disabled = await cli(['--json', 'triggers', 'disable', p.triggerId]);
      assert.equal(disabled.code, 0, disabled.stderr);
      assert.equal((JSON.parse(disabled.stdout) as { enabled: boolean }).enabled, false);
      assert.equal((await trigger(fg, p, {})).status, 409);
      const enabled = await cli(['triggers', 'enable', p.triggerId]);
      assert.equal(enabled.code, 0, enabled.stderr);
      assert.match(enabled.stdout, /enabled/);

      const runId = (await trigger(fg, p, {})).headers.get('X-Pf-Run-Id') ?? '';
      assert.equal((await adminStatus(runId)).status, 'FAILED');
      up.healthy.value = true;
      const resumed = await cli(['--json', 'runs', 'resume', runId]);
      assert.equal(resumed.code, 0, resumed.stderr);
      const resumedRun = JSON.parse(resumed.stdout) as Started;
      assert.equal(resumedRun.fromStep, 2);
      assert.equal((await adminStatus(resumedRun.runId)).status, 'COMPLETE');
      assert.equal(up.calls['/once'], 1);

      const rerun = await cli(['runs', 'rerun', runId, '--same-version']);
      assert.equal(rerun.code, 0, rerun.stderr);
      const rerunId = rerun.stdout.trim();
      assert.match(rerunId, /^[0-9a-f-]{36}$/);
      assert.equal((await adminStatus(rerunId)).status, 'COMPLETE');
      assert.equal(up.calls['/once'], 2, 'a rerun runs every step');

      const refused = await cli(['runs', 'resume', rerunId]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /not_resumable|FAILED or TIMEOUT/);
      const secret = await cli(['webhook-secret', 'show']);
      assert.equal(secret.code, 0, secret.stderr);
      assert.match(secret.stdout, /^whsec_/);
    } finally {
      await up.close();
    }
  });
});
