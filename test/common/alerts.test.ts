import { strict as assert } from 'node:assert';
import { dueWaits, nextWake, periodEnd, takeWatch } from '../../src/common/alert-watches';
import { emptyAlertState, judge, type AlertCondition, type RunEnded } from '../../src/common/alerts';
import { budgetPercent } from '../../src/runs/alerts';

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

describe('alerts: approval waits and budget use', () => {
  const wait = (runId: string, at: number, waiting = true, stepIndex = 2) =>
    ({ kind: 'approval' as const, event: { runId, orgId: 'org', workflowId: 'wf', workflowName: 'wf', stepIndex, waiting, at } });

  it('a run waiting past afterSeconds fires once; one decided before its deadline never does', () => {
    const rule: AlertCondition = { kind: 'approval_waiting', afterSeconds: 60, cooldownSeconds: 1 };
    const state = emptyAlertState();
    assert.equal(takeWatch(rule, state, wait('a', 0)), undefined);
    assert.equal(takeWatch(rule, state, wait('b', 10_000)), undefined);
    assert.equal(nextWake(rule, state), 60_000);
    // b decided at 30 s: its wait drops out
    takeWatch(rule, state, wait('b', 30_000, false));
    assert.deepEqual(dueWaits(rule, state, 59_999), []);
    const due = dueWaits(rule, state, 70_000);
    assert.deepEqual(due.map((d) => [d.waiting?.runId, d.firing.count, d.firing.firstAt]), [['a', 1, 0]]);
    // the same run waiting again (a second report, or its next approval) is not alerted twice
    takeWatch(rule, state, wait('a', 80_000));
    assert.deepEqual(dueWaits(rule, state, 1_000_000), []);
    assert.equal(state.fired, 1);
  });

  it('runs crossing within the cooldown are held back and counted by the next alert', () => {
    const rule: AlertCondition = { kind: 'approval_waiting', afterSeconds: 10 };
    const state = emptyAlertState();
    for (let i = 0; i < 5; i++) takeWatch(rule, state, wait(`r${i}`, i * 1000));
    const first = dueWaits(rule, state, 20_000);
    assert.deepEqual(first.map((f) => f.firing.count), [1]);
    assert.equal(state.suppressed, 4);
    takeWatch(rule, state, wait('late', 400_000));
    const next = dueWaits(rule, state, 410_000);
    assert.deepEqual(next.map((f) => [f.waiting?.runId, f.firing.count, f.firing.suppressed]), [['late', 5, 4]]);
  });

  it('a budget rule fires once per month, at or past its share', () => {
    const rule: AlertCondition = { kind: 'budget', percent: 80 };
    const state = emptyAlertState();
    const use = (period: string, percent: number) => ({ kind: 'budget' as const, use: { orgId: 'org', period, percent, tokens: 1, maxTokens: 1, costNanoUsd: 0, maxCostNanoUsd: null, at: 5 } });
    assert.equal(takeWatch(rule, state, use('2026-12', 79.9)), undefined);
    assert.equal(takeWatch(rule, state, use('2026-12', 80))?.budget?.period, '2026-12');
    assert.equal(takeWatch(rule, state, use('2026-12', 95)), undefined);
    assert.equal(nextWake(rule, state), Date.UTC(2027, 0, 1));
    assert.equal(takeWatch(rule, state, use('2027-01', 81))?.budget?.period, '2027-01');
    assert.equal(periodEnd('2027-01'), Date.UTC(2027, 1, 1));
  });

  it('the budget\'s share is the more spent of tokens and cost; none without a budget', () => {
    assert.equal(budgetPercent({ monthlyMaxTokens: 1000, monthlyMaxCostNanoUsd: 2_000 }, { tokens: 500, costNanoUsd: 1_700 }), 85);
    assert.equal(budgetPercent({ monthlyMaxTokens: 1000, monthlyMaxCostNanoUsd: null }, { tokens: 900, costNanoUsd: 0 }), 90);
    assert.equal(budgetPercent({ monthlyMaxTokens: null, monthlyMaxCostNanoUsd: null }, { tokens: 900, costNanoUsd: 0 }), undefined);
  });

  it('an outcome reaching a watch rule judges nothing', () => {
    assert.equal(judge({ kind: 'budget', percent: 50 }, emptyAlertState(), ended(1)), undefined);
  });
});
