import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileBlobStore, type BlobStore } from '../../src/blobs/blob-store';
import { INLINE_INPUTS_LIMIT } from '../../src/attachments/limits';
import { WorkflowDefinitionSchema } from '../../activities/steps';
import { INPUTS_REF_FIELD, isInputsReference } from '../../src/common/inputs-reference';
import { openRegistry, type Registry } from '../../src/registry';
import { StartInFlightError } from '../../src/runs/run-service';
import { StartUnconfirmedError, TriggerService, type RunStarts, type TriggerTarget } from '../../src/runs/trigger-service';

describe('TriggerService (resolve and prepare, shared by the trigger route and the trigger step)', () => {
  let dir: string;
  let registry: Registry;
  let blobs: BlobStore;
  let service: TriggerService;
  const warnings: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'flowgate-trigger-service-'));
    registry = await openRegistry({ kind: 'sqlite', file: join(dir, 'registry.db') });
    blobs = createFileBlobStore(join(dir, 'blobs'));
    service = new TriggerService({ registry, blobs, log: { warn: (message) => warnings.push(message) } });
  });

  after(async () => {
    await registry?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh org with a published workflow (count: integer) and a trigger on it. */
  async function published(): Promise<{ orgId: string; triggerId: string }> {
    const org = await registry.orgs.create(`org-${Date.now()}`);
    const definition = WorkflowDefinitionSchema.parse({
      name: 'counted', inputSchema: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] },
      steps: [{ name: 'Say', type: 'template', template: '{{inputs.count}}' }],
    });
    const workflow = await registry.workflows.create(org.id, definition);
    await registry.workflows.publish(org.id, workflow.id);
    const trigger = await registry.triggers.create(org.id, { workflowId: workflow.id });
    return { orgId: org.id, triggerId: trigger.id };
  }

  async function target(orgId: string, triggerId: string): Promise<TriggerTarget> {
    const resolved = await service.resolve(orgId, triggerId);
    assert.ok(resolved.ok, 'the trigger resolves');
    return resolved;
  }

  it('resolves a trigger of the organization to its latest published version', async () => {
    const { orgId, triggerId } = await published();
    const { trigger, version } = await target(orgId, triggerId);
    assert.equal(trigger.id, triggerId);
    assert.equal(version.workflowId, trigger.workflowId);
    assert.equal(version.version, 1);
  });

  it('refuses another organization\'s trigger exactly like a missing one', async () => {
    const { triggerId } = await published();
    const other = await registry.orgs.create('other');
    const theirs = await service.resolve(other.id, triggerId);
    const missing = await service.resolve(other.id, 'trg_missing');
    assert.deepEqual(theirs, { ok: false, code: 'UNKNOWN_TRIGGER', message: `no trigger ${triggerId}` });
    assert.deepEqual(missing, { ok: false, code: 'UNKNOWN_TRIGGER', message: 'no trigger trg_missing' });
  });

  it('refuses inputs that do not fit the schema and removes the blobs already stored for the request', async () => {
    const { orgId, triggerId } = await published();
    const key = `attachments/${orgId}/upload-${Date.now()}`;
    await blobs.put(key, 'file body');
    const run = await service.prepare(await target(orgId, triggerId), { inputs: { count: 'many' }, coerce: true, startedBy: 'key_x', storedKeys: [key] });
    assert.equal(run.ok, false);
    assert.equal(!run.ok && run.code, 'INVALID_INPUTS');
    assert.match(!run.ok ? run.message : '', /count/);
    assert.equal(await blobs.read(key), undefined, 'the refused request\'s attachment is gone');
  });

  it('converts textual inputs when asked to, and takes JSON inputs as sent', async () => {
    const { orgId, triggerId } = await published();
    const t = await target(orgId, triggerId);
    const coerced = await service.prepare(t, { inputs: { count: '5' }, coerce: true, startedBy: 'key_x' });
    assert.ok(coerced.ok);
    assert.deepEqual(coerced.input.inputs, { count: 5 });
    assert.equal(coerced.input.triggerId, triggerId);
    assert.equal(coerced.input.startedBy, 'key_x');
    assert.equal(coerced.input.parentRunId, undefined);
    const strict = await service.prepare(t, { inputs: { count: '5' }, coerce: false, startedBy: 'key_x' });
    assert.equal(!strict.ok && strict.code, 'INVALID_INPUTS');
  });

  it('stores inputs too large for a payload under the given name and marks a chained run', async () => {
    const { orgId, triggerId } = await published();
    const inputs = { count: 1, padding: 'x'.repeat(INLINE_INPUTS_LIMIT) };
    const run = await service.prepare(await target(orgId, triggerId), {
      inputs, coerce: false, startedBy: 'key_parent', inputsBlobName: `chain-run1-act${Date.now()}`,
      chain: { parentRunId: 'run1', chainDepth: 2 },
    });
    assert.ok(run.ok);
    assert.ok(isInputsReference(run.input.inputs), 'the run carries a reference');
    const stored = run.input.inputs[INPUTS_REF_FIELD].key;
    assert.match(stored, /chain-run1-act\d+\.json$/);
    assert.deepEqual(run.storedKeys, [stored]);
    assert.deepEqual(JSON.parse((await blobs.read(stored))!.toString('utf8')), inputs);
    assert.equal(run.input.parentRunId, 'run1');
    assert.equal(run.input.chainDepth, 2);
    await service.discard(run.storedKeys);
    assert.equal(await blobs.read(stored), undefined);
    assert.deepEqual(warnings, []);
  });

  it('answers a start still under way (StartInFlightError) as unconfirmed without asking Temporal, and keeps the stored inputs', async () => {
    const { orgId, triggerId } = await published();
    const run = await service.prepare(await target(orgId, triggerId), { inputs: { count: 1, padding: 'x'.repeat(INLINE_INPUTS_LIMIT) }, coerce: false, startedBy: 'key_x' });
    assert.ok(run.ok);
    const asked: string[] = [];
    // the run service as it is when its eager start has not answered and Temporal looks unreachable
    const runs: RunStarts = {
      start: async (_input, _key, runId) => { throw new StartInFlightError(runId ?? '', 1000); },
      exists: async (runId) => { asked.push(runId); return false; },
      startedInputs: async () => ({}),
    };
    const failed = await service.start(runs, run, 'key-1', { eager: true }).then(() => undefined, (err: unknown) => err);
    assert.ok(failed instanceof StartUnconfirmedError, String(failed));
    assert.ok(failed.cause instanceof StartInFlightError);
    assert.deepEqual(asked, [], 'the start may still create the run: Temporal is not asked whether it exists');
    assert.ok(await blobs.read(run.storedKeys[0]!), 'the run\'s stored inputs are kept');
    warnings.length = 0;
  });
});
