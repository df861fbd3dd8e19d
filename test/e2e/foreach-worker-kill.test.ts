import assert from 'node:assert/strict';
import http from 'node:http';
import { temporalAddress } from '../setup/root-hooks';
import { pollStatus, publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { listenOnLoopback, type LoopbackServer } from '../support/loopback';
import { startMain, type Child } from '../support/processes';

/**
 * A forEach survives its worker killed with SIGKILL: in the run's own workflow (50 items, 5 at a
 * time) and in child workflows of 100-item chunks (250 items, 10 at a time). Each item is an http
 * call to a loopback receiver that notes every request and its idempotency key.
 */
interface FanOutCase {
  title: string;
  items: number;
  concurrency: number;
  /** how long the receiver takes to answer one call (ms) */
  callMs: number;
  /** the kill falls once this many items have answered */
  killAfter: number;
  /** at least this many must have answered a second before the kill */
  finishedBeforeKill: number;
  /** repeated calls allowed (the calls in flight around the kill) */
  maxRepeats: number;
  /** the items ran in chunk workflows (and not in the run's own) */
  chunked: boolean;
}

const CASES: FanOutCase[] = [
  { title: 'a forEach of 50 items, 5 at a time', items: 50, concurrency: 5, callMs: 700, killAfter: 15, finishedBeforeKill: 5, maxRepeats: 10, chunked: false },
  { title: 'a forEach of 250 items in child workflows, 10 at a time', items: 250, concurrency: 10, callMs: 400, killAfter: 130, finishedBeforeKill: 100, maxRepeats: 20, chunked: true },
];

for (const c of CASES) describe(`${c.title}, survives its worker killed with SIGKILL`, () => {
  let gateway: TestFlowgate;
  let worker: Child | undefined;
  let receiver: LoopbackServer;
  /** per item: how many requests arrived, their idempotency keys, and when a response was last sent */
  const seen = new Map<number, { count: number; keys: Set<string>; answeredAt?: number }>();

  before(async () => {
    gateway = await startTestFlowgate({}, { worker: false });
    receiver = await listenOnLoopback(http.createServer((req, res) => {
      const item = Number(/\/item\/(\d+)/.exec(req.url ?? '')?.[1]);
      const entry = seen.get(item) ?? { count: 0, keys: new Set<string>() };
      entry.count++;
      entry.keys.add(String(req.headers['idempotency-key']));
      seen.set(item, entry);
      // Each call takes a while, so the kill falls with calls in flight.
      setTimeout(() => {
        res.on('finish', () => {
          entry.answeredAt = Date.now();
        });
        res.end(`done ${item}`);
      }, c.callMs);
    }));
  });
  after(async () => {
    worker?.process.kill('SIGKILL');
    await gateway?.stop();
    await receiver?.close();
  });

  const startWorker = async (): Promise<Child> => {
    const child = startMain({
      FLOWGATE_ROLE: 'worker', TEMPORAL_ADDRESS: temporalAddress(), FLOWGATE_TASK_QUEUE: gateway.taskQueue,
      FLOWGATE_DATA_DIR: gateway.dataDir, FLOWGATE_ADMIN_TOKEN: gateway.adminToken, FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true',
    });
    await child.waitForLine(/worker polling task queue/);
    return child;
  };

  it('completes with results in order, every item ran, and no item that had finished before the kill ran again', async function () {
    this.timeout(240_000);
    const p = await publishWorkflow(gateway, {
      name: `fan-out-${c.items}`,
      steps: [{
        name: 'Each', type: 'forEach', items: `[1..${c.items}]`, concurrency: c.concurrency,
        steps: [{ name: 'Call', type: 'http', method: 'POST', url: `${receiver.url}/item/{{item}}` }],
      }],
    });
    worker = await startWorker();
    const response = await trigger(gateway, p, {});
    assert.equal(response.status, 200, await response.clone().text());
    const runId = response.headers.get('X-Pf-Run-Id');
    assert.ok(runId);

    const deadline = Date.now() + 60_000;
    const answered = () => [...seen.values()].filter((e) => e.answeredAt !== undefined).length;
    while (answered() < c.killAfter && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const midway = await pollStatus(gateway, p, runId, () => true);
    assert.match((midway.stepInfo['1'] as { progress?: string }).progress ?? '', new RegExp(`^\\d+/${c.items} done$`));
    worker.process.kill('SIGKILL');
    const killedAt = Date.now();
    await worker.exited;
    const answeredBeforeKill = [...seen.entries()].filter(([, e]) => e.answeredAt !== undefined && e.answeredAt < killedAt - 1000).map(([item]) => item);
    assert.ok(answeredBeforeKill.length >= c.finishedBeforeKill, `only ${answeredBeforeKill.length} items had finished well before the kill`);
    worker = await startWorker();

    const final = await pollStatus(gateway, p, runId, undefined, 180_000);
    assert.equal(final.status, 'COMPLETE', JSON.stringify(final));
    assert.equal((final.stepInfo['1'] as { progress?: string }).progress, `${c.items}/${c.items} done`);
    for (let item = 1; item <= c.items; item++) {
      const entry = seen.get(item);
      assert.ok(entry && entry.count >= 1, `item ${item} never ran`);
      // a repeat is the same request again (a call in flight at the kill), under the same key
      assert.equal(entry.keys.size, 1, `item ${item} was sent under ${entry.keys.size} idempotency keys`);
    }
    for (const item of answeredBeforeKill) assert.equal(seen.get(item)?.count, 1, `item ${item} finished before the kill but ran again`);
    const repeats = [...seen.values()].reduce((sum, e) => sum + e.count - 1, 0);
    assert.ok(repeats <= c.maxRepeats, `${repeats} repeated calls: more than the calls in flight around the kill`);

    const results = await gateway.request(`/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
    const body = (await results.json()) as { results: { stepIndex: number; stepPath?: string; resultUrls?: Record<string, { url: string }> }[] };
    const own = body.results.find((r) => r.stepPath === undefined);
    assert.ok(own?.resultUrls?.['output.txt']);
    const values = (await (await fetch(own.resultUrls['output.txt'].url)).json()) as unknown[];
    assert.deepEqual(values, Array.from({ length: c.items }, (_, i) => `done ${i + 1}`));
    if (c.chunked) {
      // The chunk that was in flight was replayed on the new worker, not started again.
      const chunk2 = await gateway.client.workflow.getHandle(`${runId}-foreach-1-2`).describe();
      assert.equal(chunk2.status.name, 'COMPLETED');
    } else {
      // In the run's own workflow every item's inner step is a result of the run.
      assert.equal(body.results.filter((r) => r.stepPath !== undefined).length, c.items);
    }
  });
});
