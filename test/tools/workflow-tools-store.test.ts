import assert from 'node:assert/strict';
import { WorkflowDefinitionSchema } from '../../activities/steps';
import { openRegistry, RegistryError, type Registry } from '../../src/registry';
import { registryDialects } from '../support/registry-dialects';

for (const dialect of registryDialects({ tempDirPrefix: 'flowgate-trigger-tools-', schemaPrefix: 'trigger_tools_' })) {
  describe(`TriggerStore tool fields (${dialect.name})`, () => {
    let registry: Registry;
    before(async () => {
      registry = await openRegistry(await dialect.setUp());
    });
    after(async () => {
      await registry?.close();
      await dialect.tearDown();
    });

    async function published(orgId: string): Promise<string> {
      const wf = await registry.workflows.create(orgId, WorkflowDefinitionSchema.parse({ name: 'tool', steps: [{ name: 'a', type: 'template', template: 'x' }] }));
      await registry.workflows.publish(orgId, wf.id);
      return wf.id;
    }

    it('stores a tool name and description, lists only the org\'s tool triggers by name, and refuses a name taken in the same org', async () => {
      const a = await registry.orgs.create('a');
      const b = await registry.orgs.create('b');
      const wfA = await published(a.id);
      const wfB = await published(b.id);
      const plain = await registry.triggers.create(a.id, { workflowId: wfA });
      assert.equal(plain.tool, null);
      const zed = await registry.triggers.create(a.id, { workflowId: wfA, tool: { name: 'zed', description: 'last' } });
      const alpha = await registry.triggers.create(a.id, { workflowId: wfA, tool: { name: 'alpha', description: 'first' } });
      assert.deepEqual(await registry.triggers.get(alpha.id), alpha);
      assert.deepEqual((await registry.triggers.listTools(a.id)).map((t) => t.tool?.name), ['alpha', 'zed']);
      assert.equal((await registry.triggers.toolTrigger(a.id, 'zed'))?.id, zed.id);
      await assert.rejects(registry.triggers.create(a.id, { workflowId: wfA, tool: { name: 'zed', description: 'again' } }),
        (e: unknown) => e instanceof RegistryError && e.code === 'CONFLICT');
      // another organization may use the same name, and does not see org a's tools
      await registry.triggers.create(b.id, { workflowId: wfB, tool: { name: 'zed', description: 'theirs' } });
      assert.deepEqual((await registry.triggers.listTools(b.id)).map((t) => t.tool?.description), ['theirs']);
      assert.equal(await registry.triggers.toolTrigger(b.id, 'alpha'), undefined);
    });
  });
}
