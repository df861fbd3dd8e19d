/**
 * Operating a fleet of runs through processes killed with SIGKILL (issue 54, docs/http-api.md#pausing-runs-and-bulk-actions):
 * the gateway and the worker are child processes (FLOWGATE_ROLE) sharing the data dir of an
 * in-process flowgate without a worker, which publishes the workflows.
 *
 * - N runs in a delay are paused by one batch by filter; the worker is killed with SIGKILL while
 *   they are paused (their delays end while it is down) and started again: every run holds PAUSED
 *   for the operator with its second step PENDING and never called; a bulk unpause, and all N
 *   complete, each second step called once.
 * - N runs FAILED by an upstream outage (503, then 200) are resumed by one batch by filter; the
 *   gateway is killed with SIGKILL as soon as it has answered the batch ID and started again: the
 *   restarted gateway reads the batch COMPLETE with N succeeded, every resumed run completes, and
 *   the first step (an http step to a counting server) is not run again.
 *
 * FLOWGATE_TEST_FLEET_RUNS sets N (default 8; the figures are 100 and 200).
 */
import assert from 'node:assert/strict';
import { BATCH_CONFIRM_ABOVE } from '../../src/common/run-batch';
import { temporalAddress } from '../setup/root-hooks';
import { eventually } from '../support/eventually';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { type BatchBody, type FleetRunStatus, countingUpstream, type CountingUpstream } from '../support/fleet';
import { startBeside, type Replica, type Role } from '../support/replicas';

const RUNS = Number(process.env.FLOWGATE_TEST_FLEET_RUNS ?? 8);



describe('operating a fleet of runs through a worker and a gateway killed with SIGKILL', () => {
  let fg: TestFlowgate;
  let up: CountingUpstream;
  let gateway: Replica;
  let worker: Replica;
  const replicas: Replica[] = [];

  // each process shares the in-process flowgate's data dir: its registry (SQLite), blobs and keys (startBeside)
  const start = async (role: Role): Promise<Replica> => {
    const replica = await startBeside(fg, temporalAddress(), role);
    replicas.push(replica);
    return replica;
  };

  before(async function () {
    this.timeout(300_000);
    fg = await startTestFlowgate({}, { worker: false });
    up = await countingUpstream(503);
    [gateway, worker] = await Promise.all([start('gateway'), start('worker')]);
  });
  after(async () => {
    for (const replica of replicas) await replica.kill();
    await up?.close();
    await fg?.stop();
  });

  /** An admin call to the gateway process (the one running now). */
  async function admin<T>(method: string, pathname: string, body?: unknown): Promise<{ status: number; body: T }> {
    const response = await fetch(`${gateway.url}${pathname}`, {
      method,
      headers: { Authorization: `Bearer ${fg.adminToken}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  }
  const status = async (runId: string): Promise<FleetRunStatus> => (await admin<FleetRunStatus>('GET', `/api/v1/runs/${runId}`)).body;
  const statusWhen = (runId: string, done: (s: FleetRunStatus) => boolean, what: string, timeoutMs = 60_000): Promise<FleetRunStatus> =>
    eventually(async () => {
      const s = await status(runId);
      return done(s) ? s : undefined;
    }, `run ${runId}: ${what}`, timeoutMs, 250);
  const ended = (s: FleetRunStatus): boolean => ['COMPLETE', 'FAILED', 'TIMEOUT'].includes(s.status);

  /** Starts `count` runs through the gateway process without waiting for them; their run IDs. */
  async function startRuns(p: Published, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 10) {
      ids.push(...await Promise.all(Array.from({ length: Math.min(10, count - i) }, async (_, j) => {
        const response = await fetch(`${gateway.url}/ext/triggers/${p.triggerId}`, { method: 'POST', headers: { 'X-API-KEY': p.apiKey, Prefer: 'wait=0' } });
        const runId = response.headers.get('X-Pf-Run-Id');
        assert.ok(runId, `run ${i + j} started (${response.status})`);
        await response.arrayBuffer();
        return runId;
      })));
    }
    return ids;
  }

  /** Starts a batch (confirmed when it must be); its ID. */
  async function startBatch(body: Record<string, unknown>, expected: number): Promise<string> {
    const started = await admin<{ batchId: string; matched: number }>('POST', '/api/v1/runs/batch', { ...body, limit: 1000, ...(expected > BATCH_CONFIRM_ABOVE ? { confirm: true } : {}) });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.equal(started.body.matched, expected);
    return started.body.batchId;
  }
  const finished = (batchId: string): Promise<BatchBody> => eventually(async () => {
    const read = await admin<BatchBody>('GET', `/api/v1/runs/batch/${batchId}`);
    assert.equal(read.status, 200, JSON.stringify(read.body));
    return read.body.status === 'COMPLETE' ? read.body : undefined;
  }, `batch ${batchId} finishing`, 120_000, 250);

  it(`${RUNS} runs paused by one filter hold through a kill -9 of the worker; a bulk unpause completes them all`, async function () {
    this.timeout(240_000);
    // long enough for the runs to start and the pause batch to finish before the first delay ends, on a loaded machine
    const delaySeconds = 10 + Math.ceil(RUNS / 5);
    const p = await publishWorkflow(fg, {
      name: 'fleet-kill-pause', steps: [{ name: 'Wait', type: 'delay', duration: `${delaySeconds}s` }, { name: 'After', type: 'http', url: `${up.url}/after` }],
    });
    const runIds = await startRuns(p, RUNS);
    /** when the last of the delays ends */
    let delaysEnd = 0;
    for (const runId of runIds) {
      const waiting = await statusWhen(runId, (s) => s.waitingOn?.kind === 'timer', 'in its delay', 30_000);
      delaysEnd = Math.max(delaysEnd, Date.parse(waiting.waitingOn?.resumeAt ?? ''));
    }
    assert.ok(Number.isFinite(delaysEnd), 'each delay shows when it ends');

    const pauseId = await startBatch({ action: 'pause', filter: { workflowId: p.workflowId }, reason: 'risky upstream change' }, RUNS);
    const paused = await finished(pauseId);
    const notPaused = paused.outcomes.find((o) => o.outcome !== 'succeeded');
    assert.deepEqual([paused.total, paused.succeeded, paused.refused, paused.failed], [RUNS, RUNS, 0, 0], JSON.stringify(notPaused));
    for (const runId of runIds) {
      const s = await status(runId);
      assert.equal(s.operatorPause?.reason, 'risky upstream change', `run ${runId} took the pause: ${JSON.stringify(s)}`);
      assert.equal(s.stepStatus['2'], 'PENDING', `run ${runId} has not started its second step`);
    }

    // the worker dies while they are paused; their delays end while it is down
    const killedAt = Date.now();
    await worker.kill();
    assert.ok(killedAt < delaysEnd, 'the worker was killed before the delays ended');
    // the delays' deadlines passing with no worker is the situation under test
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, delaysEnd + 500 - Date.now())));
    worker = await start('worker');
    const workerDownMs = Date.now() - killedAt;

    for (const runId of runIds) {
      const held = await statusWhen(runId, (s) => s.waitingOn?.kind === 'operator', 'holding for the operator after its delay');
      assert.equal(held.status, 'PAUSED');
      assert.deepEqual([held.stepStatus['1'], held.stepStatus['2']], ['COMPLETE', 'PENDING']);
      assert.equal(held.waitingOn?.by, 'instance-admin');
      assert.equal(held.waitingOn?.reason, 'risky upstream change');
    }
    // a pause is the behaviour under test: a while later no run has started its second step
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(up.calls['/after'] ?? 0, 0, 'no step starts while paused');
    for (const runId of runIds) assert.equal((await status(runId)).stepStatus['2'], 'PENDING');

    const unpaused = await finished(await startBatch({ action: 'unpause', filter: { workflowId: p.workflowId, status: 'PAUSED' } }, RUNS));
    assert.deepEqual([unpaused.total, unpaused.succeeded], [RUNS, RUNS], JSON.stringify(unpaused.outcomes.filter((o) => o.outcome !== 'succeeded')));
    for (const runId of runIds) assert.equal((await statusWhen(runId, ended, 'ending')).status, 'COMPLETE');
    assert.equal(up.calls['/after'], RUNS, 'each second step ran once, after the unpause');
    console.log(`      [fleet-kill] ${RUNS} runs paused through a worker kill (worker down ${workerDownMs} ms, restart included; killed ${delaysEnd - killedAt} ms before the delays ended)`);
  });

  it(`${RUNS} runs FAILED by an outage, resumed by one batch whose gateway is killed with -9 once it answered: the restarted gateway reads it COMPLETE, step 1 not run again`, async function () {
    this.timeout(240_000);
    const p = await publishWorkflow(fg, {
      name: 'fleet-kill-outage', steps: [{ name: 'Once', type: 'http', url: `${up.url}/once` }, { name: 'Flaky', type: 'http', url: `${up.url}/flaky` }],
    });
    const runIds = await startRuns(p, RUNS);
    for (const runId of runIds) {
      const failed = await statusWhen(runId, ended, 'failing');
      assert.equal(failed.status, 'FAILED', JSON.stringify(failed));
    }
    assert.equal(up.calls['/once'], RUNS);
    assert.equal(up.calls['/flaky'], RUNS);

    up.healthy.value = true;
    const batchId = await startBatch({ action: 'resume', filter: { workflowId: p.workflowId, status: 'FAILED' } }, RUNS);
    // the gateway dies as soon as it has answered the batch ID, and comes back
    await gateway.kill();
    gateway = await start('gateway');

    const report = await finished(batchId);
    assert.deepEqual([report.total, report.succeeded, report.refused, report.failed], [RUNS, RUNS, 0, 0], JSON.stringify(report.outcomes.filter((o) => o.outcome !== 'succeeded')));
    assert.deepEqual(report.outcomes.map((o) => o.runId).sort(), [...runIds].sort(), 'the batch acted on every failed run');
    const resumed = report.outcomes.map((o) => o.newRunId ?? '');
    assert.equal(new Set(resumed).size, RUNS, 'one resumed run each');
    for (const runId of resumed) {
      const s = await statusWhen(runId, ended, 'ending');
      assert.equal(s.status, 'COMPLETE', JSON.stringify(s));
      assert.ok(s.stepInfo['1']?.reusedFrom, `step 1 of ${runId} is reused from the failed run`);
    }
    assert.equal(up.calls['/once'], RUNS, 'the first step is not run again');
    assert.equal(up.calls['/flaky'], 2 * RUNS, 'each failed step ran once more');
    // once: the workflow has the failed runs and one resumed run each, whatever the kill did
    const listed = await eventually(async () => {
      const read = await admin<{ runs: { runId: string }[] }>('GET', `/api/v1/runs?workflowId=${p.workflowId}&limit=1000`);
      return read.body.runs.length >= 2 * RUNS ? read.body.runs : undefined;
    }, `${2 * RUNS} runs listed for the workflow`, 30_000, 500);
    assert.equal(listed.length, 2 * RUNS);
    const again = await admin<BatchBody>('GET', `/api/v1/runs/batch/${batchId}`);
    assert.deepEqual([again.body.status, again.body.succeeded], ['COMPLETE', RUNS], 'the batch finished once');
  });
});
