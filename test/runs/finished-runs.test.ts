/**
 * Finished runs are served without Temporal: a closed run's view is kept in the gateway and
 * written once to the registry, so its status and results answer with the Temporal server
 * stopped, on the gateway that saw the run close and on a replica that never did. A dedicated dev
 * server (with a database file, so it can be started again on the same port) is stopped here;
 * the suite's shared one is left alone.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EmbeddedTemporal } from '../../temporal/embedded';
import { getJson, publishWorkflow, pollStatus, startTestFlowgate, trigger, type StatusBody, type TestFlowgate } from '../support/flowgate';
import { freeTemporalFrontendPort, startTestTemporal } from '../setup/root-hooks';

const hello = { name: 'hello', steps: [{ name: 'Say', type: 'template', format: 'plaintext', template: 'hello {{inputs.who}}' }] };

describe('finished runs without Temporal', function () {
  this.timeout(180_000);
  let dbDir: string;
  let port: number;
  let dev: EmbeddedTemporal | undefined;
  let fg: TestFlowgate | undefined;
  let replica: TestFlowgate | undefined;

  const startDev = async (): Promise<EmbeddedTemporal> => startTestTemporal({ port, dbFile: path.join(dbDir, 'temporal.sqlite') });

  before(async () => {
    dbDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-finished-runs-'));
    port = await freeTemporalFrontendPort();
    dev = await startDev();
  });
  after(async () => {
    // Temporal back first, so the gateways' workers and clients shut down cleanly.
    if (!dev) dev = await startDev().catch(() => undefined);
    await replica?.stop(true);
    await fg?.stop();
    await dev?.stop();
    rmSync(dbDir, { recursive: true, force: true });
  });

  it('serves the status and results of a finished run with the Temporal server stopped, on this gateway and on another replica', async () => {
    const address = `127.0.0.1:${port}`;
    fg = await startTestFlowgate({ TEMPORAL_ADDRESS: address });
    replica = await startTestFlowgate({ TEMPORAL_ADDRESS: address }, { restartOf: fg, worker: false });
    const p = await publishWorkflow(fg, hello);
    // One run finished through a sync call, one through an async call and polling.
    const sync = await trigger(fg, p, { who: 'sync' }, { 'x-api-wait': 'true' });
    assert.equal(sync.status, 200);
    const syncRunId = sync.headers.get('X-Pf-Run-Id') ?? '';
    const started = await trigger(fg, p, { who: 'async' });
    assert.equal(started.status, 200);
    const asyncRunId = started.headers.get('X-Pf-Run-Id') ?? '';
    assert.equal((await pollStatus(fg, p, asyncRunId)).status, 'COMPLETE');

    await dev!.stop();
    dev = undefined;

    for (const [name, on] of [['the gateway that saw them close', fg], ['a replica that never did', replica]] as const) {
      for (const [runId, who] of [[syncRunId, 'sync'], [asyncRunId, 'async']] as const) {
        const base = `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}`;
        const status = await getJson<StatusBody>(on, `${base}/status`);
        assert.equal(status.status, 200, `${name}, ${who} run: ${JSON.stringify(status.body)}`);
        assert.equal(status.body.status, 'COMPLETE');
        assert.deepEqual(status.body.stepStatus, { 1: 'COMPLETE' });
        const results = await getJson<{ status: string; results: { stepIndex: number; exitCode: number; resultUrls: Record<string, { url: string }> }[] }>(on, `${base}/results`);
        assert.equal(results.status, 200, `${name}, ${who} run`);
        assert.equal(results.body.status, 'COMPLETE');
        assert.equal(results.body.results[0]?.exitCode, 0);
        const output = await fetch(results.body.results[0]?.resultUrls['output.txt']?.url ?? '');
        assert.equal(await output.text(), `hello ${who}`, 'its output.txt link serves the result');
        // The kept view is still scoped to its organization and automation.
        const other = await getJson(on, `/ext/webhook/${p.apiKey}/runs/wf_other/${runId}/status`);
        assert.equal(other.status, 404);
      }
    }
  });
});
