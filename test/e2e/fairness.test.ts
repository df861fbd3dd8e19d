/**
 * Fairness across organizations (issue 36) on the embedded Temporal: organization A starts 500
 * runs at once through its trigger, and organization B's single run, started just after, must
 * complete within a small multiple of its time on an idle system. Measured twice in one test: on
 * the suite's dev server, which runs with fairness (`matching.enableFairness`, the default of
 * temporal/dev-server.ts), and, for comparison, on a dev server of this test's own without it,
 * where B waits behind A's backlog. The figures are printed.
 *
 * Each run is one `http` step against a local server that answers after 50 ms, so a run costs two
 * workflow tasks and one activity task, the work whose queues fairness orders.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { EmbeddedTemporal } from '../../temporal/embedded';
import { startTestTemporal } from '../setup/root-hooks';
import { asAdminOf, publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';
import { listenOnLoopback, type LoopbackServer } from '../support/loopback';

const BURST = 500;
const STEP_MS = 50;
/**
 * B's latency behind A's burst, at most this multiple of its idle latency, with fairness. Measured
 * on the 2 shared cores of a development machine at load average ~17 (other agents' builds and
 * suites): B idle 160-200 ms; behind A's 500 with fairness 1.9 s (12x), without it 20.5 s (104x,
 * it waits for most of A's backlog). With fairness B's wait no longer grows with A's backlog, but
 * the worker, the gateway and Temporal share the cores A's burst saturates, and a worker finishes
 * the tasks it already holds (and its sticky queue, which Temporal keeps first-in first-out)
 * before B's: that CPU time is most of the 12x (14.1x in one clean-clone CI run). 25x keeps a
 * margin over it. The second check compares with a dev server without fairness, where B waits for
 * A's backlog: that wait depends on how fast the backlog drains on the machine of the moment
 * (20.5 s and 22.0 s here; 13.5, 9.4 and 7.6 s in clean-clone CI runs, against 1.3-4.0 s with
 * fairness), so the check is only that fairness made B faster; the figures are printed.
 */
const FAIR_FACTOR = 25;
/**
 * An idle run on a quiet machine may take as little as 60 ms; below this floor the multiple
 * would measure scheduler noise rather than queueing (25 x 200 ms = 5 s).
 */
const IDLE_FLOOR_MS = 200;
/** The burst's 500 calls come at once, from one address (as from behind a load balancer). */
const ENV = { FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS: '0' };

interface Figures {
  idleMs: number;
  loadedMs: number;
  /** from the first of A's starts until all of A's runs completed */
  drainMs: number;
  /** from the first of A's starts until the last was answered */
  startedMs: number;
}

/** Starts a run of `p` through its trigger without waiting (an asynchronous call answers 200 and the run ID); its run ID. */
async function start(fg: TestFlowgate, p: Published): Promise<string> {
  const response = await trigger(fg, p, {});
  const runId = response.headers.get('X-Pf-Run-Id');
  if (response.status !== 200 || !runId) throw new Error(`trigger answered ${response.status}: ${await response.text()}`);
  return runId;
}

/** One run of `p` from the trigger call until Temporal has its result, in ms. */
async function timedRun(fg: TestFlowgate, p: Published): Promise<number> {
  const began = performance.now();
  const runId = await start(fg, p);
  const summary = (await fg.client.workflow.getHandle(runId).result()) as { status: string };
  assert.equal(summary.status, 'COMPLETE');
  return performance.now() - began;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function organization(fg: TestFlowgate, name: string, upstream: LoopbackServer): Promise<Published> {
  const org = await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: `${name}-${Date.now()}` });
  assert.equal(org.status, 201);
  return publishWorkflow(asAdminOf(fg, org.body.adminToken), { name: 'call', steps: [{ name: 'Call', type: 'http', url: `${upstream.url}/work` }] });
}

/** B idle (median of three after a warm-up), then A's burst and B's run just after it. */
async function measure(fg: TestFlowgate, upstream: LoopbackServer): Promise<Figures> {
  const a = await organization(fg, 'tenant-a', upstream);
  const b = await organization(fg, 'tenant-b', upstream);
  await timedRun(fg, a);
  await timedRun(fg, b);
  const idle: number[] = [];
  for (let i = 0; i < 3; i++) idle.push(await timedRun(fg, b));

  const burstBegan = performance.now();
  const runIds = await Promise.all(Array.from({ length: BURST }, () => start(fg, a)));
  const startedMs = performance.now() - burstBegan;
  const loadedMs = await timedRun(fg, b);
  const summaries = await Promise.all(runIds.map((id) => fg.client.workflow.getHandle(id).result() as Promise<{ status: string }>));
  const drainMs = performance.now() - burstBegan;
  assert.ok(summaries.every((s) => s.status === 'COMPLETE'), 'every run of the burst completes');
  return { idleMs: median(idle), loadedMs, drainMs, startedMs };
}

function line(label: string, f: Figures): string {
  return `${label}: B idle ${f.idleMs.toFixed(0)} ms, B behind A's ${BURST} ${f.loadedMs.toFixed(0)} ms (${(f.loadedMs / f.idleMs).toFixed(1)}x), A's ${BURST} started within ${(f.startedMs / 1000).toFixed(1)} s, done after ${(f.drainMs / 1000).toFixed(1)} s`;
}

describe('fairness across organizations on the embedded Temporal', function () {
  // about 2 minutes on a busy 2-core machine: two bursts of 500 runs and their drain
  this.timeout(300_000);
  let upstream: LoopbackServer;
  let unfairTemporal: EmbeddedTemporal | undefined;
  const flowgates: TestFlowgate[] = [];

  before(async () => {
    upstream = await listenOnLoopback(http.createServer((_req, res) => {
      setTimeout(() => res.end('ok'), STEP_MS);
    }));
  });
  after(async () => {
    for (const fg of flowgates) await fg.stop();
    await unfairTemporal?.stop();
    await upstream?.close();
  });

  it(`keeps one organization's run within ${FAIR_FACTOR}x its idle time behind another's ${BURST}, and faster than without fairness`, async () => {
    // Without fairness first, on a server of its own, so the fair measurement is not taken while
    // that server is still draining.
    unfairTemporal = await startTestTemporal({ fairness: false });
    assert.equal(unfairTemporal.fairness, false);
    const unfairFg = await startTestFlowgate({ ...ENV, TEMPORAL_ADDRESS: unfairTemporal.address });
    flowgates.push(unfairFg);
    const unfair = await measure(unfairFg, upstream);
    console.log(`      ${line('without fairness', unfair)}`);
    await unfairFg.stop();
    flowgates.pop();
    await unfairTemporal.stop();
    unfairTemporal = undefined;

    const fg = await startTestFlowgate(ENV);
    flowgates.push(fg);
    const fair = await measure(fg, upstream);

    console.log(`      ${line('with fairness   ', fair)}`);
    const bound = FAIR_FACTOR * Math.max(fair.idleMs, IDLE_FLOOR_MS);
    assert.ok(fair.loadedMs <= bound, `with fairness B took ${fair.loadedMs.toFixed(0)} ms behind the burst, over ${FAIR_FACTOR}x its idle ${fair.idleMs.toFixed(0)} ms (${line('without fairness', unfair)})`);
    assert.ok(fair.loadedMs < unfair.loadedMs,
      `with fairness B took ${fair.loadedMs.toFixed(0)} ms, not faster than the ${unfair.loadedMs.toFixed(0)} ms without it`);
  });
});
