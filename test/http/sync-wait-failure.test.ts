/**
 * A synchronous trigger call whose run is started, and then Temporal fails while the call waits for
 * the result (UNAVAILABLE, say): the answer is the 202 polling handle of the started run, never a
 * 503 (which says nothing was done), and the run completes. The gateway here is a second app over a
 * real flowgate's registry and worker; only its RunService's wait is made to fail.
 */
import assert from 'node:assert/strict';
import { ServiceError } from '@temporalio/client';
import { silentLogger } from '../../src/observability/logger';
import { RunService, type RunMemo, type WaitOutcome } from '../../src/runs/run-service';
import { startBareGateway } from '../support/bare-gateway';
import { echoInputsWorkflow } from '../support/echo-workflow';
import { pollStatus, publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import type { LoopbackServer } from '../support/loopback';

/** The real RunService, whose wait for a run's end fails as a dropped connection to Temporal would. */
class WaitFailsRunService extends RunService {
  waits = 0;

  override async waitFor(_runId: string, _windowMs: number, _memo?: RunMemo): Promise<WaitOutcome> {
    this.waits++;
    throw new ServiceError('14 UNAVAILABLE: Connection dropped', { cause: Object.assign(new Error('14 UNAVAILABLE: Connection dropped'), { code: 14 }) });
  }
}

describe('trigger: a synchronous call whose wait fails after its run started', () => {
  let fg: TestFlowgate;
  let p: Published;
  let gateway: LoopbackServer;
  let runs: WaitFailsRunService;

  before(async () => {
    fg = await startTestFlowgate();
    p = await publishWorkflow(fg, echoInputsWorkflow);
    runs = new WaitFailsRunService(fg.client, fg.taskQueue, silentLogger);
    gateway = await startBareGateway(fg, { runs });
  });
  after(async () => {
    await gateway?.close();
    await fg?.stop();
  });

  it('answers 202 with the polling handle of the started run, and the run completes', async () => {
    const res = await fetch(`${gateway.url}/ext/triggers/${p.triggerId}`, {
      method: 'POST', headers: { 'X-API-KEY': p.apiKey, 'Content-Type': 'application/json', 'x-api-wait': 'true' }, body: JSON.stringify({ note: 'waited' }),
    });
    const text = await res.text();
    assert.equal(res.status, 202, text);
    assert.equal(runs.waits, 1, 'the gateway waited for the run');
    const runId = res.headers.get('x-pf-run-id') ?? '';
    assert.match(runId, /^[0-9a-f-]{36}$/);
    assert.ok(res.headers.get('location')?.endsWith(`/runs/${p.workflowId}/${runId}/status`), `Location: ${String(res.headers.get('location'))}`);
    const body: unknown = JSON.parse(text);
    assert.ok(typeof body === 'object' && body !== null && 'runId' in body && body.runId === runId && 'status' in body && body.status === 'RUNNING', text);
    const status = await pollStatus(fg, p, runId);
    assert.equal(status.status, 'COMPLETE');
  });
});
