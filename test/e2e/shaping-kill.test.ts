/**
 * A debounced trigger survives its gateway and its worker killed with SIGKILL in the middle of the
 * window (issue 51, docs/webhooks.md#debounce-and-batch): the gateway and the worker are child
 * processes (FLOWGATE_ROLE) sharing the data dir of an in-process flowgate without a worker, which
 * creates the workflow and the trigger and lists the runs. 20 calls with a 2 s quiet period, the
 * kill falling after the 10th answer with the 11th in flight, a restart of both: exactly one run,
 * holding every event that was answered 202, in the order the calls were made. (The pauses between
 * calls are the burst under test, not waits for something to happen.)
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { temporalAddress } from '../setup/root-hooks';
import { eventually } from '../support/eventually';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { startBeside, type Replica, type Role } from '../support/replicas';
import { createTrigger, inputsOf, runsOf } from '../triggers/webhook-support';

const ECHO = { name: 'shaped-kill', steps: [{ name: 'Echo', type: 'template', format: 'plaintext', template: 'ok' }] };
const SPACING_MS = 150;

interface ShapedInputs { events: { id: string; inputs: { n: number } }[]; shaping: { mode: string; count: number } }

function isShaped(value: unknown): value is ShapedInputs {
  return typeof value === 'object' && value !== null && Array.isArray(Object.getOwnPropertyDescriptor(value, 'events')?.value);
}

describe('a debounced trigger whose gateway and worker are killed with SIGKILL in the middle of the window', () => {
  let fg: TestFlowgate;
  let p: Published;
  const replicas: Replica[] = [];

  before(async () => {
    fg = await startTestFlowgate({}, { worker: false });
    p = await publishWorkflow(fg, ECHO);
  });
  after(async () => {
    for (const replica of replicas) await replica.kill();
    await fg?.stop();
  });

  // each process shares the in-process flowgate's data dir: its registry (SQLite), blobs and keys (startBeside)
  const start = async (role: Role): Promise<Replica> => {
    const replica = await startBeside(fg, temporalAddress(), role);
    replicas.push(replica);
    return replica;
  };

  it('still makes exactly one run, holding every event answered 202 in order', async function () {
    this.timeout(600_000);
    const triggerId = await createTrigger(fg, p.workflowId, { debounce: { quietSeconds: 2, maxWaitSeconds: 120 } });
    const first = await Promise.all([start('gateway'), start('worker')]);
    let gateway = first[0];
    const worker = first[1];
    /** per call number: 202, another status, or 0 when the connection failed (the gateway was down or died mid-call) */
    const answers = new Map<number, number>();
    const call = async (n: number): Promise<void> => {
      try {
        const response = await fetch(`${gateway.url}/ext/triggers/${triggerId}`, {
          method: 'POST', headers: { 'X-API-KEY': p.apiKey, 'Content-Type': 'application/json' }, body: JSON.stringify({ n }),
        });
        await response.arrayBuffer();
        answers.set(n, response.status);
      } catch {
        answers.set(n, 0);
      }
    };

    for (let n = 1; n <= 10; n++) {
      await call(n);
      await sleep(SPACING_MS); // the burst
    }
    assert.deepEqual([...answers.values()], Array.from({ length: 10 }, () => 202), 'the first ten were answered 202');
    // the 11th in flight as both die: it may be answered 202 or not, and may be in the run or not
    const inFlight = call(11);
    await Promise.all([gateway.kill(), worker.kill()]);
    await inFlight;
    // a call while the gateway is down is not answered
    await call(12);
    assert.equal(answers.get(12), 0);

    // the gateway first, then the rest of the burst while the worker comes back: the quiet period
    // counts in the workflow's time, so the window stays open until the worker is back and quiet
    gateway = await start('gateway');
    const workerBack = start('worker');
    for (let n = 13; n <= 20; n++) {
      await call(n);
      await sleep(SPACING_MS); // the burst, resumed
    }
    await workerBack;
    for (const n of [13, 14, 15, 16, 17, 18, 19, 20]) assert.equal(answers.get(n), 202, `call ${n} was answered 202 by the restarted gateway`);

    const [runId, ...more] = await eventually(async () => {
      const listed = await runsOf(fg.client, triggerId);
      return listed.length >= 1 ? listed : undefined;
    }, `the run of trigger ${triggerId}`, 240_000, 250);
    assert.ok(runId);
    const inputs = await inputsOf(fg.client, runId);
    assert.ok(isShaped(inputs), `run ${runId} has the shaped input`);
    const numbers = inputs.events.map((e) => e.inputs.n);
    const answered = [...answers.entries()].filter(([, status]) => status === 202).map(([n]) => n).sort((a, b) => a - b);
    // every event answered 202 is in the run; nothing else but the one in flight at the kill
    for (const n of answered) assert.ok(numbers.includes(n), `event ${n} (answered 202) is in the run: ${JSON.stringify(numbers)}`);
    assert.ok(numbers.every((n) => answered.includes(n) || n === 11), `only answered events (and the one in flight) are in the run: ${JSON.stringify(numbers)}`);
    assert.deepEqual(numbers, [...numbers].sort((a, b) => a - b), 'in the order the calls were made');
    assert.equal(new Set(numbers).size, numbers.length, 'each event once');
    assert.equal(inputs.shaping.mode, 'debounce');
    assert.equal(inputs.shaping.count, numbers.length);
    assert.equal(more.length, 0, 'exactly one run');
    // still one run after the quiet period has passed again (nothing else was pending)
    await sleep(3000); // the quiet period passing again: no second run may appear
    assert.equal((await runsOf(fg.client, triggerId)).length, 1);
    // the worker ran it to the end
    await eventually(async () => {
      const { body } = await fg.admin<{ status: string }>('GET', `/api/v1/runs/${runId}`);
      return body.status === 'COMPLETE' ? body : undefined;
    }, `run ${runId} completes`, 120_000, 500);
  });
});
