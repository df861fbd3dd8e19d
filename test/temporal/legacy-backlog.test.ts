/**
 * The embedded dev server turns fairness on only when its database holds no task queued without
 * it (temporal/legacy-backlog.ts): Temporal 1.29 would never dispatch those. A server of this
 * test's own on a SQLite file: workflows started while nothing polls leave their first tasks in
 * the pre-fairness table; the next start runs without fairness and says why, the tasks are
 * dispatched (a raw poll completes them), and the start after that has fairness.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { queuedLegacyTasks } from '../../temporal/legacy-backlog';
import type { EmbeddedTemporal } from '../../temporal/embedded';
import { freeTemporalFrontendPort, startTestTemporal } from '../setup/root-hooks';
import { eventually } from '../support/eventually';

const QUEUE = 'legacy-backlog';
const RUNS = 3;

describe('the dev server and tasks queued before fairness', function () {
  this.timeout(120_000);
  let dir = '';
  let server: EmbeddedTemporal | undefined;
  let connection: Connection | undefined;

  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-legacy-backlog-'));
  });
  after(async () => {
    await connection?.close().catch(() => undefined);
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts without fairness while such tasks wait, and with it once they ran', async () => {
    const dbFile = path.join(dir, 'temporal.sqlite');
    const port = await freeTemporalFrontendPort();
    const notices: string[] = [];
    const start = (fairness?: boolean) => startTestTemporal({ port, dbFile, ...(fairness === undefined ? {} : { fairness }), notice: (m) => notices.push(m) });
    const connect = async () => {
      connection = await Connection.connect({ address: `127.0.0.1:${port}`, channelArgs: { 'grpc.use_local_subchannel_pool': 1 } });
      return new Client({ connection });
    };

    assert.equal(await queuedLegacyTasks(dbFile), 0, 'no file yet');
    server = await start(false);
    assert.equal(server.fairness, false);
    let client = await connect();
    const ids = Array.from({ length: RUNS }, (_, i) => `legacy-${i}`);
    for (const workflowId of ids) await client.workflow.start('nothing', { taskQueue: QUEUE, workflowId });
    await connection!.close();
    connection = undefined;
    await server.stop();
    server = undefined;
    assert.ok(await queuedLegacyTasks(dbFile) >= RUNS, 'the first workflow tasks wait in the pre-fairness table');

    server = await start();
    assert.equal(server.fairness, false, 'not while they wait');
    assert.match(notices.join('\n'), new RegExp(`holds ${RUNS} task\\(s\\) queued before fairness`));
    client = await connect();
    // A worker of the queue: completes every workflow task it is handed. A restarted server may
    // have queued a task again (history re-sends what it had not seen taken); matching drops those
    // of closed workflows only once a poll reads them, so polling goes on until none is left. A
    // long poll needs a deadline of several seconds (Temporal answers a short one with nothing).
    let polling = true;
    const worker = (async () => {
      while (polling) {
        const task = await connection!.withDeadline(Date.now() + 10_000,
          () => client.workflowService.pollWorkflowTaskQueue({ namespace: 'default', taskQueue: { name: QUEUE }, identity: 'legacy-test' }))
          .catch(() => undefined);
        if (!task?.taskToken?.length) continue;
        await client.workflowService.respondWorkflowTaskCompleted({
          namespace: 'default', taskToken: task.taskToken, identity: 'legacy-test',
          commands: [{ commandType: temporal.api.enums.v1.CommandType.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION, completeWorkflowExecutionCommandAttributes: {} }],
        });
      }
    })();
    try {
      for (const id of ids) await client.workflow.getHandle(id).result();
      // The server records how far its queues got every few seconds while it defers fairness.
      await eventually(async () => ((await queuedLegacyTasks(dbFile)) === 0 ? true : undefined), 'the queues\' progress written', 45_000, 500);
    } finally {
      polling = false;
      await worker;
    }
    await connection!.close();
    connection = undefined;
    await server.stop();
    server = undefined;
    assert.equal(await queuedLegacyTasks(dbFile), 0);

    notices.length = 0;
    server = await start();
    assert.equal(server.fairness, true, 'the start after they ran has fairness');
    assert.deepEqual(notices, []);
  });
});
