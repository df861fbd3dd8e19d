/**
 * A worker or gateway given another data key ring than its task queue's runs were sealed with
 * (docs/operations.md, "Run data encryption"): it refuses to start while an open run is sealed
 * under a key it lacks, naming that key; a worker that meets such a run once running stops polling,
 * names the key, says so in /healthz, and as a process exits non-zero. The runs are not stalled by
 * it: they complete once a correctly keyed worker runs.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporalAddress } from '../setup/root-hooks';
import { eventually } from '../support/eventually';
import { getJson, pollStatus, publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';
import { startMain, type Child } from '../support/processes';

const RING_A = `ring-a:${randomBytes(32).toString('base64')}`;
const RING_B = `ring-b:${randomBytes(32).toString('base64')}`;
const HELLO = { name: 'keyed', steps: [{ name: 'Say', type: 'template', template: 'hello {{inputs.who}}' }] };

describe('a process whose data keys cannot open its task queue\'s runs', function () {
  this.timeout(240_000);
  const stops: (() => Promise<unknown>)[] = [];
  const dirs: string[] = [];
  after(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const freshDir = (): string => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-key-check-'));
    dirs.push(dir);
    return dir;
  };
  /** A gateway keyed with ring A on a task queue of its own, without a worker: its runs wait for one. */
  const gatewayA = async (): Promise<{ fg: TestFlowgate; p: Published }> => {
    const fg = await startTestFlowgate({ FLOWGATE_DATA_KEYS: RING_A, FLOWGATE_DATA_ENCRYPTION: 'on' }, { worker: false });
    stops.push(() => fg.stop());
    return { fg, p: await publishWorkflow(fg, HELLO) };
  };
  const start = async (fg: TestFlowgate, p: Published, who: string): Promise<string> => {
    const response = await trigger(fg, p, { who });
    assert.equal(response.status, 200, await response.clone().text());
    return response.headers.get('X-Pf-Run-Id') ?? '';
  };
  /** A worker process keyed with ring B on `taskQueue`. */
  const workerB = (taskQueue: string): Child => {
    const child = startMain({
      FLOWGATE_ROLE: 'worker', TEMPORAL_ADDRESS: temporalAddress(), FLOWGATE_TASK_QUEUE: taskQueue,
      FLOWGATE_DATA_DIR: freshDir(), FLOWGATE_DATA_KEYS: RING_B, FLOWGATE_DATA_ENCRYPTION: 'on',
    });
    stops.push(async () => {
      if (child.process.exitCode === null) child.process.kill('SIGKILL');
      await child.exited;
    });
    return child;
  };

  it('refuses to start while an open run is sealed under a key it lacks, naming the key; the run completes on a correctly keyed worker', async () => {
    const { fg, p } = await gatewayA();
    const runId = await start(fg, p, 'before');

    // in process (a gateway with its worker) and as a worker process
    await assert.rejects(
      startTestFlowgate({ FLOWGATE_DATA_KEYS: RING_B, FLOWGATE_DATA_ENCRYPTION: 'on' }, { restartOf: { dataDir: freshDir(), taskQueue: fg.taskQueue, adminToken: `fga_test_${randomUUID()}` } }),
      (err: Error) => err.message.includes(`run ${runId} of task queue "${fg.taskQueue}" is sealed with data key "ring-a", which this process does not have (it has "ring-b")`),
    );
    const child = workerB(fg.taskQueue);
    const exited = await child.exited;
    assert.equal(exited.code, 1, child.output());
    assert.match(child.output(), /failed to start: .*sealed with data key "ring-a", which this process does not have/);

    await fg.startWorker();
    assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');
  });

  it('a worker handed a run sealed under a key it lacks stops polling, names the key and says so in /healthz; the run completes on a correctly keyed worker', async () => {
    const { fg, p } = await gatewayA();
    // no open run yet: it starts
    const wrong = await startTestFlowgate({ FLOWGATE_DATA_KEYS: RING_B, FLOWGATE_DATA_ENCRYPTION: 'on' }, { restartOf: { dataDir: freshDir(), taskQueue: fg.taskQueue, adminToken: `fga_test_${randomUUID()}` } });
    stops.push(() => wrong.stop());
    assert.deepEqual((await getJson(wrong, '/healthz')).body, { status: 'ok', temporal: 'ok', registry: 'ok' });

    const runId = await start(fg, p, 'handed');
    const fault = await eventually(async () => wrong.workerFault(), 'the wrongly keyed worker stopping', 60_000);
    assert.match(fault.message, new RegExp(`run ${runId} of task queue "${fg.taskQueue}" is sealed with data key "ring-a", which this worker does not have \\(it has "ring-b"\\)`));
    const health = await getJson(wrong, '/healthz');
    assert.equal(health.status, 503);
    assert.deepEqual(health.body, { status: 'down', temporal: 'ok', registry: 'ok', worker: 'down' });

    const second = await start(fg, p, 'after');
    await fg.startWorker();
    assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');
    assert.equal((await pollStatus(fg, p, second)).status, 'COMPLETE');
  });

  it('a worker process handed such a run exits non-zero, naming the key; the run completes on a correctly keyed worker', async () => {
    const { fg, p } = await gatewayA();
    const child = workerB(fg.taskQueue);
    await child.waitForLine(/worker polling task queue/);
    const runId = await start(fg, p, 'process');
    const exited = await child.exited;
    assert.equal(exited.code, 1, child.output());
    assert.match(child.output(), new RegExp(`the worker stopped: run ${runId} of task queue "${fg.taskQueue}" is sealed with data key "ring-a", which this worker does not have`));
    await fg.startWorker();
    assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');
  });
});
