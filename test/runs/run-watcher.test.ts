import assert from 'node:assert/strict';
import type { RunView } from '../../src/runs/run-service';
import { RunWatcher } from '../../src/runs/run-watcher';
import { silentLogger } from '../../src/observability/logger';

function view(status: RunView['status'], step: RunView['status']): RunView {
  return {
    runId: 'r1', status, outcomes: [],
    memo: { orgId: 'o', automationId: 'a', automationVersion: 1, automationName: 'n', triggerId: 't', startedBy: 'k', started: '', stepMap: {}, steps: [] },
    steps: { 1: { name: 'One', type: 'delay', status: step } },
  };
}

describe('RunWatcher', () => {
  it('reads a run once per interval however many callers wait on it, and not at all once nobody waits', async () => {
    let reads = 0;
    let current = view('PAUSED', 'PAUSED');
    const watcher = new RunWatcher(async () => { reads++; return current; }, 50, silentLogger);
    const waits = Array.from({ length: 100 }, () => watcher.waitFor('r1', (v) => v.steps['1']?.status !== 'PAUSED', 5000));
    await new Promise((resolve) => setTimeout(resolve, 320));
    const before = reads;
    assert.ok(before >= 3 && before <= 8, `${before} reads in 320 ms at one per 50 ms, for 100 waiters`);
    current = view('COMPLETE', 'COMPLETE');
    const answers = await Promise.all(waits);
    assert.ok(answers.every((a) => a?.status === 'COMPLETE'));
    assert.equal(watcher.size, 0, 'an ended run is no longer read');
    const settledReads = reads;
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(reads, settledReads);
  });

  it('gives up after the timeout and stops reading when the last waiter leaves', async () => {
    let reads = 0;
    const watcher = new RunWatcher(async () => { reads++; return view('RUNNING', 'RUNNING'); }, 30, silentLogger);
    const answer = await watcher.waitFor('r1', () => false, 150);
    assert.equal(answer, undefined);
    assert.equal(watcher.size, 0);
    const after = reads;
    await new Promise((resolve) => setTimeout(resolve, 120));
    assert.equal(reads, after);
  });
});
