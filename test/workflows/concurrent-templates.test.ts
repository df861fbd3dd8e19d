import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { ENGINE_LEVEL, type RunInput, type RunSummary } from '../../src/common/run-types';
import { METRICS_INTERCEPTORS_PATH, WORKFLOWS_PATH } from '../../temporal/worker';
import { recordHistoryPath } from '../support/ci';
import { getJson, publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';
import { clearHistory } from '../support/histories';

type History = temporal.api.history.v1.IHistory;
interface ResultEntry { stepIndex: number; stepPath?: string; resultUrls?: Record<string, { url: string }> }

const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * Each item: three templates, the second and third checking the result before them, so a result
 * handed to the wrong step skips a step (a command less, which replay reports). 20 items, 5 at a
 * time: on the code before the fix 27 runs in 30 did not replay.
 */
const chainedItems = {
  name: 'concurrent-templates-foreach',
  steps: [{
    name: 'Each', type: 'forEach', items: '[1..20]', concurrency: 5,
    steps: [
      { name: 'T1', type: 'template', format: 'plaintext', template: '{{item}}' },
      { name: 'T2', type: 'template', format: 'plaintext', if: 'local.`1`.result = $string(item)', template: 'x{{item}}' },
      { name: 'T3', type: 'template', format: 'plaintext', if: 'local.`2`.result = "x" & $string(item)', template: 'y{{item}}' },
    ],
  }],
};
const chainedResult = Array.from({ length: 20 }, (_, i) => `y${i + 1}`);

/**
 * Three branches, each a forEach of three items one at a time, two templates per item (the second
 * checking the first): on the code before the fix 25 runs in 30 did not replay.
 */
const branchLoops = {
  name: 'concurrent-templates-parallel',
  steps: [{
    name: 'All', type: 'parallel',
    branches: [1, 2, 3].map((b) => ({ steps: [{
      name: 'Loop', type: 'forEach', items: '[1..3]',
      steps: [
        { name: 'A', type: 'template', format: 'plaintext', template: `${b}a{{item}}` },
        { name: 'B', type: 'template', format: 'plaintext', if: `local.\`1\`.result = "${b}a" & $string(item)`, template: `${b}b{{item}}` },
      ],
    }] })),
  }],
};

/** Template steps alone (top level, a forEach one item at a time or of one item) and side by side. */
const mixed = {
  name: 'concurrent-templates-mixed',
  steps: [
    { name: 'Alone', type: 'template', format: 'plaintext', template: 'alone' },
    { name: 'One at a time', type: 'forEach', items: '[1, 2]', steps: [{ name: 'Seq', type: 'template', format: 'plaintext', template: 's{{item}}' }] },
    { name: 'Two at a time', type: 'forEach', items: '[1, 2]', concurrency: 2, steps: [
      { name: 'Route', type: 'branch', cases: [{ if: 'true', steps: [{ name: 'A', type: 'template', format: 'plaintext', template: 'a{{item}}' }] }] },
      { name: 'B', type: 'template', format: 'plaintext', template: 'b{{item}}' },
    ] },
    { name: 'Both', type: 'parallel', branches: [
      { steps: [{ name: 'P1', type: 'template', format: 'plaintext', template: 'p1' }] },
      { steps: [{ name: 'P2', type: 'code', source: 'return 2' }] },
    ] },
    { name: 'Single item', type: 'forEach', items: '[1]', concurrency: 5, steps: [{ name: 'Only', type: 'template', format: 'plaintext', template: 'only' }] },
    { name: 'After', type: 'template', format: 'plaintext', template: '{{steps.3.result}} {{steps.4.result}}' },
  ],
};
/** `mixed`'s template steps, by where they run */
const alone = ['1', '2.1.1', '2.2.1', '5.1.1', '6'];
const sideBySide = ['3.1.1.1.1', '3.1.2', '3.2.1.1.1', '3.2.2', '4.1.1'];

/** The runStep calls of a history: address → local (a marker) or an activity task. */
function stepKinds(history: History): Map<string, 'local' | 'task'> {
  const kinds = new Map<string, 'local' | 'task'>();
  const address = (data: Uint8Array | null | undefined): string => {
    const request = JSON.parse(Buffer.from(data ?? []).toString('utf8')) as { stepIndex: number; stepPath?: string };
    return request.stepPath ?? String(request.stepIndex);
  };
  for (const e of history.events ?? []) {
    const task = e.activityTaskScheduledEventAttributes;
    if (task?.activityType?.name === 'runStep') kinds.set(address(task.input?.payloads?.[0]?.data), 'task');
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') kinds.set(address(marker.details?.result?.payloads?.[0]?.data), 'local');
  }
  return kinds;
}

/**
 * Template steps are local activities (engine level 2). Side by side, local activities in flight
 * together reached the workflow grouped one way live and another on replay, so a worker restart
 * or a cache eviction stopped such runs with a nondeterminism error, or handed a step another
 * step's result. From level 5 a template step side by side is an activity task. Each test loops
 * runs and replays every one with a bundle that also fails when a step is handed another step's
 * outcome (step-result-check.ts).
 */
describe('template steps side by side (forEach concurrency > 1, parallel, forEach chunks) replay', () => {
  let fg: TestFlowgate;
  /** fails a replay in which a step is handed another step's outcome */
  let ownOutcomes: WorkflowBundleWithSourceMap;
  /** also fails a replay in which two local activities are in flight at once */
  let oneLocalAtATime: WorkflowBundleWithSourceMap;

  before(async function () {
    this.timeout(300_000);
    fg = await startTestFlowgate();
    const bundle = (checks: string[]) => bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH, logger: quiet, preloadModules: ['jsonata'],
      workflowInterceptorModules: [METRICS_INTERCEPTORS_PATH, ...checks.map((c) => path.join(__dirname, `${c}.js`))],
    });
    ownOutcomes = await bundle(['step-result-check']);
    oneLocalAtATime = await bundle(['step-result-check', 'local-in-flight-check']);
  });
  after(async () => {
    await fg?.stop();
  });

  async function completedRun(p: Published): Promise<{ runId: string; result: string }> {
    const response = await trigger(fg, p, {}, { 'x-api-wait': 'true' });
    assert.equal(response.status, 200, await response.clone().text());
    const body = (await response.json()) as { status: string; results: { stepIndex: number; stepPath?: string; result: { result: string } }[] };
    assert.equal(body.status, 'COMPLETE', JSON.stringify(body).slice(0, 2000));
    const runId = response.headers.get('X-Pf-Run-Id');
    assert.ok(runId);
    return { runId, result: body.results.find((r) => r.stepIndex === 1 && r.stepPath === undefined)?.result.result ?? '' };
  }

  const history = (workflowId: string): Promise<History> => clearHistory(fg, workflowId);

  /** The workflows (by ID) whose history does not replay, each with why. */
  async function replayFailures(workflowIds: string[], workflowBundle = ownOutcomes): Promise<string[]> {
    const histories = await Promise.all(workflowIds.map(async (workflowId) => ({ workflowId, history: await history(workflowId) })));
    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle }, histories)) {
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message.slice(0, 600)}`);
    }
    return failures;
  }

  /** A run of `p`'s first run's input at `engine` level, started directly (as a starter at that level would). */
  async function runAtLevel(firstRunId: string, engine: number): Promise<{ runId: string; summary: RunSummary }> {
    const payload = (await history(firstRunId)).events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    assert.ok(payload);
    const input = defaultPayloadConverter.fromPayload<RunInput>(payload);
    const runId = randomUUID();
    const summary = await fg.client.workflow.execute('runAutomation', { workflowId: runId, taskQueue: fg.taskQueue, args: [{ ...input, runId, engine }] }) as RunSummary;
    return { runId, summary };
  }

  it('a forEach running five items at a time, three templates each: 10 runs out of 10 replay, every step handed its own result', async function () {
    this.timeout(600_000);
    const p = await publishWorkflow(fg, chainedItems);
    const runIds: string[] = [];
    for (let k = 0; k < 10; k++) {
      const { runId, result } = await completedRun(p);
      assert.deepEqual(JSON.parse(result), chainedResult);
      runIds.push(runId);
    }
    assert.deepEqual(await replayFailures(runIds), []);
  });

  it('a parallel step of three branches, each a forEach of templates: 10 runs out of 10 replay, every step handed its own result', async function () {
    this.timeout(600_000);
    const p = await publishWorkflow(fg, branchLoops);
    const runIds: string[] = [];
    for (let k = 0; k < 10; k++) {
      const { runId, result } = await completedRun(p);
      assert.deepEqual(JSON.parse(result), [1, 2, 3].map((b) => [1, 2, 3].map((i) => `${b}b${i}`)));
      runIds.push(runId);
    }
    assert.deepEqual(await replayFailures(runIds), []);
  });

  it('the child workflows of a large forEach (101 items, 5 at a time) replay', async function () {
    this.timeout(600_000);
    const p = await publishWorkflow(fg, { ...chainedItems, name: 'concurrent-templates-chunks', steps: [{ ...chainedItems.steps[0], items: '[1..101]' }] });
    const { runId, result } = await completedRun(p);
    assert.deepEqual(JSON.parse(result), Array.from({ length: 101 }, (_, i) => `y${i + 1}`));
    // a chunk runs its items five at a time (activity tasks); the last chunk holds one item (local activities)
    assert.deepEqual(new Set(stepKinds(await history(`${runId}-foreach-1-1`)).values()), new Set(['task']));
    assert.deepEqual(new Set(stepKinds(await history(`${runId}-foreach-1-2`)).values()), new Set(['local']));
    assert.deepEqual(await replayFailures([runId, `${runId}-foreach-1-1`, `${runId}-foreach-1-2`]), []);
  });

  it('from engine level 5 a template step side by side is an activity task, one alone a local activity; a level-4 run keeps local activities side by side', async function () {
    this.timeout(300_000);
    const p = await publishWorkflow(fg, mixed);
    const { runId, result } = await completedRun(p);
    assert.equal(result, 'alone');
    const current = await history(runId);
    assert.equal(defaultPayloadConverter.fromPayload<RunInput>(current.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0] ?? {}).engine, ENGINE_LEVEL);
    const kinds = stepKinds(current);
    assert.deepEqual(alone.map((a) => kinds.get(a)), alone.map(() => 'local'), JSON.stringify([...kinds]));
    assert.deepEqual(sideBySide.map((a) => kinds.get(a)), sideBySide.map(() => 'task'), JSON.stringify([...kinds]));
    assert.deepEqual(await replayFailures([runId], oneLocalAtATime), []);

    // A run started at level 4 (before this change) runs as it did, its template steps local side by
    // side too, in flight together; its history may not replay (the bug this level fixes).
    const old = await runAtLevel(runId, 4);
    assert.equal(old.summary.status, 'COMPLETE');
    const oldKinds = stepKinds(await history(old.runId));
    assert.deepEqual([...alone, ...sideBySide].map((a) => oldKinds.get(a)), [...alone, ...sideBySide].map(() => 'local'), JSON.stringify([...oldKinds]));
    const [failure, ...more] = await replayFailures([old.runId], oneLocalAtATime);
    assert.match(failure ?? '', /local activities in flight together: 3\.1\.1\.1\.1 and 3\.2\.1\.1\.1/);
    assert.deepEqual(more, []);

    // FLOWGATE_RECORD_HISTORY=<file>: keep the level-5 run (committed as histories/run-automation-concurrent-templates-engine-5.json)
    const recordTo = recordHistoryPath();
    if (recordTo) await writeFile(recordTo, `${historyToJSON(current)}\n`, { flag: 'wx' });
  });
});

/**
 * The same bug as a running system meets it: a worker that keeps no workflow in its cache
 * (FLOWGATE_WORKER_CACHED_WORKFLOWS=0) replays the history for every workflow task and for every
 * query (the status endpoint queries the run), as any worker does after a restart or an eviction.
 * On the code before the fix 8 runs in 8 stopped with a nondeterminism error, retried forever.
 */
describe('template steps side by side on a worker without a workflow cache (every workflow task replays)', () => {
  let fg: TestFlowgate;

  before(async function () {
    this.timeout(120_000);
    fg = await startTestFlowgate({ FLOWGATE_WORKER_CACHED_WORKFLOWS: '0' });
  });
  after(async () => {
    await fg?.stop();
  });

  /**
   * Polls the run's status (a query) until it closes, as a caller waiting for it would; fails at
   * once, saying why, when a workflow task of the run failed.
   */
  async function closed(p: Published, runId: string): Promise<void> {
    const handle = fg.client.workflow.getHandle(runId);
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const { status, body } = await getJson<{ status: string }>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/status`);
      assert.equal(status, 200, JSON.stringify(body));
      if ((await handle.describe()).status.name !== 'RUNNING') return;
      const failed = ((await handle.fetchHistory()).events ?? []).find((e) => e.workflowTaskFailedEventAttributes);
      assert.equal(failed, undefined, `run ${runId}: a workflow task failed: ${failed?.workflowTaskFailedEventAttributes?.failure?.message}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.fail(`run ${runId} still running after 120 s`);
  }

  it('a forEach of templates and code steps five items at a time: 5 runs out of 5 complete, each item with its own results', async function () {
    this.timeout(900_000);
    const p = await publishWorkflow(fg, {
      name: 'concurrent-templates-no-cache',
      steps: [{
        name: 'Each', type: 'forEach', items: '[1..20]', concurrency: 5,
        steps: [
          { name: 'T1', type: 'template', format: 'plaintext', template: '{{item}}' },
          { name: 'C', type: 'code', source: 'return local[1].result' },
          { name: 'T3', type: 'template', format: 'plaintext', template: 't{{local.2.result}}-{{item}}' },
        ],
      }],
    });
    for (let k = 0; k < 5; k++) {
      const response = await trigger(fg, p, {});
      assert.equal(response.status, 200, await response.clone().text());
      const runId = response.headers.get('X-Pf-Run-Id');
      assert.ok(runId);
      await closed(p, runId);
      const summary = await fg.client.workflow.getHandle(runId).result() as RunSummary;
      assert.equal(summary.status, 'COMPLETE');
      const results = await fg.request(`/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
      const own = ((await results.json()) as { results: ResultEntry[] }).results.find((r) => r.stepPath === undefined);
      const url = own?.resultUrls?.['output.txt']?.url;
      assert.ok(url);
      const file = await fetch(url.startsWith('http') ? url : `${fg.url}${url}`);
      assert.deepEqual(await file.json(), Array.from({ length: 20 }, (_, i) => `t${i + 1}-${i + 1}`));
    }
  });
});

