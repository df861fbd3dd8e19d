/**
 * An operator's pause on the real workflows bundle (issue 54; workflows/run/operator-pause.ts) and
 * the batch workflow (workflows/run-batch.ts) with fake activities. Each run's history replays here;
 * with FLOWGATE_RECORD_HISTORIES_DIR=<dir> each is written to <dir>/<file>, to be copied into
 * test/workflows/histories/ (replay-every-type.test.ts replays them in every suite run).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import type { BatchInput } from '../../src/common/run-batch';
import type { ReleaseInput } from '../../src/common/run-holds';
import { batchStateQuery, pauseSignal, pauseUpdate, WORKFLOW_TYPES, type ReleaseHeldRunsWorkflow, type RunBatchWorkflow } from '../../src/common/workflow-contracts';
import { workflowBundle } from '../../temporal/worker';
import { recordHistoriesDir } from '../support/ci';
import { eventually, FastWorker, runEnd, stateOf } from './support/fast-worker';
import { FAKE_ORG, FakeWorld } from './support/fake-activities';

const t = (name: string, template: string) => ({ name, type: 'template', format: 'plaintext', template });

async function replayAndRecord(fw: FastWorker, workflowId: string, file: string): Promise<void> {
  const history = await fw.client.workflow.getHandle(workflowId).fetchHistory();
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, workflowId);
  const dir = recordHistoriesDir();
  if (dir) await writeFile(path.join(dir, file), `${historyToJSON(history)}\n`, { flag: 'wx' });
}

describe('an operator\'s pause and the batch workflow (fast layer)', () => {
  let fw: FastWorker;
  before(async () => {
    fw = await FastWorker.start();
  });
  beforeEach(() => {
    fw.world = new FakeWorld();
    fw.overrides = {};
  });
  after(async () => {
    await fw?.stop();
  });

  it('a pause taken during a delay keeps its deadline; the next step waits PAUSED for the operator until unpaused, then the run completes', async function () {
    this.timeout(60_000);
    const handle = await fw.startRun({ name: 'pause-delay', steps: [t('Before', 'one'), { name: 'Wait', type: 'delay', duration: '2s' }, t('After', 'three'), t('Last', 'four')] });
    const timer = await eventually(async () => {
      const state = await stateOf(handle);
      return state.waitingOn?.kind === 'timer' ? state.waitingOn : undefined;
    }, 'the delay step waiting');
    const answer = await handle.executeUpdate(pauseUpdate, { args: [{ paused: true, by: 'member:ann@example.com', reason: 'upstream maintenance' }] });
    assert.equal(answer.paused, true);
    assert.equal(answer.pause?.by, 'member:ann@example.com');
    assert.equal(answer.status, 'PAUSED', 'the delay is still running: the run shows its timer');
    // the pause shows at once, while the timer keeps its deadline
    const during = await stateOf(handle);
    assert.equal(during.waitingOn?.kind, 'timer');
    assert.equal(during.operatorPause?.reason, 'upstream maintenance');
    // once the delay is over, the next step does not start: the run waits for the operator
    const held = await eventually(async () => {
      const state = await stateOf(handle);
      return state.waitingOn?.kind === 'operator' ? state : undefined;
    }, 'the run holding for the operator after the delay', 30_000);
    assert.ok(timer.kind === 'timer' && Date.now() >= Date.parse(timer.resumeAt), 'the delay ended at its deadline');
    assert.equal(held.status, 'PAUSED');
    assert.equal(held.steps['2']?.status, 'COMPLETE');
    assert.equal(held.steps['3']?.status, 'PENDING');
    assert.deepEqual(held.waitingOn, { kind: 'operator', by: 'member:ann@example.com', at: answer.pause?.at, reason: 'upstream maintenance' });
    // a pause is the behaviour under test: the run must still hold a second later
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal((await stateOf(handle)).steps['3']?.status, 'PENDING', 'no step starts while paused');
    // a second pause keeps the first one's who and when
    const again = await handle.executeUpdate(pauseUpdate, { args: [{ paused: true, by: 'member:bob@example.com' }] });
    assert.equal(again.pause?.by, 'member:ann@example.com');
    // unpaused by signal (the gateway's fallback when the run does not answer its update in time)
    await handle.signal(pauseSignal, { paused: false, by: 'member:ann@example.com' });
    const { summary } = await runEnd(handle);
    assert.equal(summary.status, 'COMPLETE');
    assert.deepEqual(summary.outcomes.map((o) => o.result), ['one', summary.outcomes[1]?.result, 'three', 'four']);
    await replayAndRecord(fw, handle.workflowId, 'run-automation-operator-pause.json');
  });

  it('a pause taken during a delay holds the run before its forEach step starts; unpaused by update, it completes', async function () {
    this.timeout(60_000);
    const handle = await fw.startRun({
      name: 'pause-nested', steps: [
        { name: 'Wait', type: 'delay', duration: '1s' },
        { name: 'Each', type: 'forEach', items: '["a","b"]', steps: [t('Item', 'item {{item}}'), t('Again', 'again {{item}}')] },
      ],
    });
    await handle.executeUpdate(pauseUpdate, { args: [{ paused: true, by: 'admin' }] });
    const held = await eventually(async () => {
      const state = await stateOf(handle);
      return state.waitingOn?.kind === 'operator' ? state : undefined;
    }, 'the run holding');
    assert.equal(held.steps['2']?.status, 'PENDING', 'held before the forEach step');
    await handle.executeUpdate(pauseUpdate, { args: [{ paused: false }] });
    const { summary } = await runEnd(handle);
    assert.equal(summary.status, 'COMPLETE');
  });

  it('runBatch: lists the runs, acts on each at most five at a time, and reports each outcome (succeeded, refused, failed)', async function () {
    this.timeout(60_000);
    const acted: string[] = [];
    fw.overrides = {
      listBatchRuns: async (request) => {
        assert.equal(request.orgId, FAKE_ORG);
        return ['run-1', 'run-2', 'run-3'];
      },
      applyBatchAction: async (request) => {
        acted.push(request.runId);
        if (request.runId === 'run-2') return { runId: request.runId, outcome: 'refused', code: 'not_resumable', message: 'run run-2 is COMPLETE' };
        if (request.runId === 'run-3') throw ApplicationFailure.nonRetryable('Temporal said no', 'BOOM');
        return { runId: request.runId, outcome: 'succeeded', newRunId: 'run-1b' };
      },
    };
    const batchId = `batch-${randomUUID()}`;
    const input: BatchInput = { batchId, orgId: FAKE_ORG, action: 'resume', filter: { status: 'FAILED' }, limit: 10, by: 'admin', requested: new Date().toISOString() };
    const handle = await fw.client.workflow.start<RunBatchWorkflow>(WORKFLOW_TYPES.runBatch, { workflowId: batchId, taskQueue: fw.taskQueue, args: [input] });
    const result = await handle.result();
    assert.equal(result.status, 'COMPLETE');
    assert.deepEqual([result.total, result.succeeded, result.refused, result.failed], [3, 1, 1, 1]);
    assert.deepEqual(acted.sort(), ['run-1', 'run-2', 'run-3']);
    assert.equal(result.outcomes.find((o) => o.runId === 'run-1')?.newRunId, 'run-1b');
    assert.match(result.outcomes.find((o) => o.runId === 'run-3')?.message ?? '', /Temporal said no/);
    assert.deepEqual(await handle.query(batchStateQuery), result);
    await replayAndRecord(fw, batchId, 'run-batch.json');
  });

  it('a run started under a paused workflow waits PENDING before its first step; only an unpause of that scope (or of the run) releases it', async function () {
    this.timeout(60_000);
    const hold = { scope: 'workflow' as const, by: 'member:ann@example.com', at: '2026-12-02T20:00:00.000Z', reason: 'upstream change' };
    const handle = await fw.startRun({ name: 'held', steps: [t('First', 'one'), t('Second', 'two')] }, {}, { hold });
    const held = await eventually(async () => {
      const state = await stateOf(handle);
      return state.waitingOn?.kind === 'operator' ? state : undefined;
    }, 'the run waiting for its workflow\'s unpause');
    assert.equal(held.status, 'PENDING');
    assert.deepEqual(held.waitingOn, { kind: 'operator', ...hold });
    assert.equal(held.steps['1']?.status, 'PENDING');
    // the release of another scope does not lift it; an operator's pause of the run meanwhile stays after the release
    await handle.signal(pauseSignal, { paused: false, scope: 'trigger', by: 'admin' });
    await handle.executeUpdate(pauseUpdate, { args: [{ paused: true, by: 'admin', reason: 'this one too' }] });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const still = await stateOf(handle);
    assert.deepEqual([still.status, still.steps['1']?.status, still.waitingOn?.kind], ['PENDING', 'PENDING', 'operator'], 'no step starts while its workflow is paused');
    await handle.signal(pauseSignal, { paused: false, scope: 'workflow', by: 'admin' });
    const paused = await eventually(async () => {
      const state = await stateOf(handle);
      return state.status === 'PAUSED' ? state : undefined;
    }, 'released, then holding for the run\'s own pause');
    assert.equal(paused.waitingOn?.kind, 'operator');
    assert.equal(paused.waitingOn?.kind === 'operator' ? paused.waitingOn.scope : 'none', undefined);
    assert.equal(paused.steps['1']?.status, 'PENDING');
    await handle.executeUpdate(pauseUpdate, { args: [{ paused: false, by: 'admin' }] });
    const { summary } = await runEnd(handle);
    assert.equal(summary.status, 'COMPLETE');
    assert.deepEqual(summary.outcomes.map((o) => o.result), ['one', 'two']);
    await replayAndRecord(fw, handle.workflowId, 'run-automation-operator-hold.json');
  });

  it('releaseHeldRuns sweeps the held runs and stops once the workflow is paused again', async function () {
    this.timeout(60_000);
    const sweeps: ReleaseInput[] = [];
    fw.overrides = {
      signalHeldRuns: async (input) => {
        sweeps.push(input);
        return sweeps.length === 1 ? { signalled: 3, pausedAgain: false } : { signalled: 0, pausedAgain: true };
      },
    };
    const input: ReleaseInput = { orgId: FAKE_ORG, scope: 'trigger', targetId: 'trg_x', since: new Date().toISOString(), by: 'admin' };
    const workflowId = `release-${randomUUID()}`;
    const handle = await fw.client.workflow.start<ReleaseHeldRunsWorkflow>(WORKFLOW_TYPES.releaseHeldRuns, { workflowId, taskQueue: fw.taskQueue, args: [input] });
    assert.deepEqual(await handle.result(), { sweeps: 2, signalled: 3, pausedAgain: true });
    assert.deepEqual(sweeps, [input, input]);
    await replayAndRecord(fw, workflowId, 'release-held-runs.json');
  });
});
