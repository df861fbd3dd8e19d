import assert from 'node:assert/strict';
import { WorkflowDefinitionSchema } from '../../activities/steps';
import { buildRunMemo } from '../../src/common/run-memo';
import type { RunInput } from '../../src/common/run-types';
import { isRunMemo, listedMemo } from '../../src/runs/run-memo-schema';

/** One step of every kind a definition may hold. */
const definition = WorkflowDefinitionSchema.parse({
  name: 'every kind',
  steps: [
    { name: 'template', type: 'template', template: 'hi' },
    { name: 'code', type: 'code', source: 'return 1' },
    { name: 'http', type: 'http', url: 'https://example.test/' },
    { name: 'tool', type: 'tool', server: 'web-search', tool: 'search' },
    { name: 'delay', type: 'delay', duration: '1s' },
    { name: 'waitUntil', type: 'waitUntil', until: '2030-01-01T00:00:00Z' },
    { name: 'approval', type: 'approval', approvers: ['ops'] },
    { name: 'trigger', type: 'trigger', triggerId: 'trg_1' },
    { name: 'agent', type: 'agent', agentId: 'agt_1', message: 'hello' },
    { name: 'branch', type: 'branch', cases: [{ if: 'true', steps: [{ name: 'in branch', type: 'template', template: 'b' }] }] },
    { name: 'forEach', type: 'forEach', items: '[1, 2]', steps: [{ name: 'in item', type: 'template', template: 'i' }] },
    { name: 'parallel', type: 'parallel', branches: [
      { steps: [{ name: 'left', type: 'template', template: 'l' }] }, { steps: [{ name: 'right', type: 'template', template: 'r' }] },
    ] },
  ],
});

const input: Omit<RunInput, 'runId'> = {
  orgId: 'org_1', automationId: 'wf_1', automationName: 'every kind', automationVersion: 3, stepMap: { 1: 1 }, definition,
  triggerId: 'trg_1', startedBy: 'key_1', started: '2026-11-26T12:00:00.000Z', inputs: '',
  origin: { kind: 'resume', runId: 'run_0' }, callback: { url: 'https://example.test/hook' },
};

describe('run memo schema', () => {
  it('takes the memo flowgate builds for a run of every step kind, with what Temporal and schedules add', () => {
    const memo = buildRunMemo(input);
    assert.equal(memo.steps.length, 12);
    assert.ok(isRunMemo(memo));
    assert.ok(isRunMemo({ ...memo, type: 'SCHEDULE', scheduleRevision: 2, endedAs: 'TIMEOUT', taskTtlMs: 60_000 }));
  });

  it('refuses memos that are no flowgate run\'s: another workflow type\'s, no organization, a step without a type', () => {
    const memo = buildRunMemo(input);
    assert.equal(isRunMemo(undefined), false);
    assert.equal(isRunMemo({ agent: { orgId: 'org_1', agentId: 'agt_1', chatId: 'chat_1' } }), false);
    assert.equal(isRunMemo({ ...memo, orgId: '' }), false);
    assert.equal(isRunMemo({ ...memo, steps: [{ name: 'x', type: '' }] }), false);
    assert.equal(isRunMemo({ ...memo, steps: [{ name: 'x' }] }), false);
    // a kind registered at start is no built-in one, and its runs are flowgate runs
    assert.equal(isRunMemo({ ...memo, steps: [{ name: 'x', type: 'roll' }] }), true);
  });

  it('reads a run list entry\'s memo fields, each defaulting alone', () => {
    const listed = listedMemo({ ...buildRunMemo(input), endedAs: 'TIMEOUT' });
    assert.deepEqual([listed.automationId, listed.automationVersion, listed.endedAs], ['wf_1', 3, 'TIMEOUT']);
    assert.deepEqual(listedMemo(undefined), {});
    assert.equal(listedMemo({ automationVersion: 'three' }).automationId, undefined);
  });
});
