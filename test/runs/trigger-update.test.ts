/**
 * A trigger changed in place (TriggerStore.update, PATCH /api/v1/triggers/{id}): the same ID, the
 * checks of a create, and every gateway's kept copy of it known stale at its next call (the
 * revision read with the trigger's live state), without waiting for any cache to expire.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileBlobStore, type BlobStore } from '../../src/blobs/blob-store';
import { WorkflowDefinitionSchema } from '../../activities/steps';
import { openRegistry, RegistryError, type Registry } from '../../src/registry';
import { TriggerService, type TriggerTarget } from '../../src/runs/trigger-service';

describe('a trigger changed in place', () => {
  let dir: string;
  let registry: Registry;
  let blobs: BlobStore;
  /** two gateways' services over one registry: each keeps its own copy of the trigger */
  let one: TriggerService;
  let two: TriggerService;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'flowgate-trigger-update-'));
    registry = await openRegistry({ kind: 'sqlite', file: join(dir, 'registry.db') });
    blobs = createFileBlobStore(join(dir, 'blobs'));
    const log = { warn: () => undefined };
    one = new TriggerService({ registry, blobs, log });
    two = new TriggerService({ registry, blobs, log });
  });

  after(async () => {
    await registry?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function workflow(orgId: string, name: string, steps: number): Promise<string> {
    const definition = WorkflowDefinitionSchema.parse({
      name, steps: Array.from({ length: steps }, (_, i) => ({ name: `S${i + 1}`, type: 'template', template: `${name} ${i + 1}` })),
    });
    const created = await registry.workflows.create(orgId, definition);
    await registry.workflows.publish(orgId, created.id);
    return created.id;
  }

  async function resolved(service: TriggerService, orgId: string, triggerId: string): Promise<TriggerTarget> {
    const target = await service.resolve(orgId, triggerId);
    assert.ok(target.ok, JSON.stringify(target));
    return target;
  }

  it('keeps the ID, and every gateway resolves the new form at its next call', async () => {
    const org = await registry.orgs.create('in-place');
    const first = await workflow(org.id, 'first', 1);
    const second = await workflow(org.id, 'second', 3);
    const trigger = await registry.triggers.create(org.id, { workflowId: first, name: 'hook', callbackUrl: 'https://a.example.com/done' });
    for (const service of [one, two]) assert.equal((await resolved(service, org.id, trigger.id)).trigger.callbackUrl, 'https://a.example.com/done');
    assert.equal((await registry.triggers.liveState(trigger.id))?.revision, 1);

    const changed = await registry.triggers.update(org.id, trigger.id, {
      workflowId: second, callbackUrl: null, priority: 2, concurrency: { limit: 3 }, designatedOutput: { stepIndex: 3 }, tool: { name: 'hook_tool', description: 'runs it' },
    });
    assert.equal(changed?.id, trigger.id, 'the same trigger');
    assert.equal(changed?.revision, 2);
    assert.equal(changed?.name, 'hook', 'a field left out is kept');
    for (const service of [one, two]) {
      const { trigger: seen, version } = await resolved(service, org.id, trigger.id);
      assert.equal(seen.callbackUrl, null, 'no gateway answers from its old copy');
      assert.equal(seen.priority, 2);
      assert.deepEqual(seen.concurrency, { limit: 3 });
      assert.deepEqual(seen.designatedOutput, { stepIndex: 3 });
      assert.equal(version.workflowId, second, 'the runs start the new workflow');
    }
    assert.equal((await registry.triggers.toolTrigger(org.id, 'hook_tool'))?.id, trigger.id);

    await registry.triggers.update(org.id, trigger.id, { tool: null, concurrency: null });
    const again = await resolved(two, org.id, trigger.id);
    assert.equal(again.trigger.tool, null);
    assert.equal(again.trigger.concurrency, null);
    assert.equal(again.trigger.revision, 3);
  });

  it('checks what a create checks, and refuses another organization\'s trigger', async () => {
    const org = await registry.orgs.create('checked');
    const short = await workflow(org.id, 'short', 1);
    const draft = await registry.workflows.create(org.id, WorkflowDefinitionSchema.parse({ name: 'draft', steps: [{ name: 'S', type: 'template', template: 'x' }] }));
    const trigger = await registry.triggers.create(org.id, { workflowId: short });
    await registry.triggers.create(org.id, { workflowId: short, tool: { name: 'taken', description: 'the other' } });
    const code = async (change: Parameters<Registry['triggers']['update']>[2]): Promise<string> => {
      try {
        await registry.triggers.update(org.id, trigger.id, change);
        return 'accepted';
      } catch (err) {
        return err instanceof RegistryError ? err.code : String(err);
      }
    };
    assert.equal(await code({ designatedOutput: { stepIndex: 2 } }), 'INVALID');
    assert.equal(await code({ tool: { name: 'taken', description: 'mine' } }), 'CONFLICT');
    assert.equal(await code({ workflowId: draft.id }), 'NOT_PUBLISHED');
    assert.equal(await code({ workflowId: 'wf_nowhere' }), 'NOT_FOUND');
    assert.equal((await registry.triggers.liveState(trigger.id))?.revision, 1, 'a refused change changes nothing');
    const other = await registry.orgs.create('other');
    assert.equal(await registry.triggers.update(other.id, trigger.id, { name: 'mine' }), undefined);
    assert.equal((await registry.triggers.get(trigger.id))?.name, null);
  });

  it('a verified trigger keeps its sealed secrets unless new ones are given; without verify they go', async () => {
    const org = await registry.orgs.create('verified');
    const flow = await workflow(org.id, 'hooked', 1);
    const trigger = await registry.triggers.create(org.id, { workflowId: flow, verify: { preset: 'github' }, sealedSecrets: ['sealed-1'] });
    await registry.triggers.update(org.id, trigger.id, { verify: { preset: 'github', events: ['push'] } });
    assert.deepEqual((await registry.triggerWebhooks.secrets(trigger.id))?.sealed, ['sealed-1'], 'kept');
    assert.deepEqual((await registry.triggers.get(trigger.id))?.verify, { preset: 'github', events: ['push'] });
    await registry.triggers.update(org.id, trigger.id, { verify: { preset: 'github' }, sealedSecrets: ['sealed-2'] });
    assert.deepEqual((await registry.triggerWebhooks.secrets(trigger.id))?.sealed, ['sealed-2'], 'replaced');
    await registry.triggers.update(org.id, trigger.id, { verify: null });
    assert.equal(await registry.triggerWebhooks.secrets(trigger.id), undefined, 'an API key trigger again holds no secret');
    assert.equal((await registry.triggers.get(trigger.id))?.verify, null);
  });
});
