import assert from 'node:assert/strict';
import { newToolServerId, openRegistry, type Registry } from '../../src/registry';
import { registryDialects } from '../support/registry-dialects';

for (const backend of registryDialects({ tempDirPrefix: 'flowgate-tool-servers-', schemaPrefix: 'flowgate_ts_' })) {
  describe(`registry custom tool servers (${backend.name})`, () => {
    let registry: Registry;
    before(async () => {
      registry = await openRegistry(await backend.setUp());
    });
    after(async () => {
      await registry?.close();
      await backend.tearDown();
    });

    it('makes short opaque ids', () => {
      const ids = new Set(Array.from({ length: 200 }, () => newToolServerId()));
      assert.equal(ids.size, 200);
      for (const id of ids) assert.match(id, /^[0-9a-v]{20}$/);
    });

    it('stores, lists, replaces and deletes a server within its organization only', async () => {
      const a = await registry.orgs.create('a');
      const b = await registry.orgs.create('b');
      const store = registry.toolServers;
      const server = await store.create(a.id, { kind: 'remote', name: 'calc', description: 'd', connectionId: null, source: 'https://mcp.example/mcp' });
      assert.deepEqual(await store.get(a.id, server.id), server);
      assert.equal(await store.get(b.id, server.id), undefined, 'another org cannot read it');
      assert.deepEqual((await store.list(b.id)).map((s) => s.id), []);
      assert.equal(await store.replace(b.id, server.id, { name: 'x', description: 'x', connectionId: null, source: 'x' }), undefined);
      const replaced = await store.replace(a.id, server.id, { name: 'calc 2', description: 'd2', connectionId: 'pc_1', source: 'https://mcp.example/v2' });
      assert.deepEqual([replaced?.name, replaced?.connectionId, replaced?.source, replaced?.id], ['calc 2', 'pc_1', 'https://mcp.example/v2', server.id]);
      assert.deepEqual(await store.usingConnection(a.id, 'pc_1'), [server.id]);
      assert.deepEqual(await store.usingConnection(b.id, 'pc_1'), []);
      assert.equal(await store.remove(b.id, server.id), false);
      assert.equal(await store.remove(a.id, server.id), true);
      assert.equal(await store.get(a.id, server.id), undefined);
    });

    it('keeps a server\'s durable settings, and drops them when it is replaced without', async () => {
      const org = await registry.orgs.create('d');
      const store = registry.toolServers;
      const durable = { maxAttempts: 5, initialIntervalSeconds: 0.5, backoff: 3, attemptTimeoutSeconds: 10, timeoutSeconds: 600 };
      const server = await store.create(org.id, { kind: 'remote', name: 'slow', description: 'd', connectionId: null, source: 'https://mcp.example/mcp', durable });
      assert.deepEqual((await store.get(org.id, server.id))?.durable, durable);
      assert.deepEqual((await store.list(org.id))[0]?.durable, durable);
      const plain = await store.replace(org.id, server.id, { name: 'slow', description: 'd', connectionId: null, source: 'https://mcp.example/mcp' });
      assert.equal(plain?.durable, null);
      const again = await store.replace(org.id, server.id, { name: 'slow', description: 'd', connectionId: null, source: 'https://mcp.example/mcp', durable: { maxAttempts: 2 } });
      assert.deepEqual(again?.durable, { maxAttempts: 2 });
      const none = await store.create(org.id, { kind: 'remote', name: 'plain', description: 'd', connectionId: null, source: 'https://mcp.example/mcp' });
      assert.equal(none.durable, null);
      assert.equal((await store.get(org.id, none.id))?.durable, null);
      assert.equal(none.durableTools, null);
    });

    it('keeps a server\'s per-tool durable overrides (a policy or false), and drops them when it is replaced without', async () => {
      const org = await registry.orgs.create('t');
      const store = registry.toolServers;
      const durableTools = { placeOrder: { maxAttempts: 7, backoff: 1.5 }, listOrders: false as const };
      const source = 'https://mcp.example/mcp';
      const server = await store.create(org.id, { kind: 'remote', name: 'mixed', description: 'd', connectionId: null, source, durable: { maxAttempts: 2 }, durableTools });
      assert.deepEqual((await store.get(org.id, server.id))?.durableTools, durableTools);
      const plain = await store.replace(org.id, server.id, { name: 'mixed', description: 'd', connectionId: null, source, durable: { maxAttempts: 2 } });
      assert.deepEqual([plain?.durable, plain?.durableTools], [{ maxAttempts: 2 }, null]);
    });

    it('keeps a custom connection\'s state, updating status without losing its secret, and drops it with the connection', async () => {
      const org = await registry.orgs.create('c');
      const connection = await registry.connections.create(org.id, { application: 'custom', credentials: 'v1.sealed' });
      const store = registry.toolServers;
      await store.setConnectionState(org.id, connection.id, { status: 'pending' });
      assert.equal((await store.connectionState(org.id, connection.id))?.status, 'pending');
      await store.setConnectionState(org.id, connection.id, { status: 'connected', secret: 'v1.refresh' });
      await store.setConnectionState(org.id, connection.id, { status: 'error', error: 'invalid_grant' });
      const state = await store.connectionState(org.id, connection.id);
      assert.deepEqual([state?.status, state?.error, state?.secret], ['error', 'invalid_grant', 'v1.refresh']);
      assert.equal(await store.connectionState('org_other', connection.id), undefined);
      await registry.connections.delete(org.id, connection.id);
      assert.equal(await store.connectionState(org.id, connection.id), undefined);
    });
  });
}
