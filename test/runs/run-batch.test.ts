/**
 * Operating a fleet of runs (issue 54) over real HTTP on a real Temporal: runs paused by one filter
 * while they run start no step until a bulk unpause, then all complete; a pause across a delay
 * (single-run routes and the CLI); runs FAILED by an upstream outage (a fake upstream on loopback
 * that answers 500, then recovers) resumed by one batch from the failed step, through a restart of
 * the whole flowgate mid-batch: all complete, the completed steps are not run again, the batch
 * reports every run succeeded and starts each new run once; a dry run counts; a viewer is refused;
 * a filter on input fields counts and acts on only the runs started with them.
 *
 * FLOWGATE_TEST_BATCH_RUNS sets how many runs (default 12; the figures are 100 and 200).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BATCH_CONFIRM_ABOVE } from '../../src/common/run-batch';
import { eventually } from '../support/eventually';
import { asAdminOf, publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';
import { type BatchBody, type FleetRunStatus } from '../support/fleet';
import { runCli, type CliResult } from '../support/cli-run';
import { listenOnLoopback, type LoopbackServer } from '../support/loopback';

const RUNS = Number(process.env.FLOWGATE_TEST_BATCH_RUNS ?? 12);


/** Counts calls per path; `/hold` answers only once released, `/flaky` 500 until healthy. */
async function upstream(): Promise<LoopbackServer & { calls: Record<string, number>; held: (() => void)[]; release(): void; healthy: { value: boolean } }> {
  const calls: Record<string, number> = {};
  const held: (() => void)[] = [];
  const healthy = { value: false };
  let released = false;
  const server = http.createServer((req, res) => {
    const name = req.url ?? '/';
    calls[name] = (calls[name] ?? 0) + 1;
    if (name === '/hold' && !released) {
      held.push(() => res.end('held'));
      return;
    }
    if (name === '/flaky' && !healthy.value) res.statusCode = 500;
    res.end(`${name} #${calls[name]}`);
  });
  return {
    ...(await listenOnLoopback(server)), calls, held, healthy,
    release() {
      released = true;
      for (const answer of held.splice(0)) answer();
    },
  };
}

describe('operating a fleet of runs: pause, unpause and bulk actions by filter', () => {
  let fg: TestFlowgate;
  let home: string;
  let viewer: TestFlowgate;
  before(async () => {
    // the batch's activities share the worker's activity slots with the runs' steps (docs/operations.md):
    // the pause test holds RUNS steps at once, so the worker gets slots beyond them
    fg = await startTestFlowgate({ FLOWGATE_WORKER_ACTIVITY_SLOTS: String(Math.max(100, RUNS + 50)) });
    home = mkdtempSync(path.join(os.tmpdir(), 'flowgate-cli-batch-'));
    const member = await fg.admin<{ id: string }>('POST', '/api/v1/members', { email: 'vera@example.com', role: 'viewer' });
    assert.equal(member.status, 201, JSON.stringify(member.body));
    const token = await fg.admin<{ token: string }>('POST', `/api/v1/members/${member.body.id}/tokens`);
    viewer = asAdminOf(fg, token.body.token);
  });
  after(async () => {
    await fg?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const cli = (args: string[]): Promise<CliResult> => runCli(args, { url: fg.url, token: fg.adminToken, home, timeoutMs: 120_000 });

  const status = async (runId: string): Promise<FleetRunStatus> => (await fg.admin<FleetRunStatus>('GET', `/api/v1/runs/${runId}`)).body;
  const statusWhen = (runId: string, done: (s: FleetRunStatus) => boolean, what: string, timeoutMs = 60_000): Promise<FleetRunStatus> =>
    eventually(async () => {
      const s = await status(runId);
      return done(s) ? s : undefined;
    }, `run ${runId}: ${what}`, timeoutMs, 200);
  const ended = (s: FleetRunStatus): boolean => ['COMPLETE', 'FAILED', 'TIMEOUT'].includes(s.status);

  /** Starts `count` runs (ten calls at a time) without waiting for them; their run IDs. */
  async function startRuns(p: Published, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 10) {
      ids.push(...await Promise.all(Array.from({ length: Math.min(10, count - i) }, async (_, j) => {
        const response = await trigger(fg, p, {}, { Prefer: 'wait=0' });
        const runId = response.headers.get('X-Pf-Run-Id');
        assert.ok(runId, `run ${i + j} started (${response.status})`);
        await response.arrayBuffer();
        return runId;
      })));
    }
    return ids;
  }

  /** Starts a batch (confirmed when it must be) and waits for it to finish. */
  async function batch(body: Record<string, unknown>, expected: number): Promise<BatchBody> {
    const started = await fg.admin<{ batchId: string; matched: number }>('POST', '/api/v1/runs/batch', { ...body, ...(expected > BATCH_CONFIRM_ABOVE ? { confirm: true } : {}) });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.equal(started.body.matched, expected);
    return finished(fg, started.body.batchId);
  }
  const finished = (on: TestFlowgate, batchId: string): Promise<BatchBody> => eventually(async () => {
    const read = await on.admin<BatchBody>('GET', `/api/v1/runs/batch/${batchId}`);
    assert.equal(read.status, 200, JSON.stringify(read.body));
    return read.body.status === 'COMPLETE' ? read.body : undefined;
  }, `batch ${batchId} finishing`, 120_000, 250);

  it(`${RUNS} runs paused by one filter while they run start no step until a bulk unpause; then all complete`, async function () {
    this.timeout(300_000);
    const up = await upstream();
    try {
      const p = await publishWorkflow(fg, {
        name: 'fleet-pause', steps: [{ name: 'Hold', type: 'http', url: `${up.url}/hold`, timeoutMs: 300_000 }, { name: 'After', type: 'http', url: `${up.url}/after` }],
      });
      const runIds = await startRuns(p, RUNS);
      await eventually(async () => (up.held.length === RUNS ? true : undefined), `all ${RUNS} runs in their first step`, 120_000);

      const paused = await batch({ action: 'pause', filter: { workflowId: p.workflowId, status: 'RUNNING' }, reason: 'upstream change', limit: 1000 }, RUNS);
      const notPaused = paused.outcomes.find((o) => o.outcome !== 'succeeded');
      assert.deepEqual([paused.total, paused.succeeded, paused.refused, paused.failed], [RUNS, RUNS, 0, 0],
        `${JSON.stringify(notPaused)}; that run: ${notPaused ? JSON.stringify(await status(notPaused.runId)) : ''}`);
      // each run has taken the pause while its first step still runs
      const one = await status(runIds[0]!);
      assert.equal(one.operatorPause?.reason, 'upstream change');
      assert.equal(one.operatorPause?.by, 'instance-admin', 'the test instance\'s admin token is the instance administrator\'s');

      up.release();
      for (const runId of runIds) {
        const held = await statusWhen(runId, (s) => s.waitingOn?.kind === 'operator', 'holding for the operator after its first step');
        assert.equal(held.status, 'PAUSED');
        assert.equal(held.stepStatus['1'], 'COMPLETE');
        assert.equal(held.stepStatus['2'], 'PENDING');
        assert.equal(held.waitingOn?.by, 'instance-admin');
      }
      // a pause is the behaviour under test: a while later still no run has started its second step
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(up.calls['/after'] ?? 0, 0, 'no step starts while paused');

      const dry = await fg.admin<{ count: number }>('POST', '/api/v1/runs/batch', { action: 'unpause', filter: { workflowId: p.workflowId, status: 'PAUSED' }, dryRun: true, limit: 1000 });
      assert.equal(dry.status, 200);
      assert.equal(dry.body.count, RUNS);
      const unpaused = await batch({ action: 'unpause', filter: { workflowId: p.workflowId, status: 'PAUSED' }, limit: 1000 }, RUNS);
      assert.equal(unpaused.succeeded, RUNS);
      for (const runId of runIds) assert.equal((await statusWhen(runId, ended, 'ending')).status, 'COMPLETE');
      assert.equal(up.calls['/after'], RUNS);
      assert.equal(up.calls['/hold'], RUNS, 'each first step ran once');
    } finally {
      up.release();
      await up.close();
    }
  });

  it('a pause across a delay (API and CLI): the delay keeps its deadline, the next step waits for the unpause; a viewer cannot pause', async function () {
    this.timeout(120_000);
    const p = await publishWorkflow(fg, {
      name: 'pause-delay', steps: [{ name: 'One', type: 'template', template: 'one' }, { name: 'Wait', type: 'delay', duration: '3s' }, { name: 'Three', type: 'template', template: 'three' }],
    });
    const [runId] = await startRuns(p, 1);
    const waiting = await statusWhen(runId!, (s) => s.waitingOn?.kind === 'timer', 'in its delay');
    const refused = await viewer.admin<{ error: string }>('POST', `/api/v1/runs/${runId}/pause`, {});
    assert.equal(refused.status, 403);
    const paused = await cli(['--json', 'runs', 'pause', runId!, '--reason', 'hold on']);
    assert.equal(paused.code, 0, paused.stderr);
    const answer = JSON.parse(paused.stdout) as { paused: boolean; applied: boolean; operatorPause?: { by: string; reason?: string } };
    assert.deepEqual([answer.paused, answer.applied, answer.operatorPause?.reason], [true, true, 'hold on']);
    const held = await statusWhen(runId!, (s) => s.waitingOn?.kind === 'operator', 'holding after its delay', 30_000);
    assert.ok(Date.now() >= Date.parse(waiting.waitingOn?.resumeAt ?? ''), 'the delay ended at its own deadline');
    assert.equal(held.status, 'PAUSED');
    assert.deepEqual([held.stepStatus['2'], held.stepStatus['3']], ['COMPLETE', 'PENDING']);
    const shown = await cli(['runs', 'status', runId!]);
    assert.match(shown.stdout, /unpause \(paused by instance-admin at .*: hold on\)/);
    const unpaused = await fg.admin<{ paused: boolean; applied: boolean }>('POST', `/api/v1/runs/${runId}/unpause`);
    assert.equal(unpaused.status, 200, JSON.stringify(unpaused.body));
    assert.equal(unpaused.body.paused, false);
    assert.equal((await statusWhen(runId!, ended, 'ending')).status, 'COMPLETE');
    const closed = await fg.admin<{ error: string }>('POST', `/api/v1/runs/${runId}/pause`, {});
    assert.equal(closed.status, 409);
    assert.equal(closed.body.error, 'run_closed');
    const audit = await fg.admin<{ records: { action: string; target: { id: string } }[] }>('GET', `/api/v1/audit?target=run:${runId}`);
    const actions = audit.body.records?.filter((r) => r.target?.id === runId).map((r) => r.action) ?? [];
    assert.ok(actions.includes('run.paused') && actions.includes('run.unpaused'), `audited: ${actions.join(', ')}`);
  });

  it('a filter on input fields: a dry run counts only the runs started with them, and the batch acts only on those', async function () {
    this.timeout(180_000);
    const p = await publishWorkflow(fg, { name: 'fleet-inputs', steps: [{ name: 'Wait', type: 'delay', duration: '10m' }] });
    const start = async (inputs: Record<string, unknown>): Promise<string> => {
      const response = await trigger(fg, p, inputs, { Prefer: 'wait=0' });
      const runId = response.headers.get('X-Pf-Run-Id');
      assert.ok(runId, `started (${response.status}): ${await response.text()}`);
      return runId;
    };
    const matching = [
      await start({ customer: { id: 'c-42' }, tier: 2 }), await start({ customer: { id: 'c-42' }, tier: 1 }), await start({ customer: { id: 'c-42', name: 'Ann' }, tier: 2 }),
    ];
    const others = [await start({ customer: { id: 'c-7' }, tier: 2 }), await start({ customer: 'c-42', tier: 2 }), await start({ tier: '2' })];
    for (const runId of [...matching, ...others]) await statusWhen(runId, (s) => s.waitingOn?.kind === 'timer', 'in its delay');
    const count = async (input: Record<string, unknown>): Promise<number> => {
      const dry = await fg.admin<{ count: number; scanned: number }>('POST', '/api/v1/runs/batch', { action: 'cancel', filter: { workflowId: p.workflowId, input }, dryRun: true });
      assert.equal(dry.status, 200, JSON.stringify(dry.body));
      assert.equal(dry.body.scanned, 6, 'every run of the workflow is read');
      return dry.body.count;
    };
    assert.equal(await count({ 'customer.id': 'c-42' }), 3);
    assert.equal(await count({ 'customer.id': 'c-42', tier: 2 }), 2, 'every field must match, a number as a number');
    assert.equal(await count({ tier: 2 }), 4, 'the string "2" is not the number 2');
    assert.equal(await count({ 'customer.id': 'c-404' }), 0);

    const cancelled = await batch({ action: 'cancel', filter: { workflowId: p.workflowId, input: { 'customer.id': 'c-42' } } }, 3);
    assert.deepEqual([cancelled.total, cancelled.succeeded, cancelled.refused, cancelled.failed], [3, 3, 0, 0]);
    assert.deepEqual(cancelled.outcomes.map((o) => o.runId).sort(), [...matching].sort());
    for (const runId of matching) assert.equal((await statusWhen(runId, ended, 'cancelled')).status, 'FAILED');
    for (const runId of others) assert.equal((await status(runId)).waitingOn?.kind, 'timer', `${runId} is left alone, in its delay`);
    // and the rest, by the workflow alone
    const rest = await batch({ action: 'cancel', filter: { workflowId: p.workflowId, status: 'RUNNING' } }, 3);
    assert.deepEqual(rest.outcomes.map((o) => o.runId).sort(), [...others].sort());
  });

  it(`${RUNS} runs FAILED by an upstream outage, resumed by one batch through a restart: all complete, completed steps not run again, each run resumed once`, async function () {
    this.timeout(300_000);
    const up = await upstream();
    try {
      const p = await publishWorkflow(fg, {
        name: 'fleet-outage', steps: [{ name: 'Once', type: 'http', url: `${up.url}/once` }, { name: 'Flaky', type: 'http', url: `${up.url}/flaky` }],
      });
      const runIds = await startRuns(p, RUNS);
      for (const runId of runIds) assert.equal((await statusWhen(runId, ended, 'failing')).status, 'FAILED');
      const filter = { workflowId: p.workflowId, status: 'FAILED', errorContains: 'flaky' };

      const dry = await fg.admin<{ count: number }>('POST', '/api/v1/runs/batch', { action: 'resume', filter, dryRun: true, limit: 1000 });
      assert.equal(dry.status, 200, JSON.stringify(dry.body));
      assert.equal(dry.body.count, RUNS);
      const counted = await cli(['--json', 'runs', 'batch', '--action', 'resume', '--workflow', p.workflowId, '--status', 'FAILED', '--error-contains', 'flaky', '--limit', '1000', '--dry-run']);
      assert.equal(counted.code, 0, counted.stderr);
      assert.equal((JSON.parse(counted.stdout) as { count: number }).count, RUNS);
      const none = await fg.admin<{ count: number }>('POST', '/api/v1/runs/batch', { action: 'resume', filter: { ...filter, errorContains: 'no such error' }, dryRun: true });
      assert.equal(none.body.count, 0);
      const refused = await viewer.admin<{ error: string }>('POST', '/api/v1/runs/batch', { action: 'resume', filter, limit: 1000, confirm: true });
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      const invalid = await fg.admin<{ error: string }>('POST', '/api/v1/runs/batch', { action: 'delete', filter });
      assert.equal(invalid.status, 400);

      up.healthy.value = true;
      const started = await fg.admin<{ batchId: string }>('POST', '/api/v1/runs/batch', { action: 'resume', filter, limit: 1000, confirm: true });
      assert.equal(started.status, 202, JSON.stringify(started.body));
      // the whole flowgate (gateway and worker) stops mid-batch and starts again on the same task queue
      await fg.stop(true);
      fg = await startTestFlowgate({ FLOWGATE_WORKER_ACTIVITY_SLOTS: String(Math.max(100, RUNS + 50)) }, { restartOf: fg });
      const report = await finished(fg, started.body.batchId);
      assert.deepEqual([report.total, report.succeeded, report.refused, report.failed], [RUNS, RUNS, 0, 0], JSON.stringify(report.outcomes.filter((o) => o.outcome !== 'succeeded')));
      const resumed = report.outcomes.map((o) => o.newRunId ?? '');
      assert.equal(new Set(resumed).size, RUNS);
      for (const runId of resumed) {
        const s = await statusWhen(runId, ended, 'ending');
        assert.equal(s.status, 'COMPLETE');
        assert.ok(s.stepInfo['1']?.reusedFrom, 'step 1 is reused from the failed run');
      }
      assert.equal(up.calls['/once'], RUNS, 'the steps that completed are not run again');
      assert.equal(up.calls['/flaky'], 2 * RUNS, 'each failed step ran once more');
      // once: the workflow has the failed runs and one resumed run each, whatever the restart did
      const listed = await fg.admin<{ runs: { runId: string }[] }>('GET', `/api/v1/runs?workflowId=${p.workflowId}&limit=1000`);
      assert.equal(listed.body.runs.length, 2 * RUNS);

      // a viewer reads the batch; the completed runs cannot be resumed: each is refused with its reason
      assert.equal((await asAdminOf(fg, viewer.adminToken).admin('GET', `/api/v1/runs/batch/${started.body.batchId}`)).status, 200);
      const again = await cli(['--json', 'runs', 'batch', '--action', 'resume', '--workflow', p.workflowId, '--status', 'COMPLETE', '--limit', '1000', '--yes', '--wait']);
      assert.equal(again.code, 0, again.stderr);
      const refusedAll = JSON.parse(again.stdout) as BatchBody;
      assert.deepEqual([refusedAll.status, refusedAll.total, refusedAll.refused], ['COMPLETE', RUNS, RUNS]);
      assert.ok(refusedAll.outcomes.every((o) => o.code === 'not_resumable'), JSON.stringify(refusedAll.outcomes[0]));
      const shown = await cli(['runs', 'batch-status', refusedAll.batchId]);
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, /not_resumable/);
      assert.equal((await fg.admin('GET', '/api/v1/runs/batch/batch-00000000-0000-4000-8000-000000000000')).status, 404);
    } finally {
      await up.close();
    }
  });
});
