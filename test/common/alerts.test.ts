import { strict as assert } from 'node:assert';
import { emptyAlertState, judge, type AlertCondition, type RunEnded } from '../../src/common/alerts';

const ended = (at: number, status: RunEnded['status'] = 'FAILED', runId = `run-${at}`): RunEnded =>
  ({ runId, orgId: 'org', workflowId: 'wf', workflowName: 'wf', status, error: 'boom', at });

describe('alerts: judge', () => {
  it('a failure_rate rule fires once when the window reaches its threshold, then holds back the rest of the outage', () => {
    const rule: AlertCondition = { kind: 'failure_rate', windowSeconds: 60, threshold: 5 };
    const state = emptyAlertState();
    const firings = Array.from({ length: 50 }, (_, i) => judge(rule, state, ended(1_000_000 + i * 1000))).filter((f) => f !== undefined);
    assert.equal(firings.length, 1);
    assert.equal(firings[0]!.count, 5);
    assert.equal(state.suppressed, 45);
    assert.equal(state.fired, 1);
  });

  it('a failure_rate rule fires again after its cooldown, counting what the cooldown held back', () => {
    const rule: AlertCondition = { kind: 'failure_rate', windowSeconds: 10, threshold: 2, cooldownSeconds: 30 };
    const state = emptyAlertState();
    assert.equal(judge(rule, state, ended(0)), undefined);
    assert.equal(judge(rule, state, ended(1000))?.count, 2);
    assert.equal(judge(rule, state, ended(2000)), undefined);
    // out of the window: one failure alone does not cross it
    assert.equal(judge(rule, state, ended(40_000)), undefined);
    const again = judge(rule, state, ended(41_000));
    assert.equal(again?.count, 2);
    assert.equal(again?.suppressed, 1);
  });

  it('a ratio counts completions: it fires once the share is reached over enough runs', () => {
    const rule: AlertCondition = { kind: 'failure_rate', windowSeconds: 60, ratio: 0.5, minRuns: 4 };
    const state = emptyAlertState();
    assert.equal(judge(rule, state, ended(0, 'COMPLETE')), undefined);
    assert.equal(judge(rule, state, ended(1, 'FAILED')), undefined);
    assert.equal(judge(rule, state, ended(2, 'COMPLETE')), undefined);
    const firing = judge(rule, state, ended(3, 'TIMEOUT'));
    assert.deepEqual([firing?.count, firing?.total], [2, 4]);
  });

  it('a run_failed rule fires on a failure, then at most once per cooldown', () => {
    const rule: AlertCondition = { kind: 'run_failed', cooldownSeconds: 60 };
    const state = emptyAlertState();
    assert.equal(judge(rule, state, ended(0, 'COMPLETE')), undefined);
    assert.equal(judge(rule, state, ended(1))?.count, 1);
    assert.equal(judge(rule, state, ended(2)), undefined);
    assert.equal(judge(rule, state, ended(3)), undefined);
    const next = judge(rule, state, ended(61_001));
    assert.deepEqual([next?.count, next?.suppressed], [3, 2]);
  });
});
