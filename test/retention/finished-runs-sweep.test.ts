/**
 * The retention sweep's registry half: finished_runs rows older than their period go, younger ones
 * stay, on SQLite and PostgreSQL, with the sweep's "now" given instead of waiting.
 */
import assert from 'node:assert/strict';
import { openRegistry, type Registry } from '../../src/registry';
import { DAY_MS } from '../../src/retention/policy';
import { sweepFinishedRuns } from '../../src/retention/sweep';
import { registryDialects } from '../support/registry-dialects';

for (const dialect of registryDialects({ tempDirPrefix: 'flowgate-retention-', schemaPrefix: 'retention_' })) {
  describe(`retention of finished_runs (${dialect.name})`, () => {
    let registry: Registry;
    beforeEach(async () => {
      registry = await openRegistry(await dialect.setUp());
    });
    afterEach(async () => {
      await registry?.close();
      await dialect.tearDown();
    });

    it('deletes rows older than the period and keeps the others, in batches, idempotently', async () => {
      const put = (runId: string) => registry.finishedRuns.put({ runId, orgId: 'org', automationId: 'wf', view: '{}' });
      for (let i = 0; i < 1005; i++) await put(`old-${i}`);
      // the rows' timestamps must fall on either side of `between`: let the clock tick
      await new Promise((resolve) => setTimeout(resolve, 20));
      const between = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 20));
      await put('young');
      // 30 days after `between`: every row written before it has expired, the young one has not
      assert.equal(await sweepFinishedRuns(registry.finishedRuns, 30, new Date(between + 30 * DAY_MS)), 1005);
      assert.equal(await registry.finishedRuns.get('old-0'), undefined);
      assert.equal(await registry.finishedRuns.get('old-1004'), undefined);
      assert.ok(await registry.finishedRuns.get('young'));
      assert.equal(await sweepFinishedRuns(registry.finishedRuns, 30, new Date(between + 30 * DAY_MS)), 0);
      assert.equal(await sweepFinishedRuns(registry.finishedRuns, 30, new Date(Date.now() + 31 * DAY_MS)), 1);
      assert.equal(await registry.finishedRuns.get('young'), undefined);
    });
  });
}
