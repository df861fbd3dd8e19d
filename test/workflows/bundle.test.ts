import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { WORKFLOWS_PATH, workflowBundle } from '../../temporal/worker';
import { temporalAddress, temporalCliPath } from '../setup/root-hooks';
import { recordHistoryPath } from '../support/ci';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { clearHistory } from '../support/histories';

/** Saved histories live in the source tree (this file runs from dist/); the suite only reads them. */
const HISTORIES_DIR = path.resolve(__dirname, '..', '..', '..', 'test', 'workflows', 'histories');

/** Traced runs recorded before and after the switch to the OpenTelemetry 2 interceptors (test/observability/tracing.test.ts). */
const TRACED_BEFORE_SWITCH = 'run-automation-traced-otel1.json';
const TRACED_AFTER_SWITCH = 'run-automation-traced-otel2.json';
/** Saved histories that replay only on a worker that traces (their runs drew span IDs from their random numbers). */
const TRACED_ONLY = new Set([TRACED_BEFORE_SWITCH]);

/** A saved history and the workflow ID it ran under (derived child run IDs depend on it). */
async function savedHistory(file: string): Promise<{ history: ReturnType<typeof historyFromJSON>; workflowId: string }> {
  const history = historyFromJSON(JSON.parse(await readFile(path.join(HISTORIES_DIR, file), 'utf8')));
  const workflowId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId || path.basename(file, '.json');
  return { history, workflowId };
}

function startedEngine(history: ReturnType<typeof historyFromJSON>): unknown {
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  assert.ok(payload?.data, 'the history starts with the run input');
  return (JSON.parse(Buffer.from(payload.data).toString('utf8')) as { engine?: unknown }).engine;
}

const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

const threeSteps = {
  name: 'replay-three-steps',
  steps: [
    { name: 'Greeting', type: 'template', format: 'plaintext', template: 'Hello {{inputs.name}}' },
    { name: 'Shout', type: 'code', source: "console.log('shouting'); return steps[1].result.toUpperCase()" },
    { name: 'Wrap', type: 'template', format: 'markdown', template: '# {{steps.2.result}} ({{run.automationVersion}})' },
  ],
};

/** The history as `temporal workflow show --output json` writes it: the JSON norm every Temporal tool reads. */
async function exportHistoryJson(workflowId: string): Promise<string> {
  const { stdout } = await promisify(execFile)(temporalCliPath(),
    ['workflow', 'show', '--workflow-id', workflowId, '--address', temporalAddress(), '--namespace', 'default', '--output', 'json'],
    { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

describe('workflows bundle', () => {
  it('bundles workflows/ for the Temporal sandbox and exports runAutomation', async () => {
    const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quiet });
    assert.ok(bundle.code.length > 0);
    assert.match(bundle.code, /runAutomation/);
  });

  it('holds no zod: the SDK evaluates every module a run imports again for each cached run (zod alone: about 95 modules, 600 KiB a run)', async () => {
    const bundle = await workflowBundle();
    assert.doesNotMatch(bundle.code, /node_modules\/zod\//);
  });
});

describe('runAutomation replay', () => {
  let fg: TestFlowgate;

  before(async () => {
    fg = await startTestFlowgate();
  });
  after(async () => {
    await fg?.stop();
  });

  /** A fresh live run of the three-step automation; answers its run id once it completed. */
  async function liveThreeStepRun(): Promise<string> {
    const published = await publishWorkflow(fg, threeSteps);
    const response = await trigger(fg, published, { name: 'Ada' }, { 'x-api-wait': 'true' });
    assert.equal(response.status, 200, await response.clone().text());
    const body = (await response.json()) as { status: string; results: { result: { result: string } }[] };
    assert.equal(body.status, 'COMPLETE');
    assert.equal(body.results[2]?.result.result, '# HELLO ADA (1)');
    const runId = response.headers.get('X-Pf-Run-Id');
    assert.ok(runId);
    return runId;
  }

  it('replays the history of a live 3-step run (template, code, template) without non-determinism', async () => {
    const runId = await liveThreeStepRun();
    const history = await clearHistory(fg, runId);
    const scheduled = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes);
    assert.equal(scheduled.length, 1, 'expected one runStep activity task: the code step');
    // template steps run as local activities (engine level 2), each recorded as a marker
    const local = (history.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
    assert.equal(local.length, 2, 'expected one local runStep per template step');

    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, runId);

    // The CLI's JSON export is how saved histories are made, so it must match the fetched history.
    const json = JSON.parse(await exportHistoryJson(runId)) as { events?: unknown[] };
    assert.equal(json.events?.length, history.events?.length, 'the exported history differs from the fetched one');
    // Recording a new saved history is a developer's explicit step (FLOWGATE_RECORD_HISTORY=<file>,
    // then commit the file under test/workflows/histories): the suite itself never writes into the clone.
    const recordTo = recordHistoryPath();
    if (recordTo) await writeFile(recordTo, `${JSON.stringify(json, null, 2)}\n`, { flag: 'wx' });
  });

  it('refuses to replay a history that the workflow code would not produce', async () => {
    const runId = await liveThreeStepRun();
    const tampered = await clearHistory(fg, runId);
    const attributes = tampered.events?.find((e) => e.activityTaskScheduledEventAttributes)?.activityTaskScheduledEventAttributes;
    assert.ok(attributes?.activityType);
    attributes.activityType.name = 'notRunStep';
    await assert.rejects(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, tampered, runId));
  });

  it('replays every saved history in test/workflows/histories', async () => {
    const files = (await readdir(HISTORIES_DIR)).filter((f) => f.endsWith('.json') && !TRACED_ONLY.has(f)).sort();
    assert.ok(files.length > 0, `no saved histories in ${HISTORIES_DIR}`);
    const bundle = await workflowBundle();
    for (const file of files) {
      const { history, workflowId } = await savedHistory(file);
      await assert.doesNotReject(Worker.runReplayHistory({ workflowBundle: bundle }, history, workflowId),
        `${file} no longer replays: the workflow code changed in a non-deterministic way`);
    }
  });

  /**
   * Two runs of the same chaining workflow with six `$random()` coin flips, recorded by a worker
   * that traces: one before the switch to the OpenTelemetry 2 interceptors (engine level 2, the v1
   * package, whose span IDs were drawn from the run's random numbers) and one after it (level 3).
   * Both replay on today's tracing worker: the earlier run still draws its span IDs as it did
   * (workflows/run/tracing-interceptors.ts), so its coins land the same. The later one also replays
   * without tracing: its span IDs no longer touch the run's random numbers.
   */
  it('replays the saved histories of traced runs from before and after the OpenTelemetry 2 switch', async () => {
    const tracingBundle = await workflowBundle({ tracing: true });
    for (const file of [TRACED_BEFORE_SWITCH, TRACED_AFTER_SWITCH]) {
      const { history, workflowId } = await savedHistory(file);
      assert.equal(startedEngine(history), file === TRACED_BEFORE_SWITCH ? 2 : 3, file);
      await assert.doesNotReject(Worker.runReplayHistory({ workflowBundle: tracingBundle }, history, workflowId),
        `${file} no longer replays on a worker that traces`);
    }
    const after = await savedHistory(TRACED_AFTER_SWITCH);
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, after.history, after.workflowId);
    // and the earlier run is one whose coins depend on those span IDs: without them it lands otherwise
    const before = await savedHistory(TRACED_BEFORE_SWITCH);
    await assert.rejects(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, before.history, before.workflowId));
  });

  /**
   * Temporal's OpenTelemetry workflow interceptors draw span IDs from the workflow's seeded random
   * numbers, which shifts every later uuid4() of the run: a `trigger` or `agent` step's child
   * workflow ID then differs from the one in a history recorded with tracing off (docs/operations.md,
   * "Traces": switch tracing while no such run is open). A history without those steps replays.
   */
  it('replays a saved history without chained runs with the tracing bundle (Temporal\'s OpenTelemetry workflow interceptors)', async () => {
    const bundle = await workflowBundle({ tracing: true });
    const saved = historyFromJSON(JSON.parse(await readFile(path.join(HISTORIES_DIR, 'run-automation-v1.json'), 'utf8')));
    await assert.doesNotReject(Worker.runReplayHistory({ workflowBundle: bundle }, saved, 'run-automation-v1'));
  });
});
