/**
 * A worker's memory budget (FLOWGATE_WORKER_MEMORY_MB, src/config/worker-memory.ts; issue 46): on
 * the smallest budget (256 MB) the thread that runs the workflows gets its share as its V8 heap
 * limit, not V8's default (a sixth of the machine's memory), and a worker holding three times as
 * many paused runs as the cache that budget buys evicts and replays them instead of running out of
 * heap: every run completes after its approval, and the worker never stopped. Real Temporal (the
 * suite's), real HTTP on loopback.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import inspector from 'node:inspector';
import v8 from 'node:v8';
import { loadConfig } from '../../src/config/config';
import { createLogger } from '../../src/observability/logger';
import { pollStatus, publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';

const MiB = 1024 * 1024;
const BUDGET = { FLOWGATE_WORKER_MEMORY_MB: '256' };

/** The V8 heap limit (MiB) of each worker thread of this process, by its script's URL, read through the inspector. */
async function threadHeapLimits(): Promise<{ url: string; limitMiB: number }[]> {
  const session = new inspector.Session();
  session.connect();
  const attached: { sessionId: string; url: string }[] = [];
  const answers = new Map<number, (result: unknown) => void>();
  session.on('NodeWorker.attachedToWorker', (message: { params: { sessionId: string; workerInfo: { url: string } } }) => {
    attached.push({ sessionId: message.params.sessionId, url: message.params.workerInfo.url });
  });
  session.on('NodeWorker.receivedMessageFromWorker', (message: { params: { message: string } }) => {
    const parsed = JSON.parse(message.params.message) as { id?: number; result?: unknown };
    if (parsed.id !== undefined) answers.get(parsed.id)?.(parsed.result);
  });
  try {
    await new Promise<void>((resolve, reject) => session.post('NodeWorker.enable', { waitForDebuggerOnStart: false }, (err) => (err ? reject(err) : resolve())));
    // the attach events of threads already running arrive right after enable
    await new Promise((resolve) => setTimeout(resolve, 500));
    let id = 0;
    return await Promise.all(attached.map(async ({ sessionId, url }) => {
      const asked = ++id;
      const answered = new Promise<unknown>((resolve) => answers.set(asked, resolve));
      session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({
        id: asked, method: 'Runtime.evaluate', params: { expression: "process.getBuiltinModule('node:v8').getHeapStatistics().heap_size_limit", returnByValue: true },
      }) });
      const result = await Promise.race([answered, new Promise((resolve) => setTimeout(resolve, 10_000, undefined))]);
      const value = (result as { result?: { value?: unknown } } | undefined)?.result?.value;
      return { url, limitMiB: typeof value === 'number' ? value / MiB : NaN };
    }));
  } finally {
    session.disconnect();
  }
}

describe('worker memory: FLOWGATE_WORKER_MEMORY_MB bounds the workflow thread and its cache', function () {
  this.timeout(600_000);
  const plan = loadConfig(BUDGET).temporal.workerMemory;
  const logged: string[] = [];
  let fg: TestFlowgate;

  before(async () => {
    fg = await startTestFlowgate(BUDGET, { log: createLogger('warn', {}, (line) => logged.push(line)) });
  });
  after(async () => {
    await fg?.stop();
  });

  it('gives the workflow thread the budget\'s share as its heap limit, and leaves the process\'s own heap as it started', async () => {
    assert.deepEqual(plan, { budgetMb: 256, workflowHeapMb: 102, maxCachedWorkflows: 72, sandboxMb: 64 });
    const threads = await threadHeapLimits();
    const workflowThreads = threads.filter((t) => t.url.includes('workflow-worker-thread'));
    assert.equal(workflowThreads.length, 1, JSON.stringify(threads));
    const [thread] = workflowThreads;
    // the old generation's limit plus the young generation's: three semi-spaces of 16 MiB
    assert.ok(thread && thread.limitMiB >= plan.workflowHeapMb && thread.limitMiB <= plan.workflowHeapMb + 48, `the workflow thread's heap limit is ${thread?.limitMiB} MiB`);
    // the flag is cleared once the thread runs: this process's main heap and later threads keep V8's own sizing
    assert.ok(v8.getHeapStatistics().heap_size_limit / MiB > plan.workflowHeapMb + 64);
  });

  it('holds three times as many paused runs as its cache, evicting instead of running out of heap, and completes them all after their approvals', async () => {
    const runs = 3 * plan.maxCachedWorkflows;
    const p: Published = await publishWorkflow(fg, {
      name: `paused-${randomUUID().slice(0, 8)}`,
      steps: [
        // a little state in each run: its inputs and a step's result
        { name: 'Prepare', type: 'template', template: '{{inputs.pad}} {{inputs.n}}' },
        { name: 'Sign-off', type: 'approval', approvers: ['ann@example.com'], message: 'Go on with {{inputs.n}}?', timeout: '30m' },
        { name: 'Done', type: 'template', template: 'done {{inputs.n}} after {{steps.2.json.outcome}}' },
      ],
    });
    const runIds: string[] = [];
    for (let start = 0; start < runs; start += 9) {
      const batch = await Promise.all(Array.from({ length: Math.min(9, runs - start) }, async (_, i) => {
        const response = await trigger(fg, p, { n: start + i, pad: 'x'.repeat(2000) }, { 'x-api-wait': 'false' });
        assert.ok(response.status === 200 || response.status === 202, `trigger: ${response.status} ${await response.text()}`);
        const runId = response.headers.get('X-Pf-Run-Id');
        assert.ok(runId);
        return runId;
      }));
      runIds.push(...batch);
    }
    for (const runId of runIds) await pollStatus(fg, p, runId, (s) => s.status === 'PAUSED', 300_000);

    // the decisions reach evicted runs too: those replay their history first
    for (let start = 0; start < runIds.length; start += 9) {
      await Promise.all(runIds.slice(start, start + 9).map(async (runId) => {
        const response = await fg.request(`/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/approval`, {
          method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decision: 'approve', approver: 'ann@example.com' }),
        });
        assert.ok(response.status < 300, `decision: ${response.status} ${await response.text()}`);
      }));
    }
    for (const runId of runIds) {
      const status = await pollStatus(fg, p, runId, undefined, 300_000);
      assert.equal(status.status, 'COMPLETE', `run ${runId}: ${JSON.stringify(status)}`);
    }
    assert.deepEqual(logged.filter((line) => /stopped|heap|memory/i.test(line)), [], 'the worker never stopped');
  });
});
