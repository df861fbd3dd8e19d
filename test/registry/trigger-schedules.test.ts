import assert from 'node:assert/strict';
import { WorkflowDefinitionSchema } from '../../activities/steps';
import { openRegistry, type Registry } from '../../src/registry';
import { ScheduleConfigSchema } from '../../src/contracts/schedule-bodies';
import { registryDialects } from '../support/registry-dialects';

for (const backend of registryDialects({ tempDirPrefix: 'flowgate-schedules-', schemaPrefix: 'flowgate_sched_' })) {
  describe(`trigger schedules store (${backend.name})`, () => {
    let registry: Registry;
    before(async () => {
      registry = await openRegistry(await backend.setUp());
    });
    after(async () => {
      await registry?.close();
      await backend.tearDown();
    });

    const config = ScheduleConfigSchema.parse({ cron: '0 9 * * *', timeZone: 'Europe/Berlin', inputs: { a: 1 } });

    it('stores a schedule with its trigger, counts revisions, scopes by organization and goes with the trigger or the workflow', async () => {
      const org = await registry.orgs.create('sched');
      const other = await registry.orgs.create('other');
      const wf = await registry.workflows.create(org.id, WorkflowDefinitionSchema.parse({ name: 'w', steps: [{ name: 's', type: 'template', template: 'x' }] }));
      await registry.workflows.publish(org.id, wf.id);
      const trigger = await registry.triggers.create(org.id, { workflowId: wf.id, schedule: { config, paused: false, note: null } });
      const first = await registry.schedules.get(org.id, trigger.id);
      assert.equal(first?.revision, 1);
      assert.deepEqual(first?.config, config);
      assert.equal(await registry.schedules.get(other.id, trigger.id), undefined);
      assert.equal(await registry.schedules.put(other.id, trigger.id, { config, paused: true, note: null }), undefined);

      const second = await registry.schedules.put(org.id, trigger.id, { config: { ...config, overlap: 'ALLOW_ALL' }, paused: true, note: 'n' });
      assert.equal(second?.revision, 2);
      assert.ok(await registry.schedules.setPaused(org.id, trigger.id, false, null));
      assert.equal((await registry.schedules.get(org.id, trigger.id))?.revision, 2, 'pausing is no new revision');
      assert.deepEqual((await registry.schedules.list(org.id, wf.id)).map((s) => s.triggerId), [trigger.id]);
      assert.deepEqual(await registry.schedules.triggerIds('', 10), [trigger.id]);

      assert.ok(await registry.triggers.delete(org.id, trigger.id));
      assert.equal(await registry.schedules.getAny(trigger.id), undefined);
      const again = await registry.triggers.create(org.id, { workflowId: wf.id, schedule: { config, paused: false, note: null } });
      assert.ok(await registry.workflows.delete(org.id, wf.id));
      assert.equal(await registry.schedules.getAny(again.id), undefined);
    });
  });
}
