import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../../temporal/worker';
import { recordHistoryPath } from '../support/ci';
import { getJson, pollStatus, publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';
import { clearHistory } from '../support/histories';

interface ResultEntry { stepIndex: number; stepPath?: string; exitCode: number; result: { resultType: string; result: string }; resultUrls?: Record<string, { url: string }> }
interface ResultsBody { status: string; error?: string; results: ResultEntry[] }
type Progress = { status: string; progress?: string };

/** Saved histories live in the source tree (this file runs from dist/). */
const HISTORIES_DIR = path.resolve(__dirname, '..', '..', '..', 'test', 'workflows', 'histories');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A forEach of `count` one-step items: a template, the cheapest step. */
function templateFanOut(name: string, count: number, concurrency: number, extra: Record<string, unknown>[] = []) {
  return {
    name,
    timeoutSeconds: 1800,
    steps: [{
      name: 'Each', type: 'forEach', items: `[1..${count}]`, concurrency,
      steps: [{ name: 'Echo', type: 'template', format: 'plaintext', template: 'item {{item}}' }, ...extra],
    }],
  };
}

describe('large forEach fan-outs run in child workflows (through the trigger surface)', () => {
  let fg: TestFlowgate;

  before(async () => {
    fg = await startTestFlowgate();
  });
  after(async () => {
    await fg?.stop();
  });

  async function start(p: Published, inputs: unknown = {}): Promise<string> {
    const response = await trigger(fg, p, inputs);
    assert.equal(response.status, 200, await response.clone().text());
    const runId = response.headers.get('X-Pf-Run-Id');
    assert.ok(runId);
    return runId;
  }
  const historyEvents = async (workflowId: string) => (await clearHistory(fg, workflowId)).events?.length ?? 0;
  /** the forEach's own result: the whole output.txt (the inline copy is cut at 4 KiB) */
  async function wholeResult(p: Published, runId: string): Promise<unknown[]> {
    const { body } = await getJson<ResultsBody>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
    const own = body.results.find((r) => r.stepIndex === 1 && r.stepPath === undefined);
    assert.ok(own?.resultUrls?.['output.txt'], JSON.stringify(body).slice(0, 2000));
    const file = await fetch(own.resultUrls['output.txt'].url);
    assert.equal(file.status, 200);
    return (await file.json()) as unknown[];
  }

  it('runs a forEach of 2,500 items in chunks: results in order, progress shown while running, a small parent history', async function () {
    this.timeout(900_000);
    const p = await publishWorkflow(fg, templateFanOut('fan-out-2500', 2500, 50));
    const runId = await start(p);

    const progressSeen = new Set<string>();
    const final = await pollStatus(fg, p, runId, (s) => {
      const progress = (s.stepInfo['1'] as Progress | undefined)?.progress;
      if (progress) progressSeen.add(progress);
      return ['COMPLETE', 'FAILED', 'TIMEOUT'].includes(s.status);
    }, 840_000);
    assert.equal(final.status, 'COMPLETE', JSON.stringify(final).slice(0, 2000));
    assert.equal((final.stepInfo['1'] as Progress).progress, '2500/2500 done');
    const between = [...progressSeen].filter((s) => /^\d+\/2500 done$/.test(s) && s !== '0/2500 done' && s !== '2500/2500 done');
    assert.ok(between.length >= 2, `progress did not move while the run ran: ${[...progressSeen].join(', ')}`);
    // Inner steps live in the chunks: the run lists only the forEach itself.
    assert.deepEqual(Object.keys(final.stepStatus), ['1']);

    const values = await wholeResult(p, runId);
    assert.equal(values.length, 2500);
    values.forEach((v, i) => assert.equal(v, `item ${i + 1}`, `item ${i + 1} out of order`));

    // Every chunk is a child of the run with a deterministic ID; the first and last answer their counts.
    const first = await fg.client.workflow.getHandle(`${runId}-foreach-1-1`).result() as { done: number };
    const last = await fg.client.workflow.getHandle(`${runId}-foreach-1-25`).result() as { done: number };
    assert.equal(first.done, 100);
    assert.equal(last.done, 100);

    const parentEvents = await historyEvents(runId);
    const chunkEvents = await historyEvents(`${runId}-foreach-1-1`);
    console.log(`      history events: parent ${parentEvents} for 2,500 items; one chunk of 100 items ${chunkEvents}`);
    assert.ok(parentEvents < 2000, `the parent's history has ${parentEvents} events`);
  });

  it('measures the in-workflow path for comparison: 100 items (the threshold) stay in the run', async function () {
    this.timeout(300_000);
    const p = await publishWorkflow(fg, templateFanOut('in-workflow-100', 100, 50));
    const runId = await start(p);
    const final = await pollStatus(fg, p, runId, undefined, 240_000);
    assert.equal(final.status, 'COMPLETE', JSON.stringify(final).slice(0, 2000));
    assert.equal(final.stepStatus['1.100.1'], 'COMPLETE');
    await assert.rejects(fg.client.workflow.getHandle(`${runId}-foreach-1-1`).describe());
    const events = await historyEvents(runId);
    console.log(`      history events: in-workflow forEach of 100 items ${events} (${(events / 100).toFixed(1)} per item; 2,500 items would be about ${Math.round(events * 25)})`);
    // at least one event per item: each item's template step (a local activity) leaves its marker
    assert.ok(events > 100, `only ${events} events`);
  });

  it('a failed item stops the fan-out as in-workflow: no later item or chunk starts, the failing step shows', async function () {
    this.timeout(300_000);
    const p = await publishWorkflow(fg, templateFanOut('fan-out-fails', 250, 1, [
      { name: 'Boom', type: 'code', if: 'item = 120', source: 'throw new Error("item 120 is bad")' },
    ]));
    const runId = await start(p);
    const final = await pollStatus(fg, p, runId, undefined, 240_000);
    assert.equal(final.status, 'FAILED', JSON.stringify(final).slice(0, 2000));
    assert.match(final.error ?? '', /item 120: step 1\.120\.2 \(Boom\) failed: .*item 120 is bad/);
    assert.equal(final.stepStatus['1.120.2'], 'FAILED');
    assert.equal((final.stepInfo['1'] as Progress).progress, '120/250 done');

    const values = await wholeResult(p, runId);
    assert.equal(values.length, 250);
    assert.equal(values[0], 'item 1');
    assert.equal(values[118], 'item 119');
    assert.deepEqual(values.slice(120), new Array(130).fill(null));
    // The third chunk never started.
    await assert.rejects(fg.client.workflow.getHandle(`${runId}-foreach-1-3`).describe());
  });

  it('refuses more than 10,000 items, failing the step before any chunk starts', async () => {
    const p = await publishWorkflow(fg, templateFanOut('fan-out-too-many', 10_001, 5));
    const runId = await start(p);
    const final = await pollStatus(fg, p, runId, undefined, 60_000);
    assert.equal(final.status, 'FAILED');
    assert.match(final.error ?? '', /items has 10001 entries; a forEach takes at most 10000/);
    await assert.rejects(fg.client.workflow.getHandle(`${runId}-foreach-1-1`).describe());
  });

  it('cancelling the run cancels its chunk in flight', async function () {
    this.timeout(120_000);
    const p = await publishWorkflow(fg, {
      name: 'fan-out-cancel',
      steps: [{
        name: 'Each', type: 'forEach', items: '[1..150]', concurrency: 2,
        steps: [{ name: 'Wait', type: 'delay', duration: '1h' }],
      }],
    });
    const runId = await start(p);
    const chunk = fg.client.workflow.getHandle(`${runId}-foreach-1-1`);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const running = await chunk.describe().then((d) => d.status.name === 'RUNNING', () => false);
      if (running) break;
      assert.ok(Date.now() < deadline, 'the first chunk never started');
      await sleep(200);
    }
    const cancelled = await fg.admin('POST', `/api/v1/runs/${runId}/cancel`);
    assert.equal(cancelled.status, 202, JSON.stringify(cancelled.body));

    const final = await pollStatus(fg, p, runId, undefined, 60_000);
    assert.equal(final.status, 'FAILED');
    assert.match(final.error ?? '', /cancel/);
    for (;;) {
      const status = (await chunk.describe()).status.name;
      if (status !== 'RUNNING') {
        assert.equal(status, 'CANCELLED');
        break;
      }
      assert.ok(Date.now() < deadline + 60_000, 'the chunk was never cancelled');
      await sleep(200);
    }
    await assert.rejects(fg.client.workflow.getHandle(`${runId}-foreach-1-2`).describe());
  });

  it('replays the live histories of a chunked run and of one of its chunks without non-determinism', async function () {
    this.timeout(300_000);
    const p = await publishWorkflow(fg, templateFanOut('fan-out-replay', 120, 5, [
      { name: 'Odd', type: 'template', format: 'plaintext', if: 'item % 2 = 1', template: 'odd {{index}}' },
    ]));
    const runId = await start(p);
    const final = await pollStatus(fg, p, runId, undefined, 240_000);
    assert.equal(final.status, 'COMPLETE', JSON.stringify(final).slice(0, 2000));
    const values = await wholeResult(p, runId);
    assert.equal(values.length, 120);
    assert.deepEqual(values.slice(0, 2), ['odd 0', 'item 2']);
    assert.equal(values[119], 'item 120');

    const bundle = await workflowBundle();
    const parent = await clearHistory(fg, runId);
    const chunk = await clearHistory(fg, `${runId}-foreach-1-2`);
    await Worker.runReplayHistory({ workflowBundle: bundle }, parent, runId);
    await Worker.runReplayHistory({ workflowBundle: bundle }, chunk, `${runId}-foreach-1-2`);
    const recordTo = recordHistoryPath();
    if (recordTo) {
      await writeFile(recordTo, `${historyToJSON(parent)}\n`, { flag: 'wx' });
      await writeFile(path.join(path.dirname(recordTo), 'run-for-each-chunk.json'), `${historyToJSON(chunk)}\n`, { flag: 'wx' });
    }
  });

  it('replays the saved histories of the chunked path (a run with chunk children, and a chunk)', async () => {
    const bundle = await workflowBundle();
    for (const [file, type, marker] of [
      ['run-automation-foreach-chunks.json', 'runAutomation', 'startChildWorkflowExecutionInitiatedEventAttributes'],
      ['run-for-each-chunk.json', 'runForEachChunk', 'signalExternalWorkflowExecutionInitiatedEventAttributes'],
    ] as const) {
      const saved = historyFromJSON(JSON.parse(await readFile(path.join(HISTORIES_DIR, file), 'utf8')));
      assert.equal(saved.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name, type);
      assert.ok(saved.events?.some((e) => e[marker]), `${file} has no ${marker}`);
      await assert.doesNotReject(Worker.runReplayHistory({ workflowBundle: bundle }, saved, path.basename(file, '.json')), `${file} no longer replays`);
    }
  });
});
