import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createRunStep } from '../../activities/run-step';
import { createFileBlobStore, type BlobStore } from '../../src/blobs/blob-store';
import { CodeStepSchema } from '../../activities/steps/code/schema';
import { TemplateStepSchema } from '../../activities/steps/template/schema';
import type { ActivityStep } from '../../src/common/definition';
import { RESULT_INLINE_LIMIT, type RunStepRequest, type StepOutcome } from '../../src/common/run-types';

const quiet: Logger = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

const template = (fields: Record<string, unknown>): ActivityStep => TemplateStepSchema.parse({ name: 'template', type: 'template', ...fields });
const code = (fields: Record<string, unknown>): ActivityStep => CodeStepSchema.parse({ name: 'code', type: 'code', ...fields });

function request(stepIndex: number, step: ActivityStep, previous: StepOutcome[] = [], inputs: RunStepRequest['run']['inputs'] = {}): RunStepRequest {
  return {
    run: {
      runId: `run_${randomUUID()}`, orgId: `org_${randomUUID()}`, automationId: 'wf_1', automationVersion: 1,
      triggerId: 'trg_1', started: new Date().toISOString(), inputs,
    },
    stepIndex,
    step,
    previous,
  };
}

/** The same run, another step. */
function next(earlier: RunStepRequest, stepIndex: number, step: ActivityStep, previous: StepOutcome[]): RunStepRequest {
  return { ...earlier, stepIndex, step, previous };
}

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/')).sort();
}

describe('createRunStep', () => {
  let root: string;
  let blobs: BlobStore;
  let runStep: ReturnType<typeof createRunStep>;
  const run = (req: RunStepRequest): Promise<StepOutcome> => new MockActivityEnvironment(undefined, { logger: quiet }).run(runStep, req);

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'flowgate-run-step-'));
    blobs = createFileBlobStore(root);
    runStep = createRunStep({ blobs, allowPrivateNetwork: false });
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('runs a template step, stores output.txt and stdout.txt and reports their sizes and mime types', async () => {
    const req = request(1, template({ name: 'Greet', template: 'Héllo {{inputs.name}}' }), [], { name: 'Ada' });
    const outcome = await run(req);
    const prefix = `runs/${req.run.orgId}/${req.run.runId}/steps/1`;
    const stdout = (await blobs.read(`${prefix}/stdout.txt`))?.toString('utf8');
    assert.ok(stdout !== undefined, 'stdout.txt was not stored');
    assert.deepEqual(outcome, {
      stepIndex: 1, status: 'COMPLETE', resultType: 'markdown', result: 'Héllo Ada', truncated: false, exitCode: 0, duration: outcome.duration,
      files: {
        'output.txt': { key: `${prefix}/output.txt`, mimeType: 'text/markdown; charset=utf-8', size: Buffer.byteLength('Héllo Ada') },
        'stdout.txt': { key: `${prefix}/stdout.txt`, mimeType: 'text/plain; charset=utf-8', size: Buffer.byteLength(stdout) },
      },
    });
    assert.ok(Number.isInteger(outcome.duration) && outcome.duration >= 0);
    assert.equal((await readFile(path.join(root, prefix, 'output.txt'), 'utf8')), 'Héllo Ada');
    assert.deepEqual(await filesUnder(root), [`${prefix}/output.txt`, `${prefix}/stdout.txt`]);
  });

  it('labels a plaintext template\'s output.txt as text/plain', async () => {
    const outcome = await run(request(1, template({ name: 'Plain', format: 'plaintext', template: 'plain' })));
    assert.equal(outcome.resultType, 'plaintext');
    assert.equal(outcome.files['output.txt'].mimeType, 'text/plain; charset=utf-8');
  });

  it('keeps a result of exactly RESULT_INLINE_LIMIT characters whole', async () => {
    const text = 'x'.repeat(RESULT_INLINE_LIMIT);
    const outcome = await run(request(1, template({ name: 'Edge', template: text })));
    assert.equal(outcome.truncated, false);
    assert.equal(outcome.result, text);
  });

  it('cuts a result longer than RESULT_INLINE_LIMIT and marks it truncated, while output.txt holds it whole', async () => {
    const text = `${'a'.repeat(RESULT_INLINE_LIMIT)}TAIL`;
    const req = request(1, template({ name: 'Long', template: text }));
    const outcome = await run(req);
    assert.equal(outcome.truncated, true);
    assert.equal(outcome.result, 'a'.repeat(RESULT_INLINE_LIMIT));
    assert.equal(outcome.files['output.txt'].size, text.length);
    assert.equal((await blobs.read(outcome.files['output.txt'].key))?.toString('utf8'), text);
  });

  it('gives a later step the whole text of a truncated earlier result through interpolation', async () => {
    const payload = { filler: 'f'.repeat(RESULT_INLINE_LIMIT * 2), tail: 'the end' };
    const first = request(1, code({ name: 'Big JSON', source: `return ${JSON.stringify(payload)}` }));
    const big = await run(first);
    assert.equal(big.status, 'COMPLETE');
    assert.equal(big.truncated, true);
    assert.ok(!big.result.includes('the end'), 'the inline result was not cut');

    const second = await run(next(first, 2, template({ name: 'Echo', format: 'plaintext', template: '{{steps.1.json.tail}}|{{steps.1.result}}' }), [big]));
    const echoed = (await blobs.read(second.files['output.txt'].key))?.toString('utf8');
    assert.equal(echoed, `the end|${JSON.stringify(payload)}`);
  });

  it('gives a later code step the whole text of a truncated earlier result', async () => {
    const first = request(1, template({ name: 'Long', template: 'z'.repeat(RESULT_INLINE_LIMIT + 10) }));
    const long = await run(first);
    assert.equal(long.truncated, true);
    const measured = await run(next(first, 2, code({ name: 'Measure', source: 'return steps[1].result.length' }), [long]));
    assert.equal(measured.result, String(RESULT_INLINE_LIMIT + 10));
  });

  it('fails as an infrastructure error (for Temporal to retry) when a truncated earlier result is missing from the store', async () => {
    const first = request(1, template({ name: 'Long', template: 'z'.repeat(RESULT_INLINE_LIMIT + 1) }));
    const long = await run(first);
    await blobs.remove(long.files['output.txt'].key);
    await assert.rejects(run(next(first, 2, template({ name: 'Echo', template: '{{steps.1.result}}' }), [long])), /output\.txt of step 1 is missing/);
  });

  it('stores the files of a step that ran and failed, and reports the failure as a value', async () => {
    const outcome = await run(request(1, code({ name: 'Broken', source: "console.log('before'); throw new Error('nope')" })));
    assert.equal(outcome.status, 'FAILED');
    assert.notEqual(outcome.exitCode, 0);
    assert.match(outcome.error ?? '', /nope/);
    assert.match((await blobs.read(outcome.files['stdout.txt'].key))?.toString('utf8') ?? '', /before/);
    assert.ok(await blobs.read(outcome.files['output.txt'].key));
  });

  it('leaves the same files and no debris when the same request runs twice (a retry)', async () => {
    const req = request(3, template({ name: 'Retry', template: `{{inputs.word}} ${'r'.repeat(RESULT_INLINE_LIMIT)}` }), [], { word: 'again' });
    const first = await run(req);
    const filesAfterFirst = await filesUnder(root);
    const contentsAfterFirst = await Promise.all(filesAfterFirst.map((f) => readFile(path.join(root, f), 'utf8')));
    const second = await run(req);
    assert.deepEqual({ ...second, duration: 0 }, { ...first, duration: 0 });
    assert.deepEqual(await filesUnder(root), filesAfterFirst);
    assert.equal(filesAfterFirst.length, 2);
    assert.deepEqual(await Promise.all(filesAfterFirst.map((f) => readFile(path.join(root, f), 'utf8'))), contentsAfterFirst);
  });
});
