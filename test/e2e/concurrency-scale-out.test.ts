/**
 * An organization's concurrency limit (issue 36) across replicas: two gateways (this process's and
 * a child process) and two worker processes on one Temporal server and one registry, a limit of 2
 * (FLOWGATE_ORG_MAX_RUNNING). Ten runs started over both gateways, a worker killed with SIGKILL
 * once some have completed: all ten complete, slots granted first come by start (among the runs
 * whose request had reached the limit's semaphore), never more than 2 in
 * progress (sampled through both gateways' status API, and by Temporal's record).
 */
import assert from 'node:assert/strict';
import { temporalAddress } from '../setup/root-hooks';
import { publishWorkflow, startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { startMain, type Child } from '../support/processes';
import { checkFifoByStart, mostAtOnce, sampleUntilEnded, slotIntervals, type SampledRun } from '../support/slot-sampler';

const RUNS = 10;
const LIMIT = '2';

describe('an organization\'s concurrency limit across two gateways and two workers, one killed with SIGKILL', function () {
  this.timeout(420_000);
  let fg: TestFlowgate;
  const children: Child[] = [];
  let otherGateway = '';

  before(async function () {
    this.timeout(300_000);
    fg = await startTestFlowgate({ FLOWGATE_ORG_MAX_RUNNING: LIMIT, FLOWGATE_SLOT_CHECK_SECONDS: '2' }, { worker: false });
    const shared = {
      TEMPORAL_ADDRESS: temporalAddress(), FLOWGATE_TASK_QUEUE: fg.taskQueue, FLOWGATE_DATA_DIR: fg.dataDir, FLOWGATE_ADMIN_TOKEN: fg.adminToken,
      FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true', FLOWGATE_RATE_LIMIT_PER_MINUTE: '0', FLOWGATE_ORG_MAX_RUNNING: LIMIT, FLOWGATE_SLOT_CHECK_SECONDS: '2',
    };
    const gateway = startMain({ ...shared, FLOWGATE_ROLE: 'gateway', PORT: '0' });
    children.push(gateway);
    const workers = [startMain({ ...shared, FLOWGATE_ROLE: 'worker' }), startMain({ ...shared, FLOWGATE_ROLE: 'worker' })];
    children.push(...workers);
    otherGateway = (await gateway.waitForLine(/gateway listening on (\S+)/, 240_000))[1]!;
    for (const worker of workers) await worker.waitForLine(/worker polling task queue/, 240_000);
  });

  after(async () => {
    for (const child of children) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGTERM');
    await Promise.all(children.map((c) => c.exited));
    await fg?.stop();
  });

  it('all ten complete, slots granted first come by start, never more than 2 in progress, through the kill', async () => {
    const p = await publishWorkflow(fg, {
      name: 'limited-over-replicas',
      steps: [{ name: 'Wait', type: 'delay', duration: '2s' }, { name: 'Compute', type: 'code', source: 'return 6 * 7' }],
    });
    const gateways = [fg.url, otherGateway];
    const runs: SampledRun[] = [];
    for (let i = 0; i < RUNS; i++) {
      const base = gateways[i % 2]!;
      const response = await fetch(`${base}/ext/triggers/${p.triggerId}`, { method: 'POST', headers: { 'X-API-KEY': p.apiKey, 'Content-Type': 'application/json' }, body: '{}' });
      assert.equal(response.status, 200, await response.text());
      const runId = response.headers.get('X-Pf-Run-Id')!;
      // each run is watched through the other gateway than the one that started it
      runs.push({ runId, base: gateways[(i + 1) % 2]!, statusPath: `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/status`, pendingWaits: [] });
    }
    const victim = children[1]!;
    let killedAt: number | undefined;
    let completedAtKill = 0;
    const sample = await sampleUntilEnded(runs, {
      timeoutMs: 300_000,
      onSample: () => {
        const completed = runs.filter((r) => r.final?.status === 'COMPLETE').length;
        if (killedAt === undefined && completed >= 2) {
          victim.process.kill('SIGKILL');
          killedAt = Date.now();
          completedAtKill = completed;
        }
      },
    });
    assert.ok(killedAt !== undefined, 'the worker was killed');
    assert.equal((await victim.exited).signal, 'SIGKILL');
    // The sampled figure is reported, not asserted: while the killed worker's runs wait for their workflow tasks to time
    // out, a status answer can read a run that waits for its slot as RUNNING (its state query unanswered); once a
    // clean-clone CI run sampled 4 so. Temporal's own record below (grant to release of each run) is the exact check.
    console.log(`      sampled through the status API: at most ${sample.maxInProgress} runs in progress at once`);
    for (const run of runs) assert.equal(run.final?.status, 'COMPLETE', `${run.runId}: ${JSON.stringify(run.final)}`);
    const ids = runs.map((r) => r.runId);
    // first come by start among the runs that had asked (a run whose request was delayed by the kill may be overtaken)
    const order = await checkFifoByStart(fg, `slots:org:org_default@${fg.taskQueue}`, ids);
    assert.deepEqual([...order].sort(), [...ids].sort(), 'every run got a slot');
    const intervals = await slotIntervals(fg.client, ids);
    assert.ok(mostAtOnce(intervals) <= 2, `runs holding a slot at once by Temporal's record: ${JSON.stringify(intervals)}`);
    assert.ok(runs.slice(2).filter((r) => r.pendingWaits.some((w) => w.kind === 'slot')).length >= 4, 'the waiting runs read PENDING waiting for a slot');
    const last = Math.max(...intervals.map((i) => i.closed));
    console.log(`      killed a worker after ${completedAtKill} runs completed; all ${RUNS} completed ${last - killedAt!} ms after the kill; grant order by start #${order.map((id) => ids.indexOf(id) + 1).join(',')}; ${sample.samples} samples, at most ${sample.maxInProgress} in progress, ${sample.failedCalls} failed status calls`);
  });
});
