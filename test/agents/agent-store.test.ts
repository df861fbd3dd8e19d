import assert from 'node:assert/strict';
import { CreateAgentSchema } from '../../src/registry/agent-records';
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
    it('records usage once per call attempt, keeps month totals and budgets in bigint columns, per organization', async () => {
      const org = await registry.orgs.create('spender');
      const other = await registry.orgs.create('other');
      const call = {
        orgId: org.id, agentId: 'agt_x', invocationId: `inv_${org.id}`, turn: 0, attempt: 1, month: '2026-11',
        model: 'm', promptTokens: 3_000_000_000, completionTokens: 5, cachedPromptTokens: 2_500_000_000, costNanoUsd: 7_500_000_000_000,
      };
      assert.deepEqual(await registry.agentUsage.record(call), { tokens: 3_000_000_005, costNanoUsd: 7_500_000_000_000 });
      // the same attempt again (a retried record) is not counted twice; a new attempt (a repeated model call) is
      assert.deepEqual(await registry.agentUsage.record(call), { tokens: 3_000_000_005, costNanoUsd: 7_500_000_000_000 });
      assert.deepEqual(await registry.agentUsage.record({ ...call, attempt: 2, promptTokens: 10, cachedPromptTokens: 0, costNanoUsd: null, model: 'free' }),
        { tokens: 3_000_000_020, costNanoUsd: 7_500_000_000_000 });
      assert.deepEqual(await registry.agentUsage.month(org.id, '2026-12'), { tokens: 0, costNanoUsd: 0 });
      const byModel = await registry.agentUsage.ofInvocation(org.id, call.invocationId);
      assert.deepEqual(byModel.map((m) => [m.model, m.calls, m.promptTokens, m.cachedPromptTokens, m.costNanoUsd]),
        [['free', 1, 10, 0, null], ['m', 1, 3_000_000_000, 2_500_000_000, 7_500_000_000_000]]);
      assert.deepEqual(await registry.agentUsage.ofInvocation(other.id, call.invocationId), []);

      assert.deepEqual(await registry.agentUsage.budget(org.id), { monthlyMaxTokens: null, monthlyMaxCostNanoUsd: null, updatedAt: null });
      await registry.agentUsage.setBudget(org.id, { monthlyMaxTokens: 5_000_000_000, monthlyMaxCostNanoUsd: null });
      await registry.agentUsage.setBudget(org.id, { monthlyMaxTokens: 6_000_000_000, monthlyMaxCostNanoUsd: 1 });
      const budget = await registry.agentUsage.budget(org.id);
      assert.deepEqual([budget.monthlyMaxTokens, budget.monthlyMaxCostNanoUsd], [6_000_000_000, 1]);
      assert.equal((await registry.agentUsage.budget(other.id)).monthlyMaxTokens, null);
      await assert.rejects(registry.agentUsage.setBudget('org_missing', { monthlyMaxTokens: 1, monthlyMaxCostNanoUsd: null }), /not found/);
    });
  });
}
