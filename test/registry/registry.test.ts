import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { WorkflowDefinitionSchema } from '../../activities/steps';
import type { WorkflowDefinition } from '../../src/common/definition';
import { hashSecret, randomToken } from '../../src/crypto/secrets';
import { openRegistry, RegistryError, type DatabaseConfig, type Registry } from '../../src/registry';
import { registryDialects, TEST_POSTGRES_URL } from '../support/registry-dialects';

function definition(name: string, steps: Array<Record<string, unknown>>): WorkflowDefinition {
  return WorkflowDefinitionSchema.parse({ name, steps });
}

/** Fixtures live in the source tree (this file runs from dist/). */
const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures');

const step1 = { name: 'greet', type: 'template', template: 'Hello {{inputs.who}}' };
const step2 = { name: 'shout', type: 'code', source: 'return steps[1].toUpperCase();' };
const step2Changed = { name: 'shout', type: 'code', source: 'return steps[1].toUpperCase() + "!";' };
const step3 = { name: 'post', type: 'http', method: 'POST', url: 'https://example.test/hook' };

for (const backend of registryDialects({ tempDirPrefix: 'flowgate-registry-', schemaPrefix: 'flowgate_test_', sqliteFile: ['nested', 'registry.db'] })) {
  describe(`registry (${backend.name})`, () => {
    let config: DatabaseConfig;
    let registry: Registry;

    before(async () => {
      config = await backend.setUp();
      registry = await openRegistry(config);
    });

    after(async () => {
      await registry?.close();
      await backend.tearDown();
    });

    describe('database', () => {
      it('answers a ping', async () => {
        await registry.ping();
      });

      it('opens again on a migrated database without re-running migrations and keeps data', async () => {
        const org = await registry.orgs.create('persisted');
        const second = await openRegistry(config);
        try {
          assert.deepEqual(await second.orgs.get(org.id), org);
        } finally {
          await second.close();
        }
      });

      it('rejects a ping once closed', async () => {
        const other = await openRegistry(config);
        await other.close();
        await assert.rejects(other.ping());
      });
    });

    describe('orgs', () => {
      it('creates an org and reads it back', async () => {
        const org = await registry.orgs.create('acme');
        assert.match(org.id, /^org_/);
        assert.equal(org.name, 'acme');
        assert.ok(!Number.isNaN(Date.parse(org.createdAt)));
        assert.deepEqual(await registry.orgs.get(org.id), org);
        assert.equal(await registry.orgs.get('org_missing'), undefined);
      });

      it('ensures the default org idempotently', async () => {
        const [a, b] = await Promise.all([registry.orgs.ensureDefault(), registry.orgs.ensureDefault()]);
        const c = await registry.orgs.ensureDefault();
        assert.equal(a.id, 'org_default');
        assert.equal(a.name, 'default');
        assert.deepEqual(b, a);
        assert.deepEqual(c, a);
      });
    });

    describe('admin tokens', () => {
      it('stores a token hash with its org and instance-admin flag, idempotently', async () => {
        const org = await registry.orgs.create('admins');
        const hash = hashSecret(randomToken('fga_'));
        await registry.orgs.addAdminToken(org.id, hash, { instanceAdmin: true });
        await registry.orgs.addAdminToken(org.id, hash, { instanceAdmin: true });
        assert.deepEqual(await registry.orgs.findAdminToken(hash), { orgId: org.id, instanceAdmin: true });

        const plain = hashSecret(randomToken('fga_'));
        await registry.orgs.addAdminToken(org.id, plain, { instanceAdmin: false });
        assert.deepEqual(await registry.orgs.findAdminToken(plain), { orgId: org.id, instanceAdmin: false });
        assert.equal(await registry.orgs.findAdminToken(hashSecret('unknown')), undefined);
      });

      it('replaces an org\'s tokens of one kind, keeping the other kind and other orgs\' tokens', async () => {
        const org = await registry.orgs.create('rotating');
        const other = await registry.orgs.create('bystander');
        const [instance, old, next, theirs] = ['a', 'b', 'c', 'd'].map(() => hashSecret(randomToken('fga_'))) as [string, string, string, string];
        await registry.orgs.addAdminToken(org.id, instance, { instanceAdmin: true });
        await registry.orgs.addAdminToken(org.id, old, { instanceAdmin: false });
        await registry.orgs.addAdminToken(other.id, theirs, { instanceAdmin: false });
        await registry.orgs.replaceAdminTokens(org.id, next, { instanceAdmin: false });
        await registry.orgs.replaceAdminTokens(org.id, next, { instanceAdmin: false }); // idempotent
        assert.equal(await registry.orgs.findAdminToken(old), undefined);
        assert.deepEqual(await registry.orgs.findAdminToken(next), { orgId: org.id, instanceAdmin: false });
        assert.deepEqual(await registry.orgs.findAdminToken(instance), { orgId: org.id, instanceAdmin: true });
        assert.deepEqual(await registry.orgs.findAdminToken(theirs), { orgId: other.id, instanceAdmin: false });
        await assert.rejects(registry.orgs.replaceAdminTokens('org_nope', hashSecret(randomToken('fga_')), { instanceAdmin: false }),
          (e: unknown) => e instanceof RegistryError && e.code === 'NOT_FOUND');
      });

      it('reports NOT_FOUND for a token of an unknown org', async () => {
        await assert.rejects(
          registry.orgs.addAdminToken('org_nope', hashSecret(randomToken('fga_')), { instanceAdmin: false }),
          (e: unknown) => e instanceof RegistryError && e.code === 'NOT_FOUND');
      });
    });

    describe('API keys', () => {
      it('creates, finds by hash and revokes a key', async () => {
        const org = await registry.orgs.create('keys');
        const hash = hashSecret(randomToken('fgk_'));
        const key = await registry.apiKeys.create(org.id, 'ci', hash);
        assert.match(key.id, /^key_/);
        assert.deepEqual(await registry.apiKeys.findByHash(hash), key);

        assert.equal(await registry.apiKeys.revoke(org.id, key.id), true);
        assert.equal(await registry.apiKeys.findByHash(hash), undefined);
        assert.equal(await registry.apiKeys.revoke(org.id, key.id), false, 'already revoked');
      });

      it('keeps a null name', async () => {
        const org = await registry.orgs.create('unnamed-keys');
        const hash = hashSecret(randomToken('fgk_'));
        const key = await registry.apiKeys.create(org.id, null, hash);
        assert.equal((await registry.apiKeys.findByHash(hash))?.name, null);
        assert.equal(key.name, null);
      });

      it('does not let another org revoke a key', async () => {
        const owner = await registry.orgs.create('owner');
        const intruder = await registry.orgs.create('intruder');
        const hash = hashSecret(randomToken('fgk_'));
        const key = await registry.apiKeys.create(owner.id, 'mine', hash);
        assert.equal(await registry.apiKeys.revoke(intruder.id, key.id), false);
        assert.deepEqual(await registry.apiKeys.findByHash(hash), key);
        assert.equal(await registry.apiKeys.revoke(owner.id, 'key_missing'), false);
      });
    });

    describe('workflows', () => {
      it('creates, updates and gets a workflow draft', async () => {
        const org = await registry.orgs.create('wf');
        const created = await registry.workflows.create(org.id, definition('first', [step1]));
        assert.match(created.id, /^wf_/);
        assert.equal(created.name, 'first');
        assert.equal(created.publishedVersion, null);
        assert.deepEqual(created.versions, []);
        assert.deepEqual(await registry.workflows.get(org.id, created.id), created);

        const draft = definition('renamed', [step1, step2]);
        const updated = await registry.workflows.updateDraft(org.id, created.id, draft);
        assert.ok(updated);
        assert.equal(updated.name, 'renamed');
        assert.deepEqual(updated.draft, draft);
        assert.equal(updated.createdAt, created.createdAt);
        assert.ok(updated.updatedAt >= created.updatedAt);
        assert.equal(await registry.workflows.updateDraft(org.id, 'wf_missing', draft), undefined);
      });

      it('hides a workflow from another org', async () => {
        const owner = await registry.orgs.create('wf-owner');
        const other = await registry.orgs.create('wf-other');
        const wf = await registry.workflows.create(owner.id, definition('private', [step1]));
        assert.equal(await registry.workflows.get(other.id, wf.id), undefined);
        assert.equal(await registry.workflows.updateDraft(other.id, wf.id, definition('hijack', [step1])), undefined);
        assert.equal(await registry.workflows.publish(other.id, wf.id), undefined);
        await assert.rejects(registry.triggers.create(other.id, { workflowId: wf.id }),
          (e: unknown) => e instanceof RegistryError && e.code === 'NOT_FOUND');
        assert.equal((await registry.workflows.get(owner.id, wf.id))?.name, 'private');
      });

      it('publishes versions whose step map bumps only changed steps', async () => {
        const org = await registry.orgs.create('publish');
        const wf = await registry.workflows.create(org.id, definition('pub', [step1, step2]));

        const v1 = await registry.workflows.publish(org.id, wf.id);
        assert.ok(v1);
        assert.equal(v1.version, 1);
        assert.equal(v1.workflowId, wf.id);
        assert.equal(v1.name, 'pub');
        assert.deepEqual(v1.stepMap, { '1': 1, '2': 1 });

        await registry.workflows.updateDraft(org.id, wf.id, definition('pub', [step1, step2Changed, step3]));
        const v2 = await registry.workflows.publish(org.id, wf.id);
        assert.ok(v2);
        assert.equal(v2.version, 2);
        assert.deepEqual(v2.stepMap, { '1': 1, '2': 2, '3': 1 });

        // Reordering keys is not a change.
        const reordered = { url: step3.url, method: step3.method, type: step3.type, name: step3.name };
        await registry.workflows.updateDraft(org.id, wf.id, definition('pub', [step1, step2Changed, reordered]));
        const v3 = await registry.workflows.publish(org.id, wf.id);
        assert.deepEqual(v3?.stepMap, { '1': 1, '2': 2, '3': 1 });

        const record = await registry.workflows.get(org.id, wf.id);
        assert.equal(record?.publishedVersion, 3);
        assert.deepEqual(record?.versions, [1, 2, 3]);
        assert.equal((await registry.workflows.getLatestVersion(wf.id))?.version, 3);
      });

      it('keeps published versions immutable after draft edits', async () => {
        const org = await registry.orgs.create('immutable');
        const original = definition('frozen', [step1]);
        const wf = await registry.workflows.create(org.id, original);
        const v1 = await registry.workflows.publish(org.id, wf.id);
        assert.ok(v1);

        await registry.workflows.updateDraft(org.id, wf.id, definition('thawed', [step2, step3]));
        const reread = await registry.workflows.getVersion(wf.id, 1);
        assert.deepEqual(reread, v1);
        assert.deepEqual(reread?.definition, original);
        assert.equal(reread?.name, 'frozen');
        assert.equal((await registry.workflows.getLatestVersion(wf.id))?.version, 1);
        assert.equal(await registry.workflows.getVersion(wf.id, 2), undefined);
        assert.equal(await registry.workflows.getLatestVersion('wf_missing'), undefined);
      });

      it('gives two concurrent publishes versions 1 and 2', async () => {
        const org = await registry.orgs.create('race');
        const wf = await registry.workflows.create(org.id, definition('race', [step1]));
        const results = await Promise.all([registry.workflows.publish(org.id, wf.id), registry.workflows.publish(org.id, wf.id)]);
        assert.deepEqual(results.map((v) => v?.version).sort(), [1, 2]);
        assert.deepEqual((await registry.workflows.get(org.id, wf.id))?.versions, [1, 2]);
      });

      it('numbers a burst of concurrent publishes without gaps or duplicates', async () => {
        const org = await registry.orgs.create('burst');
        const wf = await registry.workflows.create(org.id, definition('burst', [step1]));
        const results = await Promise.all(Array.from({ length: 6 }, () => registry.workflows.publish(org.id, wf.id)));
        assert.deepEqual(results.map((v) => v?.version).sort((a, b) => (a ?? 0) - (b ?? 0)), [1, 2, 3, 4, 5, 6]);
        assert.equal((await registry.workflows.get(org.id, wf.id))?.publishedVersion, 6);
      });

      it('reports NOT_FOUND for a workflow of an unknown org', async () => {
        await assert.rejects(registry.workflows.create('org_nope', definition('x', [step1])),
          (e: unknown) => e instanceof RegistryError && e.code === 'NOT_FOUND');
      });
    });

    describe('triggers', () => {
      it('creates a trigger for a published workflow and reads it back', async () => {
        const org = await registry.orgs.create('triggers');
        const wf = await registry.workflows.create(org.id, definition('trg', [step1, step2]));
        await registry.workflows.publish(org.id, wf.id);

        const plain = await registry.triggers.create(org.id, { workflowId: wf.id });
        assert.match(plain.id, /^trg_/);
        assert.equal(plain.name, null);
        assert.equal(plain.designatedOutput, null);
        assert.deepEqual(await registry.triggers.get(plain.id), plain);

        const withOutput = await registry.triggers.create(org.id, {
          workflowId: wf.id, name: 'report', designatedOutput: { stepIndex: 2, fileName: 'report.md' },
        });
        assert.deepEqual(await registry.triggers.get(withOutput.id), withOutput);
        assert.deepEqual(withOutput.designatedOutput, { stepIndex: 2, fileName: 'report.md' });
        assert.equal(await registry.triggers.get('trg_missing'), undefined);
      });

      it('refuses an unpublished workflow with NOT_PUBLISHED', async () => {
        const org = await registry.orgs.create('unpublished');
        const wf = await registry.workflows.create(org.id, definition('draft-only', [step1]));
        await assert.rejects(registry.triggers.create(org.id, { workflowId: wf.id }),
          (e: unknown) => e instanceof RegistryError && e.code === 'NOT_PUBLISHED');
      });

      it('refuses an unknown workflow with NOT_FOUND', async () => {
        const org = await registry.orgs.create('no-workflow');
        await assert.rejects(registry.triggers.create(org.id, { workflowId: 'wf_missing' }),
          (e: unknown) => e instanceof RegistryError && e.code === 'NOT_FOUND');
      });

      it('refuses a designated output beyond the latest version\'s steps with INVALID', async () => {
        const org = await registry.orgs.create('invalid-output');
        const wf = await registry.workflows.create(org.id, definition('short', [step1, step2]));
        await registry.workflows.publish(org.id, wf.id);
        // The draft's extra step is not published yet, so it cannot be designated.
        await registry.workflows.updateDraft(org.id, wf.id, definition('short', [step1, step2, step3]));
        for (const stepIndex of [3, 0]) {
          await assert.rejects(registry.triggers.create(org.id, { workflowId: wf.id, designatedOutput: { stepIndex } }),
            (e: unknown) => e instanceof RegistryError && e.code === 'INVALID');
        }
      });
    });
  });
}

describe('openRegistry', () => {
  it('rejects when the database is unreachable', async () => {
    await assert.rejects(openRegistry({ kind: 'postgres', url: 'postgres://postgres@127.0.0.1:1/test' }));
  });

  it('rejects a schema name that is not a plain identifier', async () => {
    await assert.rejects(openRegistry({ kind: 'postgres', url: TEST_POSTGRES_URL, schema: 'x"; drop table y; --' }), /invalid PostgreSQL schema name/);
  });

  /**
   * test/fixtures/registry-better-sqlite3.sqlite was written by the registry before it moved to
   * node:sqlite (better-sqlite3 12, WAL, every migration up to 0009): an org, a published workflow,
   * a trigger and an API key.
   */
  it('opens a SQLite registry written by better-sqlite3 and reads and writes it as before', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'flowgate-legacy-registry-'));
    const file = path.join(dir, 'registry.sqlite');
    copyFileSync(path.join(FIXTURES, 'registry-better-sqlite3.sqlite'), file);
    const registry = await openRegistry({ kind: 'sqlite', file });
    try {
      assert.deepEqual(await registry.orgs.get('org_EYpyXUgthsvrKM8y'),
        { id: 'org_EYpyXUgthsvrKM8y', name: 'written-by-better-sqlite3', createdAt: '2026-11-26T09:08:26.794Z' });
      const version = await registry.workflows.getVersion('wf_U8gFnQcABo4aLbpC', 1);
      assert.equal(version?.definition.steps[0]?.name, 'greet');
      assert.equal((await registry.triggers.get('trg_aib5bcyk3bH9d5ar'))?.workflowId, 'wf_U8gFnQcABo4aLbpC');
      assert.equal((await registry.apiKeys.findByHash('a'.repeat(64)))?.id, 'key_mKjoBQWSRIxFFo3f');
      // the constraint codes the stores rely on come through as before
      await assert.rejects(registry.apiKeys.create('org_missing', 'x', 'b'.repeat(64)), (error: unknown) => error instanceof RegistryError && error.code === 'NOT_FOUND');
      const published = await registry.workflows.publish('org_EYpyXUgthsvrKM8y', 'wf_U8gFnQcABo4aLbpC');
      assert.equal(published?.version, 2);
    } finally {
      await registry.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('loads the SQLite driver without an experimental-feature warning on any supported line', async () => {
    const driver = path.join(__dirname, '..', '..', 'src', 'registry', 'sqlite.js');
    const { stderr } = await promisify(execFile)(process.execPath, ['-e', `require(${JSON.stringify(driver)}).openSqlite(':memory:').close()`]);
    assert.equal(stderr, '');
  });
});
