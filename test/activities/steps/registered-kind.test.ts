import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createRunStep } from '../../../activities/run-step';
import { BUILT_IN_STEP_KINDS, stepKindsByType, WorkflowDefinitionSchema } from '../../../activities/steps';
import { createFileBlobStore } from '../../../src/blobs/blob-store';
import { definitionSchemas, type RegisteredStep } from '../../../src/common/definition';
import type { RunStepRequest, StepOutcome } from '../../../src/common/run-types';
import { roll, rollStepKind } from '../../fixtures/kinds/roll-step';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../../support/flowgate';

const quiet: Logger = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

interface SyncBody {
  status: string;
  results: { stepIndex: number; stepPath?: string; result: { result: string } }[];
}

describe('a step kind registered in one folder (test/fixtures/kinds/roll-step)', () => {
  let fg: TestFlowgate;
  before(async () => {
    fg = await startTestFlowgate({}, { stepKinds: [rollStepKind] });
  });
  after(async () => {
    await fg?.stop();
  });

  it('is published in a definition and run through the gateway, alone, with retry and inside a forEach', async () => {
    const p = await publishWorkflow(fg, {
      name: 'dice',
      steps: [
        { name: 'Roll', type: 'roll', seed: '{{inputs.seed}}', sides: 20, retry: { maxAttempts: 2 } },
        { name: 'Each', type: 'forEach', items: 'inputs.seeds', steps: [{ name: 'Inner', type: 'roll', seed: '{{item}}' }] },
        { name: 'Say', type: 'template', format: 'plaintext', template: 'rolled {{steps.1.json.value}}' },
      ],
    });
    const response = await trigger(fg, p, { seed: 'abc', seeds: ['x', 'y'] }, { 'x-api-wait': 'true' });
    const body = (await response.json()) as SyncBody;
    assert.equal(body.status, 'COMPLETE', JSON.stringify(body));
    const result = (address: string): string | undefined => body.results.find((r) => (r.stepPath ?? String(r.stepIndex)) === address)?.result.result;
    assert.deepEqual(JSON.parse(result('1') ?? ''), { seed: 'abc', sides: 20, value: roll('abc', 20) });
    assert.deepEqual([result('2.1.1'), result('2.2.1')].map((r) => (JSON.parse(r ?? '') as { value: number }).value), [roll('x', 6), roll('y', 6)]);
    assert.deepEqual((JSON.parse(result('2') ?? '') as { value: number }[]).map((r) => r.value), [roll('x', 6), roll('y', 6)]);
    assert.equal(result('3'), `rolled ${roll('abc', 20)}`);
  });

  it('refuses a roll step its schema refuses, and a type nobody registered, as an invalid definition', async () => {
    const badField = await fg.admin<{ error: string; message: string }>('POST', '/api/v1/workflows', { name: 'x', steps: [{ name: 'R', type: 'roll', seed: 's', sides: 1 }] });
    assert.equal(badField.status, 400);
    assert.equal(badField.body.error, 'invalid_definition');
    assert.match(badField.body.message, /^steps\.0\.sides: /);
    // the answer a gateway without registered kinds gives
    const coin = { name: 'x', steps: [{ name: 'C', type: 'coin', seed: 's' }] };
    const builtInOnly = WorkflowDefinitionSchema.safeParse(coin).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    const unknown = await fg.admin<{ error: string; message: string }>('POST', '/api/v1/workflows', coin);
    assert.deepEqual([unknown.status, unknown.body], [400, { error: 'invalid_definition', message: `${builtInOnly} | 'roll'` }]);
  });
});

describe('definitionSchemas', () => {
  const withRoll = definitionSchemas(BUILT_IN_STEP_KINDS, [rollStepKind]).WorkflowDefinitionSchema;

  it('validates definitions of built-in kinds exactly as without registered kinds', () => {
    const definitions: unknown[] = [
      { name: 'ok', steps: [{ name: 'a', type: 'template', template: 'x' }, { name: 'b', type: 'delay', duration: '1s' }] },
      { name: 'retry on an activity step', steps: [{ name: 'h', type: 'http', url: 'https://example.com', retry: { maxAttempts: 2 } }] },
      { name: 'unknown', steps: [{ name: 'r', type: 'roll', seed: 's' }] },
      { name: 'strict', steps: [{ name: 'a', type: 'template', template: 'x', seed: 1 }] },
      { name: 'nested', steps: [{ name: 'b', type: 'branch', cases: [{ if: 'steps.`2`', steps: [{ name: 'c', type: 'code', source: '' }] }] }] },
    ];
    for (const definition of [definitions[0], definitions[1], definitions[3], definitions[4]]) {
      assert.deepEqual(withRoll.safeParse(definition), WorkflowDefinitionSchema.safeParse(definition));
    }
    assert.equal(WorkflowDefinitionSchema.safeParse(definitions[2]).success, false);
    assert.equal(withRoll.safeParse(definitions[2]).success, true);
  });

  it('names the registered kinds where retry applies', () => {
    const parsed = withRoll.safeParse({ name: 'retry', steps: [{ name: 'w', type: 'delay', duration: '1s', retry: { maxAttempts: 2 } }] });
    assert.deepEqual(parsed.error?.issues.map((i) => i.message), ['retry applies to template, code, http, tool and roll steps, not delay']);
  });

  it('refuses a type that is built in or registered twice, as the worker does', () => {
    const again = { ...rollStepKind };
    assert.throws(() => definitionSchemas(BUILT_IN_STEP_KINDS, [rollStepKind, again]), /step type roll is taken/);
    assert.throws(() => stepKindsByType([rollStepKind, again]), /step type roll is taken/);
    for (const taken of ['template', 'delay', 'forEach']) {
      const kind = { ...rollStepKind, type: taken };
      assert.throws(() => definitionSchemas(BUILT_IN_STEP_KINDS, [kind]), new RegExp(`step type ${taken} is taken`));
      assert.throws(() => stepKindsByType([kind]), new RegExp(`step type ${taken} is taken`));
    }
    assert.deepEqual([...stepKindsByType().keys()], BUILT_IN_STEP_KINDS.map((k) => k.type));
  });
});

describe('runStep and registered kinds', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'flowgate-step-kind-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const request = (step: RegisteredStep): RunStepRequest => ({
    run: { runId: `run_${randomUUID()}`, orgId: `org_${randomUUID()}`, automationId: 'wf_1', automationVersion: 1, triggerId: 'trg_1', started: new Date().toISOString(), inputs: { seed: 'q' } },
    stepIndex: 1, step, previous: [],
  });
  const runOnce = (runStep: ReturnType<typeof createRunStep>, req: RunStepRequest): Promise<StepOutcome> => new MockActivityEnvironment(undefined, { logger: quiet }).run(runStep, req);
  const step: RegisteredStep = { name: 'Roll', type: 'roll', seed: '{{inputs.seed}}', sides: 6 };

  it('dispatches a registered kind\'s step to it', async () => {
    const runStep = createRunStep({ blobs: createFileBlobStore(root), allowPrivateNetwork: false, stepKinds: [rollStepKind] });
    const outcome = await runOnce(runStep, request(step));
    assert.equal(outcome.status, 'COMPLETE');
    assert.deepEqual(JSON.parse(outcome.result), { seed: 'q', sides: 6, value: roll('q', 6) });
  });

  it('fails the step, naming the kind, on a worker that was not given it', async () => {
    const runStep = createRunStep({ blobs: createFileBlobStore(root), allowPrivateNetwork: false });
    const outcome = await runOnce(runStep, request(step));
    assert.equal(outcome.status, 'FAILED');
    assert.equal(outcome.error, 'no step kind roll is registered on this worker');
  });
});
