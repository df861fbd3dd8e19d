import assert from 'node:assert/strict';
import { z } from 'zod';
import { DEFAULT_ORG_ID } from '../../src/registry';
import { startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { diceServerKind } from '../fixtures/kinds/dice';
import { diceTaskKind } from '../fixtures/kinds/dice-task';
import { TaskSchema } from '../../src/contracts/mcp';
import { createOrg, rpc, runtimeToken } from './support';

type Task = z.infer<typeof TaskSchema>;

describe('an extra task kind registered in one folder', () => {
  let fg: TestFlowgate;
  let token: string;
  let id = 1;
  const call = async (method: string, params: Record<string, unknown>, as = token) => rpc(fg, 'dice', as, { jsonrpc: '2.0', id: id++, method, params });
  before(async () => {
    fg = await startTestFlowgate({}, { serverKinds: [diceServerKind], taskKinds: [diceTaskKind] });
    token = (await runtimeToken(fg)).token;
  });
  after(async () => {
    await fg?.stop();
  });

  it('advertises tasks on its server and runs a task-augmented tools/call as a task through the gateway', async () => {
    const init = await call('initialize', { protocolVersion: '2025-11-25' });
    assert.deepEqual(z.object({ tasks: z.unknown() }).loose().parse(init.body?.result?.capabilities).tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });

    const created = await call('tools/call', { name: 'dice_roll', arguments: { count: 4, face: 3 }, task: { ttl: 60_000 } });
    const task = TaskSchema.parse(created.body?.result?.task);
    assert.equal(task.status, 'working');
    assert.equal(task.ttl, 60_000);

    const got = await call('tasks/get', { taskId: task.taskId });
    const seen = TaskSchema.parse(got.body?.result);
    assert.equal(seen.taskId, task.taskId);
    assert.ok(['working', 'completed'].includes(seen.status), JSON.stringify(seen));

    const result = await call('tasks/result', { taskId: task.taskId });
    assert.equal(result.body?.result?.isError, false, JSON.stringify(result.body));
    assert.deepEqual(result.body?.result?.structuredContent, { count: 4, face: 3, total: 12, orgId: DEFAULT_ORG_ID, tenant: null });
    assert.deepEqual(result.body?.result?._meta, { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } });

    const done = await call('tasks/get', { taskId: task.taskId });
    assert.equal(TaskSchema.parse(done.body?.result).status, 'completed');
    // visibility (what tasks/list reads) catches up with the closed run shortly
    let listed: Task[] = [];
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 200))) {
      listed = z.array(TaskSchema).parse((await call('tasks/list', {})).body?.result?.tasks);
      if (listed.some((t) => t.taskId === task.taskId && t.status === 'completed')) break;
    }
    assert.ok(listed.some((t) => t.taskId === task.taskId && t.status === 'completed'), JSON.stringify(listed));
  });

  it('cancels its task, keeps it to the organization that started it, and runs no other tool as a task', async () => {
    const created = await call('tools/call', { name: 'dice_roll', arguments: { count: 1 }, task: {} });
    const task = TaskSchema.parse(created.body?.result?.task);
    // the roll waits a second first: it is still open here
    const cancelled = await call('tasks/cancel', { taskId: task.taskId });
    assert.equal(TaskSchema.parse(cancelled.body?.result).statusMessage, 'the roll was cancelled');
    const other = await createOrg(fg);
    const otherToken = (await runtimeToken(fg, other.adminToken)).token;
    const foreign = await call('tasks/get', { taskId: task.taskId }, otherToken);
    assert.equal(foreign.body?.error?.code, -32602);
    assert.match(foreign.body?.error?.message ?? '', /no task/);
    const notATask = await call('tools/call', { name: 'dice_unknown', arguments: {}, task: {} });
    assert.equal(notATask.body?.error?.code, -32601);
  });
});
