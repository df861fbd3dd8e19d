import assert from 'node:assert/strict';
import http from 'node:http';
import { writeFile } from 'node:fs/promises';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../../temporal/worker';
import { recordHistoryPath } from '../support/ci';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { listenOnLoopback, type LoopbackServer } from '../support/loopback';
import { clearHistory } from '../support/histories';

/**
 * A workflow using every construct of the workflow language. Its live history replays here; the
 * saved copy (test/workflows/histories/run-automation-flow-constructs.json, recorded with
 * FLOWGATE_RECORD_HISTORY) replays in bundle.test.ts with every other saved history.
 */
export function everyConstruct(upstreamUrl: string) {
  return {
    name: 'replay-every-construct',
    steps: [
      { name: 'Start', type: 'template', format: 'plaintext', template: 'start {{inputs.kind}}' },
      { name: 'Skipped', type: 'template', if: 'inputs.kind = "never"', template: 'x' },
      { name: 'Tolerated', type: 'code', source: 'throw new Error("expected")', onError: 'continue' },
      { name: 'Flaky', type: 'http', url: `${upstreamUrl}/flaky`, retry: { maxAttempts: 3, initialInterval: '100ms', backoff: 2, maxInterval: '1s', nonRetryable: ['HTTP_4XX'] } },
      {
        name: 'Route', type: 'branch',
        cases: [{ if: 'inputs.kind = "a"', steps: [{ name: 'A', type: 'template', format: 'plaintext', template: 'took a' }] }],
        default: [{ name: 'Other', type: 'template', format: 'plaintext', template: 'took default' }],
      },
      {
        name: 'Each', type: 'forEach', items: 'inputs.items', concurrency: 2,
        steps: [
          { name: 'Double', type: 'code', source: 'return item * 2' },
          { name: 'Odd only', type: 'template', format: 'plaintext', if: 'item % 2 = 1', template: 'odd {{item}}' },
        ],
      },
      {
        name: 'All', type: 'parallel',
        branches: [
          { steps: [{ name: 'Wait', type: 'delay', duration: '200ms' }] },
          { steps: [{ name: 'Now', type: 'template', format: 'plaintext', template: 'now' }] },
        ],
      },
      {
        name: 'Race', type: 'parallel', mode: 'first',
        branches: [
          { steps: [{ name: 'Long', type: 'delay', duration: '1h' }] },
          { steps: [{ name: 'Short', type: 'delay', duration: '100ms' }] },
        ],
      },
      { name: 'End', type: 'template', format: 'plaintext', template: '{{steps.6.result}} {{steps.3.exitCode}} {{steps.2.status}}' },
    ],
  };
}

describe('runAutomation replay: the workflow language', () => {
  let fg: TestFlowgate;
  let upstream: LoopbackServer;
  let calls = 0;

  before(async () => {
    fg = await startTestFlowgate();
    upstream = await listenOnLoopback(http.createServer((_req, res) => {
      calls++;
      res.statusCode = calls % 2 === 1 ? 503 : 200;
      res.end(calls % 2 === 1 ? 'busy' : 'ok');
    }));
  });
  after(async () => {
    await fg?.stop();
    await upstream?.close();
  });

  it('replays the history of a live run using every construct without non-determinism', async () => {
    const published = await publishWorkflow(fg, everyConstruct(upstream.url));
    const response = await trigger(fg, published, { kind: 'b', items: [1, 2, 3] }, { 'x-api-wait': 'true' });
    assert.equal(response.status, 200, await response.clone().text());
    const body = (await response.json()) as { status: string; results: { stepIndex: number; stepPath?: string; result: { result: string } }[] };
    assert.equal(body.status, 'COMPLETE', JSON.stringify(body));
    assert.equal(body.results.find((r) => r.stepIndex === 9 && r.stepPath === undefined)?.result.result, '["odd 1",4,"odd 3"] 1 SKIPPED');
    const runId = response.headers.get('X-Pf-Run-Id');
    assert.ok(runId);

    const history = await clearHistory(fg, runId);
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, runId);
    const recordTo = recordHistoryPath();
    if (recordTo) {
      await writeFile(recordTo, `${historyToJSON(history)}\n`, { flag: 'wx' });
    }
  });
});
