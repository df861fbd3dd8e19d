/**
 * The workflow language's control flow, run by the real runAutomation workflow on a worker with
 * typed fake activities (test/fast/support): no gateway, no registry, no HTTP. What a caller sees
 * of the same runs over HTTP (status and results endpoints, publish-time refusals) stays in the
 * end-to-end tests (test/workflows/flow-constructs.test.ts, test/e2e/durable-waits.test.ts).
 */
import assert from 'node:assert/strict';
import type { StepOutcome } from '../../src/common/run-types';
import { approvalSignal, decideUpdate, recordedDecisionSignal, type RunAutomationWorkflow } from '../../src/common/workflow-contracts';
import { eventually, FastWorker, runEnd, stateOf } from './support/fast-worker';
import { FakeWorld } from './support/fake-activities';

const addressOf = (o: StepOutcome) => o.stepPath ?? String(o.stepIndex);
const topLevel = (outcomes: StepOutcome[], index: number) => outcomes.find((o) => o.stepIndex === index && o.stepPath === undefined);
const statuses = (steps: Record<string, { status: string }> | undefined) =>
  Object.fromEntries(Object.entries(steps ?? {}).map(([address, s]) => [address, s.status]));
const t = (name: string, template: string, more: Record<string, unknown> = {}) => ({ name, type: 'template', format: 'plaintext', template, ...more });

describe('the interpreter on a worker with fake activities (fast layer)', () => {
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

  describe('conditions and errors', () => {
    it('skips a step whose if is false (SKIPPED in its status), and later steps see it', async () => {
      const { summary } = await fw.run({
        name: 'if-skip',
        steps: [
          t('Hello', 'hi {{inputs.name}}'),
          t('Only VIPs', 'welcome, VIP', { if: 'inputs.vip = true' }),
          t('Saw it', 'step 2 was {{steps.2.status}}', { if: 'steps.`2`.status = "SKIPPED"' }),
        ],
      }, { name: 'Ann', vip: false });
      assert.equal(summary.status, 'COMPLETE', JSON.stringify(summary));
      assert.deepEqual(summary.outcomes.map((o) => o.stepIndex), [1, 3]);
      assert.equal(topLevel(summary.outcomes, 3)?.result, 'step 2 was SKIPPED');
      assert.deepEqual(statuses(summary.steps), { 1: 'COMPLETE', 2: 'SKIPPED', 3: 'COMPLETE' });
    });

    it('onError continue: the step fails, the run goes on, and later steps see its exitCode', async () => {
      const { summary } = await fw.run({
        name: 'on-error',
        steps: [
          { name: 'Broken', type: 'code', source: 'throw new Error("nope")', onError: 'continue' },
          t('Check', 'exit {{steps.1.exitCode}} {{steps.1.status}}'),
          t('Recover', 'recovered', { if: 'steps.`1`.exitCode != 0' }),
        ],
      });
      assert.equal(summary.status, 'COMPLETE', JSON.stringify(summary));
      assert.equal(topLevel(summary.outcomes, 2)?.result, 'exit 1 FAILED');
      assert.equal(topLevel(summary.outcomes, 3)?.result, 'recovered');
      assert.deepEqual(statuses(summary.steps), { 1: 'FAILED', 2: 'COMPLETE', 3: 'COMPLETE' });
    });

    it('a failing step fails the run (STEP_FAILED) and no later step runs', async () => {
      const end = await fw.run({
        name: 'fails',
        steps: [{ name: 'Broken', type: 'code', source: 'throw new Error("nope")' }, t('Never', 'x')],
      });
      assert.equal(end.summary.status, 'FAILED');
      assert.equal(end.failureType, 'STEP_FAILED');
      assert.match(end.error ?? '', /step 1 \(Broken\) failed/);
      assert.deepEqual(end.summary.outcomes.map(addressOf), ['1']);
    });
  });

  describe('branch', () => {
    const definition = {
      name: 'branch',
      steps: [
        {
          name: 'Route', type: 'branch',
          cases: [
            { if: 'inputs.amount > 1000', steps: [t('Big', 'big {{inputs.amount}}')] },
            { if: 'inputs.amount > 100', steps: [t('Medium', 'medium'), t('Echo', '{{local.1.result}}!')] },
          ],
          default: [t('Small', 'small')],
        },
        t('After', 'routed: {{steps.1.result}}'),
      ],
    };

    it('runs the first case that holds; inner steps are addressed <index>.<case>.<step> and see their list as local', async () => {
      const { summary } = await fw.run(definition, { amount: 500 });
      assert.equal(summary.status, 'COMPLETE', JSON.stringify(summary));
      assert.deepEqual(summary.outcomes.map(addressOf), ['1.2.1', '1.2.2', '1', '2']);
      assert.equal(topLevel(summary.outcomes, 2)?.result, 'routed: medium!');
      assert.deepEqual(statuses(summary.steps), { 1: 'COMPLETE', '1.2.1': 'COMPLETE', '1.2.2': 'COMPLETE', 2: 'COMPLETE' });
    });

    it('runs the default (list number cases + 1) when no case holds', async () => {
      const { summary } = await fw.run(definition, { amount: 5 });
      assert.equal(topLevel(summary.outcomes, 2)?.result, 'routed: small');
      assert.ok(summary.outcomes.some((o) => o.stepPath === '1.3.1'), 'the default is list 3');
    });
  });

  describe('forEach', () => {
    it('runs its steps once per item with bounded concurrency and collects the results in order', async () => {
      const { runId, summary } = await fw.run({
        name: 'foreach',
        steps: [
          {
            name: 'Each', type: 'forEach', items: 'inputs.ids', concurrency: 3,
            steps: [
              t('Name', 'item-{{item}}'),
              { name: 'Label', type: 'code', source: 'return { id: item, index, name: local[1].result }' },
            ],
          },
          { name: 'Count', type: 'code', source: 'return steps[1].json.length' },
        ],
      }, { ids: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] });
      assert.equal(summary.status, 'COMPLETE', JSON.stringify(summary));
      const each = JSON.parse(fw.output(runId, 1)) as { id: string; index: number; name: string }[];
      assert.deepEqual(each.map((e) => e.id), ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
      assert.deepEqual(each.map((e) => e.index), [0, 1, 2, 3, 4, 5, 6]);
      assert.equal(each[3]?.name, 'item-d');
      assert.equal(topLevel(summary.outcomes, 2)?.result, '7');
      assert.equal(summary.steps?.['1.7.2']?.status, 'COMPLETE');
      assert.equal(summary.steps?.['1']?.progress, '7/7 done');
      assert.equal(fw.output(runId, '1.4.1'), 'item-d', 'each item\'s steps store their own output');
    });

    it('a failing step inside a forEach fails the run, naming the item and the step', async () => {
      const end = await fw.run({
        name: 'foreach-fail',
        steps: [{ name: 'Each', type: 'forEach', items: '[1, 2, 3]', steps: [{ name: 'Odd fails', type: 'code', source: 'if (item === 2) throw new Error("two"); return item' }] }],
      });
      assert.equal(end.summary.status, 'FAILED');
      assert.match(end.error ?? '', /step 1 \(Each\) failed: item 2: step 1\.2\.1 \(Odd fails\) failed/);
    });

    it('nested forEach: the inner item shadows the outer one, which stays reachable as outer.item / outer.index (also through a branch)', async () => {
      const { runId, summary } = await fw.run({
        name: 'nested-scope-foreach',
        steps: [{
          name: 'Groups', type: 'forEach', items: 'inputs.groups',
          steps: [
            {
              name: 'Members', type: 'forEach', items: 'item.members', concurrency: 2,
              steps: [
                t('Line', '{{outer.item.name}}#{{outer.index}}/{{item}}#{{index}}'),
                { name: 'Deeper', type: 'forEach', items: '[1..2]', steps: [
                  { name: 'Cell', type: 'code', source: 'return [outer.outer.item.name, outer.item, item, outer.index, index]' },
                ] },
                {
                  name: 'Pick', type: 'branch',
                  cases: [{ if: 'outer.item.name = "g2" and index = 0', steps: [t('First of g2', 'first of {{outer.item.name}}: {{item}}')] }],
                  default: [t('Other', 'other {{item}}')],
                },
                { name: 'Member', type: 'code', source: 'return { line: local[1].result, deeper: local[2].json, pick: local[3].result }' },
              ],
            },
            {
              name: 'Via', type: 'branch',
              cases: [{ if: 'true', steps: [{
                name: 'Again', type: 'forEach', items: 'item.members',
                steps: [t('Say', '{{item}}@{{index}} of {{outer.item.name}}@{{outer.index}}')],
              }] }],
            },
            { name: 'Group', type: 'code', source: 'return { members: local[1].json, via: local[2].json }' },
          ],
        }],
      }, { groups: [{ name: 'g1', members: ['x', 'y'] }, { name: 'g2', members: ['z'] }] });
      assert.equal(summary.status, 'COMPLETE', JSON.stringify(summary));
      assert.deepEqual(JSON.parse(fw.output(runId, 1)), [
        {
          members: [
            { line: 'g1#0/x#0', deeper: [['g1', 'x', 1, 0, 0], ['g1', 'x', 2, 0, 1]], pick: 'other x' },
            { line: 'g1#0/y#1', deeper: [['g1', 'y', 1, 1, 0], ['g1', 'y', 2, 1, 1]], pick: 'other y' },
          ],
          via: ['x@0 of g1@0', 'y@1 of g1@0'],
        },
        {
          members: [{ line: 'g2#1/z#0', deeper: [['g2', 'z', 1, 0, 0], ['g2', 'z', 2, 0, 1]], pick: 'first of g2: z' }],
          via: ['z@0 of g2@1'],
        },
      ]);
    });

    it('item and index reach the lists of a branch and a parallel step inside a forEach', async () => {
      const { runId, summary } = await fw.run({
        name: 'scope-in-branch-parallel',
        steps: [{
          name: 'Each', type: 'forEach', items: '["a", "b"]',
          steps: [
            { name: 'Which', type: 'branch', cases: [{ if: 'index = 1', steps: [t('Second', 'second {{item}}')] }], default: [t('First', 'first {{item}}#{{index}}')] },
            { name: 'Both', type: 'parallel', branches: [{ steps: [t('L', 'l-{{item}}')] }, { steps: [{ name: 'R', type: 'code', source: 'return item + index' }] }] },
          ],
        }],
      });
      assert.equal(summary.status, 'COMPLETE', JSON.stringify(summary));
      assert.equal(fw.output(runId, '1.1.1'), 'first a#0');
      assert.equal(fw.output(runId, '1.2.1'), 'second b');
      assert.deepEqual(JSON.parse(fw.output(runId, '1.2.2')), ['l-b', 'b1']);
    });
  });

  describe('parallel', () => {
    it('all waits for every branch and collects their results in order', async () => {
      const { summary } = await fw.run({
        name: 'parallel-all',
        steps: [{
          name: 'Both', type: 'parallel',
          branches: [
            { steps: [{ name: 'A', type: 'code', source: 'return { path: "/par/a", n: 1 }' }] },
            { steps: [t('B', 'b')] },
          ],
        }],
      });
      assert.equal(summary.status, 'COMPLETE', JSON.stringify(summary));
      assert.deepEqual(JSON.parse(topLevel(summary.outcomes, 1)?.result ?? ''), [{ path: '/par/a', n: 1 }, 'b']);
    });

    it('first takes the first branch to complete and skips the rest; a lost branch\'s unstarted steps are not listed', async () => {
      const { summary } = await fw.run({
        name: 'parallel-first',
        steps: [{
          name: 'Race', type: 'parallel', mode: 'first',
          branches: [
            { steps: [{ name: 'Slow', type: 'delay', duration: '30s' }, { name: 'Never', type: 'template', template: 'x' }] },
            { steps: [t('Quick', 'quick')] },
          ],
        }],
      });
      assert.equal(summary.status, 'COMPLETE', JSON.stringify(summary));
      assert.deepEqual(JSON.parse(topLevel(summary.outcomes, 1)?.result ?? ''), [null, 'quick']);
      assert.equal(summary.steps?.['1.1.1']?.status, 'SKIPPED');
      assert.equal(summary.steps?.['1.1.2'], undefined);
      assert.equal(summary.steps?.['1.2.1']?.status, 'COMPLETE');
    });
  });

  describe('durable waits', () => {
    it('a delay shows PAUSED with the instant it resumes, then the run completes', async () => {
      const handle = await fw.startRun({ name: 'delay', steps: [{ name: 'Wait', type: 'delay', duration: '2s' }, t('After', 'done')] });
      const paused = await eventually(async () => {
        const state = await stateOf(handle);
        return state.status === 'PAUSED' ? state : undefined;
      }, 'the delay step pausing the run');
      assert.equal(paused.steps['1']?.status, 'PAUSED');
      const waiting = paused.waitingOn;
      assert.equal(waiting?.kind, 'timer');
      assert.ok(waiting.kind === 'timer' && !Number.isNaN(Date.parse(waiting.resumeAt)), 'the state names when the run resumes');
      const { summary } = await runEnd(handle);
      assert.equal(summary.status, 'COMPLETE');
      assert.equal(topLevel(summary.outcomes, 2)?.result, 'done');
    });

    const approval = (more: Record<string, unknown> = {}) => ({
      name: 'needs-approval',
      steps: [
        t('Prepare', 'invoice {{inputs.invoice}}'),
        { name: 'Sign-off', type: 'approval', approvers: ['ann@example.com', 'bob@example.com'], message: 'Pay {{steps.1.result}}?', timeout: '1m', ...more },
        t('Pay', 'paid after {{steps.2.json.outcome}}'),
      ],
    });
    const waitingForApproval = (handle: Awaited<ReturnType<FastWorker['startRun']>>) => eventually(async () => {
      const state = await stateOf(handle);
      return state.waitingOn?.kind === 'approval' ? state : undefined;
    }, 'the run waiting for approval');

    it('approval: pauses, takes a decision through the decide update, and continues when approved', async () => {
      const handle = await fw.startRun(approval(), { invoice: 'INV-7' });
      await waitingForApproval(handle);
      const recorded = await handle.executeUpdate(decideUpdate, { args: [{ decision: 'approve', approver: 'Ann@example.com', actor: 'api-key:k1', comment: 'looks right', via: 'api' }] });
      assert.equal(recorded.decision, 'approve');
      const { runId, summary } = { runId: handle.workflowId, ...(await runEnd(handle)) };
      assert.equal(summary.status, 'COMPLETE');
      assert.equal(fw.output(runId, 3), 'paid after approved');
      assert.equal((JSON.parse(fw.output(runId, 2)) as { outcome: string }).outcome, 'approved');
    });

    it('approval: a rejection fails the run, or lets it go on when the step says onReject continue', async () => {
      const failing = await fw.startRun(approval(), { invoice: 'INV-8' });
      await waitingForApproval(failing);
      await failing.executeUpdate(decideUpdate, { args: [{ decision: 'reject', approver: 'bob@example.com', via: 'api' }] });
      assert.equal((await runEnd(failing)).summary.status, 'FAILED');

      const going = await fw.startRun(approval({ onReject: 'continue' }), { invoice: 'INV-9' });
      await waitingForApproval(going);
      await going.executeUpdate(decideUpdate, { args: [{ decision: 'reject', approver: 'bob@example.com', via: 'api' }] });
      const { summary } = await runEnd(going);
      assert.equal(summary.status, 'COMPLETE');
      assert.equal(fw.output(going.workflowId, 3), 'paid after rejected');
    });

    it('approval: takes a decision sent as a signal (an operator\'s `temporal workflow signal`)', async () => {
      const handle = await fw.startRun(approval(), { invoice: 'INV-11' });
      await waitingForApproval(handle);
      await handle.signal(approvalSignal, { decision: 'approve', approver: 'bob@example.com', via: 'signal' });
      const { summary } = await runEnd(handle);
      assert.equal(summary.status, 'COMPLETE');
      assert.equal(fw.output(handle.workflowId, 3), 'paid after approved');
    });

    it('approval: applies a recorded decision (signal) with its own via and actor, counts its update once, and keeps each outcome, a refusal with its code', async () => {
      const handle = await fw.startRun(approval({ required: 2 }), { invoice: 'INV-12' });
      await waitingForApproval(handle);
      const ann = { decision: 'approve' as const, approver: 'ann@example.com', actor: 'api-key:k1', via: 'api' as const, decisionId: 'd-ann' };
      // its update answered first; then its signal (the gateway sent both): one decision
      assert.equal((await handle.executeUpdate(decideUpdate, { args: [ann], updateId: ann.decisionId })).stepIndex, 2, 'the update names the step');
      await handle.signal(recordedDecisionSignal, ann);
      // a second decision of ann's, recorded: refused when the run reads it
      await handle.signal(recordedDecisionSignal, { ...ann, actor: 'api-key:k2', decisionId: 'd-ann-again' });
      // a recorded decision through a link: bob's, the link's approver as actor
      await handle.signal(recordedDecisionSignal, { decision: 'approve', approver: 'bob@example.com', via: 'link', stepIndex: 2, decisionId: 'd-bob' });
      const { summary } = await runEnd(handle);
      assert.equal(summary.status, 'COMPLETE');
      const result = JSON.parse(fw.output(handle.workflowId, 2)) as { decisions: { approver: string; actor: string; via: string }[] };
      assert.deepEqual(result.decisions.map((d) => [d.approver, d.actor, d.via]), [['ann@example.com', 'api-key:k1', 'api'], ['bob@example.com', 'bob@example.com', 'link']]);
      assert.deepEqual(summary.decisionOutcomes?.map((o) => [o.decisionId, o.outcome, o.refusal, o.stepIndex]), [
        ['d-ann', 'applied', undefined, 2], ['d-ann-again', 'refused', 'ALREADY_DECIDED', 2], ['d-bob', 'applied', undefined, 2],
      ]);
    });

    it('waitUntil: an instant in the past completes at once, one taken from the inputs waits until then', async () => {
      const soon = new Date(Date.now() + 1500).toISOString();
      const { summary } = await fw.run({
        name: 'wait-until',
        steps: [{ name: 'Past', type: 'waitUntil', until: '2020-01-01T00:00:00Z' }, { name: 'Soon', type: 'waitUntil', until: '{{inputs.at}}' }, t('After', 'done')],
      }, { at: soon });
      assert.equal(summary.status, 'COMPLETE', JSON.stringify(summary));
      assert.deepEqual(statuses(summary.steps), { 1: 'COMPLETE', 2: 'COMPLETE', 3: 'COMPLETE' });
      assert.ok(Date.now() >= Date.parse(soon), 'the run waited until the instant');
    });

    for (const [onTimeout, status, outcome] of [['approve', 'COMPLETE', 'approved by timeout'], ['reject', 'FAILED', 'rejected by timeout'], ['fail', 'TIMEOUT', 'timed out']] as const) {
      it(`approval: applies the default decision "${onTimeout}" when nobody decides in time (${status}), and takes no decision after`, async () => {
        const handle = await fw.startRun(approval({ timeout: '1s', onTimeout }), { invoice: 'INV-T' });
        const { summary } = await runEnd(handle);
        assert.equal(summary.status, status);
        assert.equal((JSON.parse(fw.output(handle.workflowId, 2)) as { outcome: string }).outcome, outcome);
        await assert.rejects(handle.executeUpdate(decideUpdate, { args: [{ decision: 'approve', approver: 'ann@example.com', via: 'api' }] }));
      });
    }

    it('approval: refuses a decision by someone who is not an approver', async () => {
      const handle = await fw.startRun(approval(), { invoice: 'INV-10' });
      await waitingForApproval(handle);
      await assert.rejects(handle.executeUpdate(decideUpdate, { args: [{ decision: 'approve', approver: 'mallory@example.com', via: 'api' }] }));
      await handle.executeUpdate(decideUpdate, { args: [{ decision: 'approve', approver: 'ann@example.com', via: 'api' }] });
      assert.equal((await runEnd(handle)).summary.status, 'COMPLETE');
    });
  });

  describe('trigger steps (chained runs)', () => {
    it('waits for a chained run and takes its results as the step result; fire and forget answers the chained run ID', async () => {
      fw.world.triggers.set('trg_child', { name: 'child', steps: [t('Greet', 'hello {{inputs.who}}')] });
      const { runId, summary } = await fw.run({
        name: 'parent',
        steps: [
          { name: 'Chain', type: 'trigger', triggerId: 'trg_child', inputs: { who: '{{inputs.name}}' } },
          { name: 'Forget', type: 'trigger', triggerId: 'trg_child', inputs: { who: 'nobody' }, wait: false },
        ],
      }, { name: 'Ada' });
      assert.equal(summary.status, 'COMPLETE', JSON.stringify(summary));
      assert.match(fw.output(runId, 1), /hello Ada/);
      const forgotten = topLevel(summary.outcomes, 2)?.result ?? '';
      const chained = await fw.client.workflow.getHandle<RunAutomationWorkflow>(forgotten).result();
      assert.equal(chained.status, 'COMPLETE', 'the fire-and-forget step answers the chained run ID, which completes on its own');
      assert.equal(chained.outcomes[0]?.result, 'hello nobody');
    });

    it('stops a cycle of chained runs at the chain depth limit, naming it', async () => {
      fw.world.maxChainDepth = 2;
      const loop = { name: 'loop', steps: [{ name: 'Again', type: 'trigger', triggerId: 'trg_loop' }] };
      fw.world.triggers.set('trg_loop', loop);
      const end = await fw.run(loop);
      assert.equal(end.summary.status, 'FAILED');
      assert.match(end.error ?? '', /would be 3 deep; the limit is 2/);
    });

    it('fails the step when the chained run fails, naming why', async () => {
      fw.world.triggers.set('trg_bad', { name: 'bad-child', steps: [{ name: 'Boom', type: 'code', source: "throw new Error('child broke')" }] });
      const end = await fw.run({ name: 'sad-parent', steps: [{ name: 'Call', type: 'trigger', triggerId: 'trg_bad' }] });
      assert.equal(end.summary.status, 'FAILED');
      assert.match(end.error ?? '', /chained run .* failed: .*child broke/);
    });

    it('fails the step when the trigger cannot be resolved, naming why', async () => {
      const end = await fw.run({ name: 'parent-missing', steps: [{ name: 'Chain', type: 'trigger', triggerId: 'trg_nowhere' }] });
      assert.equal(end.summary.status, 'FAILED');
      assert.match(end.error ?? '', /no trigger trg_nowhere in this organization/);
    });
  });

  describe('time limit', () => {
    it('ends a run over its own timeoutSeconds as TIMEOUT from inside the workflow (RUN_TIMEOUT)', async () => {
      const end = await fw.run({ name: 'too-slow', timeoutSeconds: 2, steps: [{ name: 'Long', type: 'delay', duration: '1h' }] });
      assert.equal(end.summary.status, 'TIMEOUT');
      assert.equal(end.failureType, 'RUN_TIMEOUT');
    });
  });
});
