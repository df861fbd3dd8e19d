import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { temporalAddress } from '../setup/root-hooks';
import { getJson, pollStatus, publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { listenOnLoopback } from '../support/loopback';
import { startMain, type Child } from '../support/processes';
import { startReplica } from '../support/replicas';

/** Counts calls per path; `/slow` answers after a delay. */
async function countingServer(slowMs: number) {
  const calls: Record<string, number> = {};
  const server = http.createServer((req, res) => {
    const name = req.url ?? '/';
    calls[name] = (calls[name] ?? 0) + 1;
    if (name === '/slow') {
      const timer = setTimeout(() => res.end(`slow #${calls[name]}`), slowMs);
      res.on('close', () => clearTimeout(timer));
    } else {
      res.end(`fast #${calls[name]}`);
    }
  });
  return { calls, ...(await listenOnLoopback(server)) };
}

describe('a worker crash in the middle of a run', () => {
  let gateway: TestFlowgate;
  let worker: Child | undefined;

  before(async () => {
    gateway = await startTestFlowgate({}, { worker: false });
  });
  after(async () => {
    worker?.process.kill('SIGKILL');
    await gateway?.stop();
  });

  // the worker shares the in-process gateway's data dir: its blobs and keys
  const startWorker = async (): Promise<Child> => (await startReplica('worker', {
    TEMPORAL_ADDRESS: temporalAddress(), FLOWGATE_TASK_QUEUE: gateway.taskQueue,
    FLOWGATE_ADMIN_TOKEN: gateway.adminToken, FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true',
  }, { dataDir: gateway.dataDir })).child;

  it('loses nothing: the killed step runs again on a new worker, finished steps do not, and the run completes', async function () {
    this.timeout(120_000);
    const upstream = await countingServer(3000);
    try {
      const p = await publishWorkflow(gateway, {
        name: 'survives-crash',
        steps: [
          { name: 'Before', type: 'http', url: `${upstream.url}/before` },
          { name: 'Slow', type: 'http', url: `${upstream.url}/slow`, timeoutMs: 20_000 },
          { name: 'After', type: 'template', template: '{{steps.1.result}} then {{steps.2.result}}' },
        ],
      });
      worker = await startWorker();
      const runId = (await trigger(gateway, p, { n: 1 })).headers.get('X-Pf-Run-Id') ?? '';
      await pollStatus(gateway, p, runId, (s) => s.stepStatus['2'] === 'RUNNING', 30_000);
      await waitUntil(() => upstream.calls['/slow'] === 1);

      worker.process.kill('SIGKILL');
      await worker.exited;
      worker = await startWorker();

      const final = await pollStatus(gateway, p, runId, undefined, 90_000);
      assert.equal(final.status, 'COMPLETE');
      assert.deepEqual(final.stepStatus, { 1: 'COMPLETE', 2: 'COMPLETE', 3: 'COMPLETE' });
      assert.equal(upstream.calls['/before'], 1, 'a finished step is not run again');
      assert.equal(upstream.calls['/slow'], 2, 'the step the crash interrupted runs again');
      const { body } = await getJson<{ results: { resultUrls: Record<string, { url: string }> }[] }>(gateway, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
      const output = await (await fetch(body.results[2]?.resultUrls['output.txt']?.url ?? '')).text();
      assert.equal(output, 'fast #1 then slow #2');
    } finally {
      await upstream.close();
    }
  });

  it('leaves the admin tokens alone in a worker-only process started without FLOWGATE_ADMIN_TOKEN', async () => {
    const bare = startMain({
      FLOWGATE_ROLE: 'worker', TEMPORAL_ADDRESS: temporalAddress(), FLOWGATE_TASK_QUEUE: gateway.taskQueue,
      FLOWGATE_DATA_DIR: gateway.dataDir,
    });
    try {
      await bare.waitForLine(/worker polling task queue/);
      assert.doesNotMatch(bare.output(), /admin token/);
      assert.equal(existsSync(path.join(gateway.dataDir, 'admin-token')), false, 'no token was generated');
      assert.equal((await gateway.admin('POST', '/api/v1/api-keys', {})).status, 201, 'the gateway\'s token still works');
    } finally {
      bare.process.kill('SIGTERM');
      await bare.exited;
    }
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
