/**
 * MCP Tasks of the code-agent tools that wait, and task ttl: the official SDK client against a
 * real gateway, a real Temporal dev server and the fake code-agent backend on loopback (its real
 * wire protocol). A task-augmented create_agent, create_run or stream_run answers at once with a
 * task backed by a waiter workflow that polls the backend until the agent's run ends.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { defaultPayloadConverter } from '@temporalio/common';
import { DEFAULT_TASK_MAX_TTL_MS } from '../../src/tools/mcp/tasks';
import { eventually } from '../support/eventually';
import { startFakeCodeAgent, type FakeCodeAgent } from '../support/fake-codeagent';
import { publishWorkflow, type TestFlowgate } from '../support/flowgate';
import { connectMcp, pollTask, startTask, withKilledReplica } from './mcp-tasks-support';
import { callTool, createOrg, rpc, runtimeToken, startToolFlowgate } from './support';
import { clearHistory } from '../support/histories';

const RUN_MS = 1500;
const repos = [{ url: 'https://github.com/acme/widgets', startingRef: 'main' }];
const isInvalidParams = (e: { code?: number }): boolean => e.code === -32602;

describe('MCP Tasks of the code-agent tools (a waiter workflow per task) and task ttl', function () {
  this.timeout(120_000);
  let fake: FakeCodeAgent;
  let fg: TestFlowgate;
  let token: string;
  let pcid: string;

  before(async () => {
    fake = await startFakeCodeAgent({ runMs: RUN_MS });
    fg = await startToolFlowgate();
    token = (await runtimeToken(fg)).token;
    const created = await fg.admin<{ PCID: string }>('POST', '/api/v1/connections', { application: 'codeagent', name: 'cursor', credentials: { apiKey: fake.apiKey, baseUrl: fake.url } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    pcid = created.body.PCID;
  });
  after(async () => {
    await fg?.stop();
    await fake?.close();
  });
  afterEach(() => {
    fake.runMs = RUN_MS;
  });

  const plainCreateAgent = async (text: string): Promise<{ agent: { id: string }; run: { id: string } }> => {
    const answer = await callTool(fg, 'codeagent', token, 'codeagent_create_agent', { PCID: pcid, prompt: { text }, repos });
    assert.equal(answer.body?.result?.isError, false, JSON.stringify(answer.body));
    return answer.body?.result?.structuredContent as { agent: { id: string }; run: { id: string } };
  };

  it('advertises task support on create_agent, create_run and stream_run; create_agent as a task waits for the run and answers {agent, run} as it ended', async () => {
    const client = await connectMcp(fg.url, 'codeagent', token);
    try {
      assert.ok(client.getServerCapabilities()?.tasks?.requests?.tools?.call, '/tools/codeagent advertises task-augmented tools/call');
      const { tools } = await client.listTools();
      const capable = tools.filter((t) => t.execution?.taskSupport === 'optional').map((t) => t.name).sort();
      assert.deepEqual(capable, ['codeagent_create_agent', 'codeagent_create_run', 'codeagent_stream_run']);

      const secret = `sekrit-${randomUUID()}`;
      const created = await startTask(client, 'codeagent_create_agent', { PCID: pcid, prompt: { text: 'Fix the flaky test' }, repos, envVars: { DEPLOY_TOKEN: secret } });
      assert.equal(created.status, 'working');
      assert.match(created.taskId, /^catask_/);
      const handle = fg.client.workflow.getHandle(created.taskId);
      assert.equal((await handle.describe()).type, 'codeAgentTask', 'the task id is the waiter workflow id');

      const done = await pollTask(client, created.taskId, (t) => t.status === 'completed');
      assert.equal(done.taskId, created.taskId);
      const result = await client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
      assert.equal(result.isError, false, JSON.stringify(result));
      const value = result.structuredContent as { agent: { id: string }; run: { id: string; status: string; result: string } };
      assert.equal(value.run.status, 'FINISHED');
      assert.equal(value.run.result, 'Done: Fix the flaky test');
      assert.equal(fake.agents.get(value.agent.id)?.runs[0]?.id, value.run.id);
      // the call's arguments (the envVars value) never reached Temporal
      assert.ok(!JSON.stringify(await clearHistory(fg, handle)).includes(secret), 'no secret in the waiter\'s history');
      // what the Temporal Web UI shows of the waiter (level 6): its summary, and its wait labelled
      assert.equal(await (await handle.describe()).staticSummary(), `code-agent task codeagent_create_agent · agent ${value.agent.id} · run ${value.run.id}`);
      const labels = ((await clearHistory(fg, handle)).events ?? []).flatMap((e) => (e.userMetadata?.summary ? [defaultPayloadConverter.fromPayload<string>(e.userMetadata.summary)] : []));
      assert.ok(labels.includes(`codeagent_create_agent: wait for run ${value.run.id} of agent ${value.agent.id}`), JSON.stringify(labels));

      const listed = await client.experimental.tasks.listTasks();
      assert.ok(listed.tasks.some((t) => t.taskId === created.taskId && t.status === 'completed'));
      const other = await createOrg(fg);
      const otherToken = (await runtimeToken(fg, other.adminToken)).token;
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
        const theirs = await rpc(fg, 'codeagent', otherToken, { jsonrpc: '2.0', id: 1, method, params: { taskId: created.taskId } });
        assert.equal(theirs.body?.error?.code, -32602, `${method}: ${JSON.stringify(theirs.body)}`);
        assert.equal(theirs.body?.error?.message, `no task ${created.taskId}`);
      }
      const theirList = await rpc(fg, 'codeagent', otherToken, { jsonrpc: '2.0', id: 2, method: 'tasks/list', params: {} });
      assert.ok(!JSON.stringify(theirList.body).includes(created.taskId));

      // not task-capable, and arguments the tool refuses
      const plain = await rpc(fg, 'codeagent', token, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'codeagent_get_run', arguments: { PCID: pcid, id: 'bc-1', runId: 'run-1' }, task: {} } });
      assert.equal(plain.body?.error?.code, -32601);
      const bad = await rpc(fg, 'codeagent', token, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'codeagent_create_agent', arguments: { PCID: pcid, prompt: { text: 'x' } }, task: {} } });
      assert.equal(bad.body?.error?.code, -32000);
      assert.match(bad.body?.error?.message ?? '', /repos/);
    } finally {
      await client.close();
    }
  });

  it('fails the task when the agent\'s run ends ERROR, and at once when the backend refuses the call (create_run on a busy agent)', async () => {
    const client = await connectMcp(fg.url, 'codeagent', token);
    try {
      const erring = await startTask(client, 'codeagent_create_agent', { PCID: pcid, prompt: { text: '[fail] break it' }, repos });
      const failed = await pollTask(client, erring.taskId, (t) => t.status === 'failed');
      assert.match(failed.statusMessage ?? '', /ended ERROR/);
      const result = await client.experimental.tasks.getTaskResult(erring.taskId, CallToolResultSchema);
      assert.equal(result.isError, true);
      assert.equal((result.structuredContent as { run: { status: string } }).run.status, 'ERROR');

      fake.runMs = 30_000;
      const { agent } = await plainCreateAgent('keep busy');
      const busy = await startTask(client, 'codeagent_create_run', { PCID: pcid, id: agent.id, prompt: { text: 'and another thing' } });
      const refused = await pollTask(client, busy.taskId, (t) => t.status === 'failed');
      assert.match(refused.statusMessage ?? '', /agent_busy/);
      const busyResult = await client.experimental.tasks.getTaskResult(busy.taskId, CallToolResultSchema);
      assert.equal(busyResult.isError, true);
      assert.deepEqual([(busyResult.structuredContent as { code: string; status: number }).code, (busyResult.structuredContent as { status: number }).status], ['agent_busy', 409]);
    } finally {
      await client.close();
    }
  });

  it('create_run and stream_run as tasks: the follow-up run as it ended, and the run\'s events to its end', async () => {
    const { agent, run } = await plainCreateAgent('first');
    const client = await connectMcp(fg.url, 'codeagent', token);
    try {
      const streamed = await startTask(client, 'codeagent_stream_run', { PCID: pcid, id: agent.id, runId: run.id });
      await pollTask(client, streamed.taskId, (t) => t.status === 'completed');
      const events = await client.experimental.tasks.getTaskResult(streamed.taskId, CallToolResultSchema);
      const answer = events.structuredContent as { ended: boolean; status: string; events: { event: string }[] };
      assert.equal(answer.ended, true);
      assert.equal(answer.status, 'FINISHED');
      assert.equal(answer.events.at(-1)?.event, 'done');

      const followUp = await startTask(client, 'codeagent_create_run', { PCID: pcid, id: agent.id, prompt: { text: 'second' } });
      await pollTask(client, followUp.taskId, (t) => t.status === 'completed');
      const result = await client.experimental.tasks.getTaskResult(followUp.taskId, CallToolResultSchema);
      const value = result.structuredContent as { run: { id: string; status: string; result: string } };
      assert.deepEqual([value.run.status, value.run.result], ['FINISHED', 'Done: second']);
      assert.notEqual(value.run.id, run.id);
    } finally {
      await client.close();
    }
  });

  it('cancels the waiter on tasks/cancel and asks the backend to cancel the agent\'s run', async () => {
    fake.runMs = 60_000;
    const client = await connectMcp(fg.url, 'codeagent', token);
    try {
      const created = await startTask(client, 'codeagent_create_agent', { PCID: pcid, prompt: { text: 'a long job' }, repos });
      const memo = (await fg.client.workflow.getHandle(created.taskId).describe()).memo as { codeAgentTask: { agentId: string; runId: string } };
      const cancelled = await client.experimental.tasks.cancelTask(created.taskId);
      assert.equal(cancelled.status, 'cancelled');
      const handle = fg.client.workflow.getHandle(created.taskId);
      await handle.result().catch(() => undefined);
      assert.equal((await handle.describe()).status.name, 'CANCELLED');
      assert.equal(fake.run(memo.codeAgentTask.agentId, memo.codeAgentTask.runId)?.status, 'CANCELLED', 'the backend was asked to cancel the run');
      assert.ok(fake.requests.some((r) => r.method === 'POST' && r.path.endsWith(`/runs/${memo.codeAgentTask.runId}/cancel`)));
      assert.equal((await client.experimental.tasks.getTask(created.taskId)).status, 'cancelled');
      const result = await client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
      assert.equal(result.isError, true);
      assert.equal((result.structuredContent as { status: string }).status, 'CANCELLED');
      await assert.rejects(client.experimental.tasks.cancelTask(created.taskId), isInvalidParams);
    } finally {
      await client.close();
    }
  });

  it('finishes a code-agent task through this gateway after the gateway process that created it was killed', async () => {
    fake.runMs = 3000;
    const taskId = await withKilledReplica(fg, {}, async (url) => {
      const replica = await connectMcp(url, 'codeagent', token);
      try {
        return (await startTask(replica, 'codeagent_create_agent', { PCID: pcid, prompt: { text: 'outlive the gateway' }, repos })).taskId;
      } finally {
        await replica.close();
      }
    });
    const client = await connectMcp(fg.url, 'codeagent', token);
    try {
      await pollTask(client, taskId, (t) => t.status === 'completed');
      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema) as CallToolResult;
      assert.equal((result.structuredContent as { run: { result: string } }).run.result, 'Done: outlive the gateway');
    } finally {
      await client.close();
    }
  });

  it('honours a short ttl: past it tasks/get, tasks/result and tasks/cancel answer as for an unknown task and tasks/list leaves it out; a long ttl is clamped to the maximum', async () => {
    fake.runMs = 60_000;
    const toolName = `nap_${randomUUID().slice(0, 8)}`;
    await publishWorkflow(fg, { name: `nap-${randomUUID()}`, steps: [{ name: 'Nap', type: 'delay', duration: '30s' }] }, { tool: { name: toolName, description: 'naps' } });
    const agents = await connectMcp(fg.url, 'codeagent', token);
    const workflows = await connectMcp(fg.url, 'workflows', token);
    try {
      const TTL = 3000;
      const short = [
        { client: agents, task: await startTask(agents, 'codeagent_create_agent', { PCID: pcid, prompt: { text: 'short-lived' }, repos }, { ttl: TTL }) },
        { client: workflows, task: await startTask(workflows, toolName, {}, { ttl: TTL }) },
      ];
      for (const { client, task } of short) {
        assert.equal(task.ttl, TTL, 'the requested ttl is the effective one');
        assert.equal((await client.experimental.tasks.getTask(task.taskId)).ttl, TTL);
      }
      const clamped = await startTask(agents, 'codeagent_create_agent', { PCID: pcid, prompt: { text: 'long-lived' }, repos }, { ttl: 10 * 365 * 24 * 3600 * 1000 });
      assert.equal(clamped.ttl, DEFAULT_TASK_MAX_TTL_MS, 'clamped to the maximum');
      const unasked = await rpc(fg, 'workflows', token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: toolName, arguments: {}, task: {} } });
      assert.equal((unasked.body?.result?.task as { ttl: number }).ttl, DEFAULT_TASK_MAX_TTL_MS, 'no ttl asked: the maximum');

      const expiry = Math.max(...short.map(({ task }) => Date.parse(task.createdAt) + TTL));
      // poll, no fixed sleep: each short task disappears once its ttl has passed
      for (const { client, task } of short) {
        await eventually(() => client.experimental.tasks.getTask(task.taskId).then(() => undefined, (err: { code?: number }) => (isInvalidParams(err) ? true : undefined)),
          `task ${task.taskId} expired`, Math.max(0, expiry - Date.now()) + 30_000, 250);
      }
      assert.ok(Date.now() >= expiry, 'no task is gone before its ttl');
      for (const { client, task } of short) {
        await assert.rejects(client.experimental.tasks.getTask(task.taskId), isInvalidParams);
        await assert.rejects(client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema), isInvalidParams);
        await assert.rejects(client.experimental.tasks.cancelTask(task.taskId), isInvalidParams);
        const listed = await client.experimental.tasks.listTasks();
        assert.ok(!listed.tasks.some((t) => t.taskId === task.taskId), 'an expired task is not listed');
      }
      // the long-lived one is still there; the waiter of the expired one stops within its ttl
      assert.equal((await agents.experimental.tasks.getTask(clamped.taskId)).status, 'working');
      const waiter = fg.client.workflow.getHandle(short[0]!.task.taskId);
      await waiter.result().catch(() => undefined);
      assert.equal((await waiter.describe()).status.name, 'TIMED_OUT');
      await agents.experimental.tasks.cancelTask(clamped.taskId);
    } finally {
      await agents.close();
      await workflows.close();
    }
  });
});
