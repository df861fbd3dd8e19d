import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { openRegistry, RegistryError, type Registry } from '../../src/registry';
import { hashSecret, randomToken } from '../../src/crypto/secrets';
import { createConnectionCipher } from '../../src/crypto/connection-cipher';
import { ConnectionStore } from '../../src/tools/connections';
import { registryDialects } from '../support/registry-dialects';

for (const backend of registryDialects({ tempDirPrefix: 'flowgate-connections-', schemaPrefix: 'flowgate_conn_' })) {
  describe(`registry connections and key checks (${backend.name})`, () => {
    let registry: Registry;
    before(async () => {
      registry = await openRegistry(await backend.setUp());
    });
    after(async () => {
      await registry?.close();
      await backend.tearDown();
    });

    it('stores, finds, lists and deletes a connection within its organization only', async () => {
      const a = await registry.orgs.create('a');
      const b = await registry.orgs.create('b');
      const one = await registry.connections.create(a.id, { application: 'mail', name: 'one', credentials: 'v1.sealed-1' });
      const two = await registry.connections.create(a.id, { application: 'crm', credentials: 'v1.sealed-2' });
      await registry.connections.create(b.id, { application: 'mail', name: 'theirs', credentials: 'v1.sealed-3' });
      assert.match(one.id, /^pc_/);
      assert.deepEqual(await registry.connections.get(a.id, one.id), one);
      assert.equal(await registry.connections.get(b.id, one.id), undefined, 'another org cannot read it');
      assert.deepEqual((await registry.connections.list(a.id)).map((c) => c.id).sort(), [one.id, two.id].sort());
      assert.deepEqual((await registry.connections.list(a.id, 'mail')).map((c) => c.id), [one.id]);
      assert.equal(await registry.connections.delete(b.id, one.id), false, 'another org cannot delete it');
      assert.equal(await registry.connections.delete(a.id, one.id), true);
      assert.equal(await registry.connections.get(a.id, one.id), undefined);
    });

    it('refuses a connection for an unknown organization with NOT_FOUND', async () => {
      await assert.rejects(registry.connections.create('org_missing', { application: 'mail', credentials: 'x' }),
        (e: unknown) => e instanceof RegistryError && e.code === 'NOT_FOUND');
    });

    it('finds an API key by id only while it is not revoked', async () => {
      const org = await registry.orgs.create('keys');
      const key = await registry.apiKeys.create(org.id, 'k', hashSecret(randomToken('fgk_')));
      assert.deepEqual(await registry.apiKeys.getActive(key.id), key);
      assert.equal(await registry.apiKeys.revoke(org.id, key.id), true);
      assert.equal(await registry.apiKeys.getActive(key.id), undefined);
      assert.equal(await registry.apiKeys.getActive('key_missing'), undefined);
    });

    it('keeps credentials sealed at rest and opens them only for the owning organization', async () => {
      const org = await registry.orgs.create('sealed');
      const other = await registry.orgs.create('other');
      const store = new ConnectionStore(registry, createConnectionCipher(randomBytes(32)));
      const created = await store.create(org.id, 'mail', 'ops', { from: 'ops@example.org', password: 'correct horse battery staple' });
      const row = await registry.connections.get(org.id, created.PCID);
      assert.ok(row);
      assert.doesNotMatch(row.credentials, /correct horse/);
      assert.match(row.credentials, /^v1\./);
      assert.deepEqual((await store.open(org.id, created.PCID))?.credentials, { from: 'ops@example.org', password: 'correct horse battery staple' });
      assert.equal(await store.open(other.id, created.PCID), undefined);
      const wrongKey = new ConnectionStore(registry, createConnectionCipher(randomBytes(32)));
      await assert.rejects(wrongKey.open(org.id, created.PCID), 'another key cannot open it');
    });
  });
}
