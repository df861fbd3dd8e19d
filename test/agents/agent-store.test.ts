import assert from 'node:assert/strict';
import { CreateAgentSchema } from '../../src/agents/records';
import { openRegistry, type Registry } from '../../src/registry';
import { agentFields } from '../../src/registry/agents';
import { registryDialects } from '../support/registry-dialects';

for (const backend of registryDialects({ tempDirPrefix: 'flowgate-agents-', schemaPrefix: 'flowgate_agents_' })) {
  describe(`registry agents (${backend.name})`, () => {
    let registry: Registry;
    before(async () => {
      registry = await openRegistry(await backend.setUp());
    });
    after(async () => {
      await registry?.close();
      await backend.tearDown();
    });

    it('stores an agent with its defaults, within its organization only', async () => {
      const a = await registry.orgs.create('a');
      const b = await registry.orgs.create('b');
      const input = CreateAgentSchema.parse({
        name: 'n', instructions: 'i', outputSchema: '{"type":"object"}', servers: [{ name: 'web-search', allTools: true }], limits: { maxTurns: 3 },
      });
      const agent = await registry.agents.create(a.id, agentFields(input));
      assert.match(agent.id, /^agt_/);
      assert.deepEqual(agent.outputSchema, { type: 'object' });
      assert.deepEqual(agent.limits, { maxTurns: 3, maxToolCalls: 20, timeoutSeconds: 600, toolResultChars: 16_000 });
      assert.deepEqual(await registry.agents.get(a.id, agent.id), agent);
      assert.equal(await registry.agents.get(b.id, agent.id), undefined);
      assert.deepEqual(await registry.agents.list(b.id), []);
      assert.equal(await registry.agents.update(b.id, agent.id, { ...agentFields(input), name: 'stolen' }), undefined);
      assert.equal(await registry.agents.remove(b.id, agent.id), false);
      const renamed = await registry.agents.update(a.id, agent.id, { ...agentFields(input), name: 'renamed' });
      assert.equal(renamed?.name, 'renamed');
    });

    it('keeps chats and artifacts, idempotently, and removes them with their agent', async () => {
      const org = await registry.orgs.create('c');
      const agent = await registry.agents.create(org.id, agentFields(CreateAgentSchema.parse({ name: 'n', instructions: 'i' })));
      const chat = await registry.agents.createChat(org.id, agent.id, 'title');
      assert.deepEqual(await registry.agents.createChat(org.id, agent.id, 'again', chat.id), chat, 'creating a known id is a no-op');
      const artifact = { chatId: chat.id, name: 'x.json', key: 'agents/x.json', mimeType: 'application/json', size: 2, createdAt: new Date().toISOString() };
      await registry.agents.addArtifact(artifact);
      await registry.agents.addArtifact(artifact);
      assert.deepEqual(await registry.agents.listArtifacts(chat.id), [artifact]);
      assert.equal(await registry.agents.remove(org.id, agent.id), true);
      assert.equal(await registry.agents.getChat(org.id, chat.id), undefined);
      assert.deepEqual(await registry.agents.listArtifacts(chat.id), []);
    });
  });
}
