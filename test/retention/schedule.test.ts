/**
 * The retention sweep's schedule: created idempotently by any number of processes at once (every
 * replica calls it at start), one schedule whatever the count, skipping overlapping sweeps, and
 * removed when retention is turned off.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, Connection, ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { ENGINE_LEVEL } from '../../src/common/run-types';
import { silentLogger } from '../../src/observability/logger';
import { ensureRetentionSchedule, retentionScheduleId } from '../../src/retention/schedule';
import { temporalAddress } from '../setup/root-hooks';

describe('retention sweep schedule', () => {
  let connection: Connection;
  let client: Client;
  before(async () => {
    connection = await Connection.connect({ address: temporalAddress() });
    client = new Client({ connection });
  });
  after(async () => {
    await connection?.close();
  });

  it('is created once when several replicas start at the same time, and deleted when retention is off', async () => {
    const taskQueue = `retention-${randomUUID()}`;
    const outcomes = await Promise.all(Array.from({ length: 4 }, () => ensureRetentionSchedule(client, { taskQueue, enabled: true, log: silentLogger })));
    assert.deepEqual(outcomes.filter((o) => o === 'created'), ['created']);
    assert.deepEqual(outcomes.filter((o) => o === 'exists').length, 3);
    const description = await client.schedule.getHandle(retentionScheduleId(taskQueue)).describe();
    assert.equal(description.policies.overlap, ScheduleOverlapPolicy.SKIP);
    assert.equal(description.action.type === 'startWorkflow' && description.action.taskQueue, taskQueue);
    // the sweeps it starts are at this code's level: their activities carry summaries for the Web UI
    assert.deepEqual(description.action.type === 'startWorkflow' && description.action.args, [{ engine: ENGINE_LEVEL }]);
    assert.equal(await ensureRetentionSchedule(client, { taskQueue, enabled: true, log: silentLogger }), 'exists');
    assert.equal(await ensureRetentionSchedule(client, { taskQueue, enabled: false, log: silentLogger }), 'deleted');
    await assert.rejects(client.schedule.getHandle(retentionScheduleId(taskQueue)).describe(), ScheduleNotFoundError);
    assert.equal(await ensureRetentionSchedule(client, { taskQueue, enabled: false, log: silentLogger }), 'absent');
  });
});
