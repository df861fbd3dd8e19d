/**
 * The recipe for a new step kind (docs/architecture.md, "Add a step kind") held to its word: a
 * throwaway kind, one folder (test/fixtures/kinds/shout-step/) and one registration (REGISTERED
 * below: what startFlowgate's `stepKinds` takes, and what a line in BUILT_IN_STEP_KINDS adds to
 * the same lists), is checked by the gateway's own definition check and run by the real workflow
 * bundle on the fast worker. Built-in and registered kinds take the same paths (definitionSchemas,
 * flow-validation's kinds, runStep's stepKindsByType), so should a kind ever need a second place
 * (a list of activity types in the workflow, the definition schema or the flow checks), this fails.
 */
import assert from 'node:assert/strict';
import { BUILT_IN_STEP_KINDS, WorkflowDefinitionSchema, type StepKind } from '../../activities/steps';
import { checkDefinition, definitionSchemaOf } from '../../src/management/workflows';
import { shoutStepKind } from '../fixtures/kinds/shout-step';
import { FastWorker } from './support/fast-worker';
import { FakeWorld } from './support/fake-activities';

/** The one registration. */
const REGISTERED: readonly StepKind[] = [shoutStepKind];

const MARGIN_MS = 30_000; // what the workflow adds to a step's own limit (workflows/interpreter/run-list.ts)

describe('a new step kind is one folder and one registration (test/fixtures/kinds/shout-step)', () => {
  const check = (definition: unknown) => checkDefinition(definitionSchemaOf({ stepKinds: REGISTERED }), definition);
  const issues = (definition: unknown): string[] => {
    const checked = check(definition);
    return checked.ok ? [] : checked.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  describe('the gateway\'s definition check', () => {
    it('takes its steps with its own schema and defaults, at any depth, with retry', () => {
      const checked = check({
        name: 'shouts',
        steps: [
          { name: 'Shout', type: 'shout', text: 'hi {{inputs.name}}', retry: { maxAttempts: 2 } },
          { name: 'Each', type: 'forEach', items: 'inputs.names', steps: [{ name: 'Inner', type: 'shout', text: '{{item}}', times: 2 }] },
        ],
      });
      assert.ok(checked.ok, JSON.stringify(checked));
      assert.deepEqual(checked.definition.steps[0], {
        name: 'Shout', type: 'shout', text: 'hi {{inputs.name}}', times: 1, hoarseAttempts: 0, timeoutMs: 2000,
        retry: { maxAttempts: 2, initialInterval: '1s', backoff: 2, nonRetryable: [] },
      });
    });

    it('refuses what its schema refuses, with its messages, and what its own check finds in the step\'s place', () => {
      assert.deepEqual(issues({ name: 'x', steps: [{ name: 'S', type: 'shout', text: 'hi', times: 9, volume: 11 }] }), [
        'steps.0.times: Too big: expected number to be <=5',
        'steps.0: Unrecognized key: "volume"',
      ]);
      assert.deepEqual(issues({ name: 'x', steps: [{ name: 'S', type: 'shout', text: 'a'.repeat(500), times: 5 }] }), ['steps.0.times: shouts at most 2000 characters in all']);
      assert.deepEqual(issues({
        name: 'x',
        steps: [{ name: 'P', type: 'parallel', branches: [{ steps: [{ name: 'S', type: 'shout', text: 'a' }] }, { steps: [{ name: 'T', type: 'template', template: 'b' }] }] }],
      }), ['steps.0.branches.0.steps.0.text: one shout at a time: not in a parallel step or in a forEach with concurrency above 1']);
    });

    it('counts it among the kinds retry applies to, after the built-in ones', () => {
      assert.deepEqual(issues({ name: 'x', steps: [{ name: 'W', type: 'delay', duration: '1s', retry: { maxAttempts: 2 } }] }),
        [`steps.0.retry: retry applies to ${BUILT_IN_STEP_KINDS.map((k) => k.type).join(', ')} and shout steps, not delay`]);
    });

    it('is refused where it is not registered', () => {
      const definition = { name: 'x', steps: [{ name: 'S', type: 'shout', text: 'hi' }] };
      assert.equal(WorkflowDefinitionSchema.safeParse(definition).success, false);
      assert.equal(checkDefinition(definitionSchemaOf({}), definition).ok, false);
    });
  });

  describe('a run on the real workflow (fast layer)', () => {
    let fw: FastWorker;
    before(async () => {
      fw = await FastWorker.start();
    });
    beforeEach(() => {
      fw.world = new FakeWorld();
      fw.world.stepKinds = REGISTERED;
      fw.overrides = {};
    });
    after(async () => {
      await fw?.stop();
    });

    it('runs its steps as activity steps: alone, retried under retry, with its own time limit, and in a forEach', async () => {
      const { summary } = await fw.run({
        name: 'shouts',
        steps: [
          { name: 'Shout', type: 'shout', text: 'hi {{inputs.name}}', hoarseAttempts: 1, timeoutMs: 5000, retry: { maxAttempts: 3, initialInterval: '100ms' } },
          { name: 'Each', type: 'forEach', items: 'inputs.names', steps: [{ name: 'Inner', type: 'shout', text: '{{item}}', times: 2 }] },
          { name: 'Say', type: 'template', format: 'plaintext', template: 'said {{steps.1.json.text}}' },
        ],
      }, { name: 'Ann', names: ['x', 'y'] });
      assert.equal(summary.status, 'COMPLETE', JSON.stringify(summary));
      const result = (address: string) => summary.outcomes.find((o) => (o.stepPath ?? String(o.stepIndex)) === address)?.result ?? '';
      assert.deepEqual(JSON.parse(result('1')), { text: 'HI ANN', attempt: 2, limitMs: 5000 + MARGIN_MS });
      // the forEach's result: each item's (the items' own outcomes are cut from the summary)
      assert.deepEqual(JSON.parse(result('2')), [{ text: 'X X', attempt: 1, limitMs: 2000 + MARGIN_MS }, { text: 'Y Y', attempt: 1, limitMs: 2000 + MARGIN_MS }]);
      assert.equal(result('3'), 'said HI ANN');
    });
  });
});
