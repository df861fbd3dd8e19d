/**
 * The console's registry tables on both dialects: sessions are found only by their hash, only
 * while unexpired and while their admin token exists; trigger forms by their hash until revoked,
 * scoped by organization, gone with their trigger.
 */
import assert from 'node:assert/strict';
import { WorkflowDefinitionSchema } from '../../activities/steps';
import { hashSecret } from '../../src/crypto/secrets';
import { openRegistry, type Registry } from '../../src/registry';
import { ConsoleSessions } from '../../src/console/sessions';
import { registryDialects } from '../support/registry-dialects';

for (const backend of registryDialects({ tempDirPrefix: 'flowgate-console-', schemaPrefix: 'flowgate_console_' })) {
  describe(`console sessions and trigger forms (${backend.name})`, () => {
    let registry: Registry;
    before(async () => {
      registry = await openRegistry(await backend.setUp());
    });
    after(async () => {
      await registry?.close();
      await backend.tearDown();
    });

    it('keeps sessions hashed, ends them at expiry, at sign-out and when their admin token is rotated', async () => {
      const org = await registry.orgs.create('console');
      const token = 'fga_console_test_token_0123456789';
      await registry.orgs.addAdminToken(org.id, hashSecret(token), { instanceAdmin: false });
      let now = Date.parse('2026-01-01T00:00:00Z');
      const sessions = new ConsoleSessions({ registry, lifetimeMinutes: 10, now: () => now });
      assert.equal(await sessions.signIn('fga_not_an_admin_token_at_all'), undefined);
      const signedIn = await sessions.signIn(token);
      assert.ok(signedIn);
      assert.match(signedIn.id, /^fgs_/);
      assert.equal((await sessions.find(signedIn.id))?.orgId, org.id);
      assert.equal(await registry.consoleSessions.find(signedIn.id), undefined, 'the clear ID is not a key');
      assert.equal(await sessions.find(`${signedIn.id}x`), undefined);
      now += 10 * 60_000;
      assert.equal(await sessions.find(signedIn.id), undefined, 'expired');
      assert.equal(await registry.consoleSessions.deleteExpired(new Date(now).toISOString()), 1);

      now = Date.parse('2026-01-02T00:00:00Z');
      const second = await sessions.signIn(token);
      const third = await sessions.signIn(token);
      assert.ok(second && third);
      await sessions.signOut(second.id);
      assert.equal(await sessions.find(second.id), undefined, 'signed out');
      assert.ok(await sessions.find(third.id));
      await registry.orgs.replaceAdminTokens(org.id, hashSecret('fga_console_rotated_token_98765'), { instanceAdmin: false });
      assert.equal(await sessions.find(third.id), undefined, 'its token was rotated');
      assert.ok(ConsoleSessions.csrfMatches(second.session, second.session.csrfToken));
      assert.ok(!ConsoleSessions.csrfMatches(second.session, third.session.csrfToken));
      assert.ok(!ConsoleSessions.csrfMatches(second.session, undefined));
    });

    it('finds a form by its hash until it is revoked, per organization, and drops it with its trigger', async () => {
      const org = await registry.orgs.create('forms');
      const other = await registry.orgs.create('other');
      const wf = await registry.workflows.create(org.id, WorkflowDefinitionSchema.parse({ name: 'w', steps: [{ name: 's', type: 'template', template: 'x' }] }));
      await registry.workflows.publish(org.id, wf.id);
      const trigger = await registry.triggers.create(org.id, { workflowId: wf.id });
      const form = await registry.triggerForms.create(org.id, trigger.id, hashSecret('fgf_one'), true);
      assert.deepEqual(await registry.triggerForms.findByHash(hashSecret('fgf_one')), form);
      assert.equal(form.wait, true);
      assert.deepEqual(await registry.triggerForms.list(other.id, trigger.id), []);
      assert.equal(await registry.triggerForms.revoke(other.id, trigger.id, form.id), false);
      assert.equal(await registry.triggerForms.revoke(org.id, trigger.id, form.id), true);
      assert.equal(await registry.triggerForms.revoke(org.id, trigger.id, form.id), false, 'once');
      assert.equal(await registry.triggerForms.findByHash(hashSecret('fgf_one')), undefined);
      assert.ok((await registry.triggerForms.list(org.id, trigger.id))[0]?.revokedAt);
      await registry.triggerForms.create(org.id, trigger.id, hashSecret('fgf_two'), false);
      assert.ok(await registry.triggers.delete(org.id, trigger.id));
      assert.equal(await registry.triggerForms.findByHash(hashSecret('fgf_two')), undefined, 'gone with its trigger');
    });
  });
}
