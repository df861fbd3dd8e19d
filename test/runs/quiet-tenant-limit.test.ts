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
 * between WorkflowTaskStarted and WorkflowTaskCompleted).
 *
 * Fewer workflow task slots (FLOWGATE_WORKER_WORKFLOW_TASK_SLOTS; the knobs below), to keep the
 * flood's tasks in Temporal's fair backlog instead of the worker's queue, did not help: at load
 * average 5-12, 7 quiet runs a setting in three interleaved rounds, the median quiet run took
 * 1.1-1.4 s with the SDK's 40 slots, 1.3-1.6 s with 8, 1.5-2.4 s with 4, 1.1-1.9 s with 16 (2: 2.6-2.8 s),
 * and the flood's 300 runs 22-27 s with 40, 28-33 s with 8, 29-39 s with 4. The wait only moved from
 * the worker (started to completed) to matching (scheduled to started): every process shares the
 * cores the flood saturates (docs/operations.md, "Capacity"). The limit's semaphore now carries its
 * organization's fairness key: 45 quiet runs each way (load average 3-15, interleaved), median 1.28 s
 * with it against 1.73 s without, the slowest tenth alike (3.4 s and 3.2 s). Issue 48's target, 3x
 * its idle time, is not met (median about 5-6x; the slowest, 5.4 s at load average 14.5, 18x the
 * bound's 300 ms floor); the bound below stays where it was, over the 6.4 s measured at load average
 * ~35, since CI runs at 10-30: it catches a return of the old hops (25-41 s), not a small slowdown.
 */
import assert from 'node:assert/strict';
import os from 'node:os';
import { asAdminOf, publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';

/**
 * Knobs for measuring (unset: the test as CI runs it). QUIET_TENANT_FLOOD: the flood's size.
 * QUIET_TENANT_SETTINGS: settings measured in turn, `;` between them, each `-` (the defaults) or
 * `NAME=value,NAME=value` of flowgate's environment; QUIET_TENANT_ROUNDS: how many times the list
 * is measured, interleaved. Each measurement starts a flowgate of its own; a table ends the test.
 */
const FLOOD = Number(process.env.QUIET_TENANT_FLOOD ?? 300);
const SETTINGS = (process.env.QUIET_TENANT_SETTINGS ?? '-').split(';').map((s) => s.trim());
const ROUNDS = Number(process.env.QUIET_TENANT_ROUNDS ?? 1);
/** QUIET_TENANT_SAMPLES: B's runs one after another behind the flood (each is bound); the table shows their median and maximum. */
const SAMPLES = Number(process.env.QUIET_TENANT_SAMPLES ?? 1);
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

/**
 * Where a run's time went, from its timeline: until Temporal had it (the gateway's start), its
 * workflow tasks' wait for a worker (scheduled to started: Temporal's matching) and inside the
 * worker (started to completed), the wait for its grant (first task's end to the grant signal).
 */
function breakdown(shown: string): string {
  const events = shown.split('\n').map((line) => { const [at, type] = line.split(' '); return { at: Number(at), type: Number(type) }; });
  const first = (type: number, from = 0): number => events.findIndex((e, i) => i >= from && e.type === type);
  let matching = 0;
  let worker = 0;
  for (let i = first(5); i >= 0; i = first(5, i + 1)) {
    const started = first(6, i);
    const completed = started >= 0 ? first(7, started) : -1;
    if (started >= 0) matching += events[started]!.at - events[i]!.at;
    if (completed >= 0) worker += events[completed]!.at - events[started]!.at;
  }
  const grant = first(26);
  const firstDone = first(7);
  return `start ${events[0]?.at} ms, tasks in matching ${matching} ms, in the worker ${worker} ms, grant ${grant >= 0 && firstDone >= 0 ? events[grant]!.at - events[firstDone]!.at : '?'} ms after the first task`;
}

function settingEnv(setting: string): Record<string, string> {
  if (setting === '-' || setting === '') return {};
  return Object.fromEntries(setting.split(',').map((pair) => {
    const [name, value] = pair.split('=');
    if (!name || value === undefined) throw new Error(`QUIET_TENANT_SETTINGS: "${pair}" is not NAME=value`);
    return [name.trim(), value.trim()];
  }));
}

interface Measured {
  setting: string;
  idleMs: number;
  /** median of B's runs behind the flood */
  loadedMs: number;
  maxMs: number;
  floodMs: number;
  load: number;
  /** undefined when the measurement holds */
  failure?: string;
}

/** Starts a flowgate with `env`, measures B's idle and loaded run and the flood's completion, stops it. */
async function measure(setting: string): Promise<Measured> {
  const fg = await startTestFlowgate({ FLOWGATE_ORG_MAX_RUNNING: String(LIMIT), FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS: '0', ...settingEnv(setting) });
  try {
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

    const floodBegan = Date.now();
    const flood = await Promise.all(Array.from({ length: FLOOD }, () => start(fg, a)));
    const bound = FACTOR * Math.max(idleMs, IDLE_FLOOR_MS);
    const loaded: number[] = [];
    let failure: string | undefined;
    for (let i = 0; i < SAMPLES; i++) {
      const run = await timedRun(fg, b);
      loaded.push(run.ms);
      const line = `quiet run idle ${idleMs} ms, behind the flood ${run.ms} ms (${(run.ms / idleMs).toFixed(1)}x)`;
      const shown = await timeline(fg, run.runId, run.began);
      if (process.env.QUIET_TENANT_BREAKDOWN) console.log(`      [${setting}] ${line}: ${breakdown(shown)}`);
      // no activity task before the grant (ACTIVITY_TASK_SCHEDULED is 10, the grant's signal 26)
      const events = shown.split('\n').map((l) => l.split(' ')[1]);
      assert.ok(events.indexOf('26') > 0 && !events.slice(0, events.indexOf('26')).includes('10'), `the run scheduled an activity before its grant:\n${shown}`);
      if (run.ms > bound) failure ??= `${line}, over ${bound} ms; its history:\n${shown}`;
    }
    const load = os.loadavg()[0]!;
    // the flood ends: every one of its runs completes, LIMIT at a time
    for (const runId of flood) await fg.client.workflow.getHandle(runId).result();
    const floodMs = Date.now() - floodBegan;
    const sorted = [...loaded].sort((x, y) => x - y);
    const loadedMs = sorted[Math.floor(sorted.length / 2)]!;
    const maxMs = sorted[sorted.length - 1]!;
    console.log(`      [${setting}] quiet run idle ${idleMs} ms, behind the flood ${loaded.join(', ')} ms; the flood of ${FLOOD} done in ${(floodMs / 1000).toFixed(1)} s; load average ${load.toFixed(1)}`);
    return { setting, idleMs, loadedMs, maxMs, floodMs, load, ...(failure === undefined ? {} : { failure }) };
  } finally {
    await fg.stop();
  }
}

describe(`a quiet organization under FLOWGATE_ORG_MAX_RUNNING=${LIMIT} while another floods`, function () {
  this.timeout((300_000 + 10_000 * SAMPLES) * SETTINGS.length * ROUNDS);

  it(`asks for its own free slot within its first workflow task: its run behind ${FLOOD} queued runs of another organization stays within ${FACTOR}x its idle time`, async () => {
    const measured: Measured[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const setting of SETTINGS) measured.push(await measure(setting));
    }
    if (measured.length > 1) {
      console.log('      setting | idle ms | behind the flood ms (median) | max ms | ratio (median) | ratio (max) | flood s | load average');
      for (const m of measured) {
        console.log(`      ${m.setting} | ${m.idleMs} | ${m.loadedMs} | ${m.maxMs} | ${(m.loadedMs / m.idleMs).toFixed(1)} | ${(m.maxMs / m.idleMs).toFixed(1)} | ${(m.floodMs / 1000).toFixed(1)} | ${m.load.toFixed(1)}`);
      }
    }
    const failed = measured.find((m) => m.failure !== undefined);
    assert.ok(!failed, `[${failed?.setting}] ${failed?.failure}`);
  });
});
