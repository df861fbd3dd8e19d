/**
 * Debounced and batched triggers (issue 51, docs/webhooks.md#debounce-and-batch) through the real
 * gateway, worker and Temporal: every call is answered 202 and the runs receive the collected
 * events in arrival order. (The pauses between calls are the burst under test, not waits for
 * something to happen.)
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { eventually } from '../support/eventually';
import { createTrigger, inputsOf, runsOf } from './webhook-support';

const ECHO = { name: 'shaped', steps: [{ name: 'Echo', type: 'template', format: 'plaintext', template: 'ok' }] };

interface ShapedInputs { events: { id: string; inputs: { n: number } }[]; shaping: { mode: string; count: number } }

function isShaped(value: unknown): value is ShapedInputs {
  return typeof value === 'object' && value !== null && Array.isArray(Object.getOwnPropertyDescriptor(value, 'events')?.value);
}

async function call(fg: TestFlowgate, p: Published, triggerId: string, n: number): Promise<number> {
  const response = await fg.request(`/ext/triggers/${triggerId}`, { method: 'POST', headers: { 'X-API-KEY': p.apiKey, 'Content-Type': 'application/json' }, body: JSON.stringify({ n }) });
  await response.arrayBuffer();
  return response.status;
}

async function shapedRuns(fg: TestFlowgate, triggerId: string, expected: number): Promise<ShapedInputs[]> {
  const runs = await eventually(async () => {
    const listed = await runsOf(fg.client, triggerId);
    return listed.length >= expected ? listed : undefined;
  }, `${expected} run(s) of trigger ${triggerId}`, 60_000, 250);
  const inputs: ShapedInputs[] = [];
  for (const runId of runs) {
    const value = await inputsOf(fg.client, runId);
    assert.ok(isShaped(value), `run ${runId} has the shaped input`);
    inputs.push(value);
  }
  return inputs;
}

describe('debounced and batched triggers', () => {
  let fg: TestFlowgate;
  let p: Published;
  before(async () => {
    fg = await startTestFlowgate();
    p = await publishWorkflow(fg, ECHO);
  });
  after(async () => {
    await fg?.stop();
  });

  it('debounce: 20 calls over 3 s with a 2 s quiet period make one run holding the 20 events in order', async () => {
    const triggerId = await createTrigger(fg, p.workflowId, { debounce: { quietSeconds: 2, maxWaitSeconds: 30 } });
    const statuses: number[] = [];
    for (let n = 1; n <= 20; n++) {
      statuses.push(await call(fg, p, triggerId, n));
      await sleep(150); // the burst: 20 calls spread over about 3 s
    }
    assert.deepEqual(new Set(statuses), new Set([202]));
    const [run, ...more] = await shapedRuns(fg, triggerId, 1);
    assert.deepEqual(run?.events.map((e) => e.inputs.n), Array.from({ length: 20 }, (_, i) => i + 1));
    assert.equal(run?.shaping.mode, 'debounce');
    assert.equal(more.length, 0);
    // still one run a moment after the quiet period (nothing else was pending)
    await sleep(2500); // the quiet period passing again: no second run may appear
    assert.equal((await runsOf(fg.client, triggerId)).length, 1);
  });

  it('batch: 25 calls with size 10 make runs of 10, 10 and 5 (the last after its maximum wait)', async () => {
    const triggerId = await createTrigger(fg, p.workflowId, { batch: { size: 10, maxWaitSeconds: 3 } });
    const statuses: number[] = [];
    for (let n = 1; n <= 25; n++) statuses.push(await call(fg, p, triggerId, n));
    assert.deepEqual(new Set(statuses), new Set([202]));
    const runs = await shapedRuns(fg, triggerId, 3);
    const batches = runs.map((r) => r.events.map((e) => e.inputs.n)).sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0));
    assert.deepEqual(batches.map((b) => b.length), [10, 10, 5]);
    assert.deepEqual(batches.flat(), Array.from({ length: 25 }, (_, i) => i + 1));
  });

  it('refuses a trigger with both, and a key expression that does not parse', async () => {
    const both = await fg.admin('POST', '/api/v1/triggers', { workflowId: p.workflowId, debounce: { quietSeconds: 1, maxWaitSeconds: 2 }, batch: { size: 2, maxWaitSeconds: 1 } });
    assert.equal(both.status, 400);
    const broken = await fg.admin('POST', '/api/v1/triggers', { workflowId: p.workflowId, batch: { size: 2, maxWaitSeconds: 1, key: 'inputs.(' } });
    assert.equal(broken.status, 400);
  });
});
