/**
 * The members tables on both dialects: members unique by e-mail per organization, personal access
 * tokens found by their hash only, removal taking the member's tokens and console sessions with it,
 * the identity provider set and replaced.
 */
import assert from 'node:assert/strict';
import { hashSecret } from '../../src/crypto/secrets';
import { openRegistry, RegistryError, type Registry } from '../../src/registry';
import { ConsoleSessions } from '../../src/console/sessions';
import { registryDialects } from '../support/registry-dialects';
import { randomBytes } from 'node:crypto';
import { createConnectionCipher } from '../../src/crypto/connection-cipher';
import { IdentityProviders } from '../../src/people/identity-providers';
import { OutboundRefusedError } from '../../src/net/http-client';

for (const backend of registryDialects({ tempDirPrefix: 'flowgate-members-', schemaPrefix: 'flowgate_members_' })) {
  describe(`members and identity providers (${backend.name})`, () => {
    let registry: Registry;
    before(async () => {
      registry = await openRegistry(await backend.setUp());
    });
    after(async () => {
      await registry?.close();
      await backend.tearDown();
    });

    it('keeps members per organization with their tokens hashed; removal ends tokens and sessions', async () => {
      const org = await registry.orgs.create('people');
      const other = await registry.orgs.create('others');
      const ann = await registry.members.create(org.id, { email: 'Ann@Example.com', name: 'Ann', role: 'approver' });
      assert.equal(ann.email, 'ann@example.com');
      await assert.rejects(registry.members.create(org.id, { email: 'ann@example.com', name: null, role: 'viewer' }),
        (e: unknown) => e instanceof RegistryError && e.code === 'CONFLICT');
      await registry.members.create(other.id, { email: 'ann@example.com', name: null, role: 'viewer' });
      await assert.rejects(registry.members.create('org_missing', { email: 'x@example.com', name: null, role: 'viewer' }),
        (e: unknown) => e instanceof RegistryError && e.code === 'NOT_FOUND');

      const token = 'fgp_members_test_token_0123456789';
      await registry.members.addToken(ann, hashSecret(token));
      assert.equal((await registry.members.findByTokenHash(hashSecret(token)))?.id, ann.id);
      assert.equal(await registry.members.findByTokenHash(token), undefined, 'the clear token is not a key');
      assert.equal((await registry.members.update(org.id, ann.id, { role: 'editor' }))?.role, 'editor');
      assert.equal(await registry.members.update(other.id, ann.id, { role: 'admin' }), undefined, 'not across organizations');
      assert.deepEqual((await registry.members.list(org.id)).map((m) => m.role), ['editor']);

      const sessions = new ConsoleSessions({ registry, lifetimeMinutes: 10 });
      const opened = await sessions.signInMember((await registry.members.get(org.id, ann.id))!);
      const found = await sessions.find(opened.id);
      assert.equal(found?.role, 'editor');
      assert.equal(found?.member?.email, 'ann@example.com');
      await registry.members.update(org.id, ann.id, { role: 'viewer' });
      assert.equal((await sessions.find(opened.id))?.role, 'viewer', 'a session carries the role as it is now');

      assert.equal(await registry.members.remove(other.id, ann.id), undefined);
      assert.equal((await registry.members.remove(org.id, ann.id))?.member.id, ann.id);
      assert.equal(await registry.members.findByTokenHash(hashSecret(token)), undefined);
      assert.equal(await sessions.find(opened.id), undefined);
    });

    it('ends what a removed member minted, in their organization only: admin tokens, API keys, tokens they issued', async () => {
      const org = await registry.orgs.create('offboarding');
      const other = await registry.orgs.create('offboarding-other');
      const ann = await registry.members.create(org.id, { email: 'ann@example.com', name: null, role: 'admin' });
      const bob = await registry.members.create(org.id, { email: 'bob@example.com', name: null, role: 'viewer' });
      await registry.orgs.replaceAdminTokens(org.id, hashSecret('fga_first_0123456789abcdef'), { instanceAdmin: false });
      await registry.orgs.replaceAdminTokens(org.id, hashSecret('fga_anns_0123456789abcdef'), { instanceAdmin: false, memberId: ann.id });
      await registry.orgs.addAdminToken(other.id, hashSecret('fga_other_0123456789abcdef'), { instanceAdmin: false });
      const annsKey = await registry.apiKeys.create(org.id, 'anns', hashSecret('key_anns_0123456789abcdef'), null, ann.id);
      const adminsKey = await registry.apiKeys.create(org.id, 'admins', hashSecret('key_admins_0123456789abcdef'));
      await registry.members.addToken(ann, hashSecret('fgp_anns_own_0123456789abcdef'), ann.id);
      await registry.members.addToken(bob, hashSecret('fgp_bob_from_ann_0123456789ab'), ann.id);
      await registry.members.addToken(bob, hashSecret('fgp_bob_from_admin_0123456789'));

      const credentials = await registry.members.credentials(org.id, ann.id);
      assert.deepEqual(credentials.adminTokens.map((t) => t.tokenHash), [hashSecret('fga_anns_0123456789abcdef')]);
      assert.deepEqual(credentials.apiKeys.map((k) => k.id), [annsKey.id]);
      assert.deepEqual(credentials.ownTokens.map((t) => t.tokenHash), [hashSecret('fgp_anns_own_0123456789abcdef')]);
      assert.deepEqual(credentials.issuedTokens.map((t) => t.memberId), [bob.id]);
      assert.deepEqual(await registry.members.credentials(other.id, ann.id), { adminTokens: [], apiKeys: [], ownTokens: [], issuedTokens: [] });
      assert.equal((await registry.apiKeys.list(org.id)).find((k) => k.id === annsKey.id)?.memberId, ann.id);

      const removal = await registry.members.remove(org.id, ann.id);
      assert.ok(removal);
      assert.equal(removal.adminTokens.length, 1);
      assert.equal(removal.adminTokensLeft, 0, 'the rotation had replaced the first token: none is left');
      assert.equal(await registry.orgs.findAdminToken(hashSecret('fga_anns_0123456789abcdef')), undefined);
      assert.ok(await registry.orgs.findAdminToken(hashSecret('fga_other_0123456789abcdef')), 'another organization\'s token stays');
      assert.equal(await registry.apiKeys.findByHash(hashSecret('key_anns_0123456789abcdef')), undefined);
      assert.ok((await registry.apiKeys.list(org.id)).find((k) => k.id === annsKey.id)?.revokedAt, 'revoked, and still listed');
      assert.equal((await registry.apiKeys.findByHash(hashSecret('key_admins_0123456789abcdef')))?.id, adminsKey.id);
      assert.equal(await registry.members.findByTokenHash(hashSecret('fgp_bob_from_ann_0123456789ab')), undefined);
      assert.equal((await registry.members.findByTokenHash(hashSecret('fgp_bob_from_admin_0123456789')))?.id, bob.id);
    });

    it('reaches the provider through the outbound address policy: a private address is refused unless allowed', async () => {
      const org = await registry.orgs.create('policy');
      const cipher = createConnectionCipher(randomBytes(32));
      const providers = new IdentityProviders({ registry, cipher, allowPrivateNetwork: false, baseUrl: () => 'https://flowgate.example' });
      const view = await providers.set(org.id, { name: 'Local', issuer: 'http://127.0.0.1:9/', clientId: 'c', clientSecret: 'the-secret', roleRules: [], defaultRole: null });
      assert.equal(view.issuer, 'http://127.0.0.1:9');
      assert.equal(view.redirectUri, 'https://flowgate.example/console/oidc/callback');
      const stored = await registry.members.identityProvider(org.id);
      assert.ok(stored && !stored.clientSecret.includes('the-secret'), 'the secret is stored sealed');
      assert.equal(cipher.open(stored.clientSecret, `identity-provider:${org.id}`), 'the-secret');
      // openid-client wraps what its fetch threw: the policy's refusal is in the cause chain
      const refusedByPolicy = (e: unknown): boolean => e instanceof OutboundRefusedError || (e instanceof Error && e.cause !== undefined && refusedByPolicy(e.cause));
      await assert.rejects(providers.start(org.id), refusedByPolicy);
    });

    it('sets, replaces and deletes an organization\'s identity provider', async () => {
      const org = await registry.orgs.create('idp');
      assert.equal(await registry.members.identityProvider(org.id), undefined);
      const first = await registry.members.setIdentityProvider(org.id, {
        name: 'One', issuer: 'https://one.example', clientId: 'c1', clientSecret: 'v1.sealed', roleRules: { groupsClaim: 'groups', rules: [] }, defaultRole: null,
      });
      assert.equal(first.issuer, 'https://one.example');
      const second = await registry.members.setIdentityProvider(org.id, {
        name: 'Two', issuer: 'https://two.example', clientId: 'c2', clientSecret: 'v1.other', roleRules: { groupsClaim: 'roles', rules: [{ group: 'x', role: 'viewer' }] }, defaultRole: 'viewer',
      });
      assert.equal(second.name, 'Two');
      assert.deepEqual(second.roleRules, { groupsClaim: 'roles', rules: [{ group: 'x', role: 'viewer' }] });
      assert.equal(second.createdAt, first.createdAt);
      assert.equal(await registry.members.deleteIdentityProvider(org.id), true);
      assert.equal(await registry.members.deleteIdentityProvider(org.id), false);
    });
  });
}
