/**
 * A quiet organization under FLOWGATE_ORG_MAX_RUNNING while another floods (issue 48): the limit
 * is per organization, so the quiet one's run must not wait for the flooding one's slots. Measured
 * this week: with the limit at 50 and 2,000 runs of another organization queued, the quiet run
 * waited 25-41 s for its own, free, slot: every hop of its way to the slot (the acquireSlot
 * activity, the semaphore's workflow task, the grant's workflow task) queued behind the flood's
 * tasks. On the suite's dev server, with a smaller flood; B's history is printed as a timeline
 * when the bound is missed.
 *
 * The run now asks in a local activity within its first workflow task (no activity task, no second
 * workflow task): 9.3 s -> 6.4 s behind 300 runs here (idle 170-230 ms, load average ~35 on 2
 * cores). What is left is the worker itself: each of the quiet run's three workflow tasks waits
 * 1.5-2 s inside a worker that holds dozens of the flood's tasks (its history shows the time
 * between WorkflowTaskStarted and WorkflowTaskCompleted). Issue 48's target, 3x its idle time, is
 * not met; the bound below only catches a return of the old hops (a regression to 25-41 s).
 */
import assert from 'node:assert/strict';
import { asAdminOf, publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';

const FLOOD = 300;
const LIMIT = 10;
/** B's run behind the flood, at most this multiple of its idle time (or of IDLE_FLOOR_MS): see above. */
const FACTOR = 60;
const IDLE_FLOOR_MS = 300;

const ONE_STEP = (name: string) => ({ name, steps: [{ name: 'Hello', type: 'template', format: 'plaintext', template: 'hi' }] });

async function start(fg: TestFlowgate, p: Published): Promise<string> {
  const response = await trigger(fg, p, {});
  const runId = response.headers.get('X-Pf-Run-Id');
  if (response.status !== 200 || !runId) throw new Error(`trigger answered ${response.status}: ${await response.text()}`);
  return runId;
}

async function timedRun(fg: TestFlowgate, p: Published): Promise<{ ms: number; runId: string; began: number }> {
  const began = Date.now();
  const runId = await start(fg, p);
  await fg.client.workflow.getHandle(runId).result();
  return { ms: Date.now() - began, runId, began };
}

/** The run's history events as `+ms type`, from `began`. */
async function timeline(fg: TestFlowgate, runId: string, began: number): Promise<string> {
  const history = await fg.client.workflow.getHandle(runId).fetchHistory();
  return (history.events ?? []).map((e) => {
    const at = Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
    return `+${at - began} ${String(e.eventType)}`;
  }).join('\n');
}

describe(`a quiet organization under FLOWGATE_ORG_MAX_RUNNING=${LIMIT} while another floods`, function () {
  this.timeout(300_000);
  let fg: TestFlowgate;

  before(async () => {
    fg = await startTestFlowgate({ FLOWGATE_ORG_MAX_RUNNING: String(LIMIT), FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS: '0' });
  });
  after(async () => {
    await fg?.stop();
  });

  it(`asks for its own free slot within its first workflow task: its run behind ${FLOOD} queued runs of another organization stays within ${FACTOR}x its idle time`, async () => {
    const org = async (name: string): Promise<Published> => {
      const made = await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: `${name}-${Date.now()}` });
      assert.equal(made.status, 201);
      return publishWorkflow(asAdminOf(fg, made.body.adminToken), ONE_STEP(name));
    };
    const a = await org('flooding');
    const b = await org('quiet');
    await timedRun(fg, a);
    await timedRun(fg, b);
    const idle: number[] = [];
    for (let i = 0; i < 3; i++) idle.push((await timedRun(fg, b)).ms);
    const idleMs = [...idle].sort((x, y) => x - y)[1]!;

    const flood = await Promise.all(Array.from({ length: FLOOD }, () => start(fg, a)));
    const loaded = await timedRun(fg, b);
    const bound = FACTOR * Math.max(idleMs, IDLE_FLOOR_MS);
    const line = `quiet run idle ${idleMs} ms, behind the flood ${loaded.ms} ms (${(loaded.ms / idleMs).toFixed(1)}x)`;
    console.log(`      ${line}`);
    const shown = await timeline(fg, loaded.runId, loaded.began);
    // no activity task before the grant (ACTIVITY_TASK_SCHEDULED is 10, the grant's signal 26)
    const events = shown.split('\n').map((l) => l.split(' ')[1]);
    assert.ok(events.indexOf('26') > 0 && !events.slice(0, events.indexOf('26')).includes('10'), `the run scheduled an activity before its grant:\n${shown}`);
    // the flood ends: every one of its runs completes, LIMIT at a time
    for (const runId of flood) await fg.client.workflow.getHandle(runId).result();
    assert.ok(loaded.ms <= bound, `${line}, over ${bound} ms; its history:\n${shown}`);
  });
});
