import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { connectMcp, pollTask, startTask, withKilledReplica } from './mcp-tasks-support';
import { createOrg, rpc, runtimeToken } from './support';

/** The official MCP SDK client on a server path of `fg`. */
const connect = (fg: TestFlowgate, server: string, token: string): Promise<Client> => connectMcp(fg.url, server, token);

const GREET = {
  name: 'greet',
  inputSchema: { type: 'object', properties: { name: { type: 'string', description: 'who to greet' } }, required: ['name'] },
  steps: [
    { name: 'Greet', type: 'code', source: 'return { greeting: "hello " + inputs.name };' },
    { name: 'Shout', type: 'template', template: 'HELLO {{inputs.name}}' },
  ],
};

describe('workflows as MCP tools, and MCP Tasks on Temporal', function () {
  this.timeout(120_000);
  let fg: TestFlowgate;
  let token: string;
  /** a fresh tool name per test: the names are unique in the organization */
  const toolName = (base: string): string => `${base}_${randomUUID().slice(0, 8)}`;

  before(async () => {
    fg = await startTestFlowgate();
    token = (await runtimeToken(fg)).token;
  });
  after(async () => {
    await fg?.stop();
  });

  async function publishTool(definition: Record<string, unknown>, name: string, trigger: Record<string, unknown> = {}): Promise<Published> {
    return publishWorkflow(fg, { ...definition, name: `${String(definition.name)}-${randomUUID()}` }, { ...trigger, tool: { name, description: `tool ${name}` } });
  }

  it('lists a trigger that opted in as a tool of /tools/workflows with the workflow input schema, and refuses a taken tool name', async () => {
    const name = toolName('greet');
    const p = await publishTool(GREET, name);
    const again = await fg.admin<{ error: { code: string } }>('POST', '/api/v1/triggers', { workflowId: p.workflowId, tool: { name, description: 'twice' } });
    assert.equal(again.status, 409);
    const bad = await fg.admin('POST', '/api/v1/triggers', { workflowId: p.workflowId, tool: { name: 'has space', description: 'x' } });
    assert.equal(bad.status, 400);

    const client = await connect(fg, 'workflows', token);
    try {
      const capabilities = client.getServerCapabilities();
      assert.ok(capabilities?.tasks?.requests?.tools?.call, 'the tasks capability is advertised for tools/call');
      assert.ok(capabilities?.tasks?.list && capabilities.tasks.cancel);
      const { tools } = await client.listTools();
      const tool = tools.find((t) => t.name === name);
      assert.ok(tool, `tools/list shows ${name}`);
      assert.equal(tool.description, `tool ${name}`);
      assert.deepEqual(tool.inputSchema.required, ['name']);
      assert.deepEqual(tool.inputSchema.properties, { name: { type: 'string', description: 'who to greet' } });
      assert.equal(tool.execution?.taskSupport, 'optional');
    } finally {
      await client.close();
    }
  });

  it('shows the workflows server in listServers and its tools in discovery', async () => {
    const name = toolName('invoice_summary');
    await publishTool({ name: 'summaries', steps: [{ name: 'Sum', type: 'template', template: 'ok' }] }, name);
    const client = await connect(fg, 'mcp', token);
    try {
      const servers = await client.callTool({ name: 'listServers', arguments: {} });
      const listed = (servers.structuredContent as { servers: { name: string }[] }).servers;
      assert.ok(listed.some((s) => s.name === 'workflows'), JSON.stringify(listed));
      const found = await client.callTool({ name: 'capabilities_discover', arguments: { task: `tool ${name}` } });
      const tools = (found.structuredContent as { tools: { server: string; tool?: string; name?: string }[] }).tools;
      assert.ok(tools.some((t) => t.server === 'workflows'), JSON.stringify(tools));
    } finally {
      await client.close();
    }
  });

  it('runs the workflow on a synchronous call: the designated output as structured content, result files as resource links', async () => {
    const name = toolName('greet');
    await publishTool(GREET, name, { designatedOutput: { stepIndex: 1, fileName: 'greeting.json' } });
    const client = await connect(fg, 'workflows', token);
    try {
      const result = await client.callTool({ name, arguments: { name: 'Ada' } }) as CallToolResult;
      assert.equal(result.isError, false, JSON.stringify(result));
      const value = result.structuredContent as { runId: string; status: string; output: unknown; results: { stepIndex: number; result: string }[] };
      assert.equal(value.status, 'COMPLETE');
      assert.deepEqual(value.output, { greeting: 'hello Ada' });
      assert.equal(value.results.find((r) => r.stepIndex === 2)?.result, 'HELLO Ada');
      const links = result.content.filter((c) => c.type === 'resource_link');
      const designated = links.find((l) => l.name === 'greeting.json');
      assert.ok(designated, JSON.stringify(result.content));
      assert.deepEqual(JSON.parse(await (await fetch(designated.uri)).text()), { greeting: 'hello Ada' });
      assert.ok(links.some((l) => l.name === 'step-2/output.txt'));

      await assert.rejects(client.callTool({ name, arguments: { nom: 'Ada' } }), (error: { code?: number; message?: string }) => error.code === -32000 && /name/.test(error.message ?? ''));
      await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), (error: { code?: number }) => error.code === -32602);
    } finally {
      await client.close();
    }
  });

  it('answers a task-augmented call at once with a task whose id is the run id; tasks/get reaches completed and tasks/result answers the run', async () => {
    const name = toolName('nap');
    // the definition's designated output applies when the trigger names none
    await publishTool({
      name: 'nap', steps: [{ name: 'Nap', type: 'delay', duration: '2s' }, { name: 'Done', type: 'template', template: 'rested {{inputs.who}}' }],
      output: { stepIndex: 2, fileName: 'rested.txt' },
    }, name);
    const client = await connect(fg, 'workflows', token);
    try {
      const created = await startTask(client, name, { who: 'Bo' });
      assert.equal(created.status, 'working');
      assert.equal(typeof created.pollInterval, 'number');
      assert.equal(created.ttl, 600_000, 'the requested ttl, under the maximum');
      const description = await fg.client.workflow.getHandle(created.taskId).describe();
      assert.equal(description.type, 'runAutomation', 'the task id is the run id');

      const listed = await client.experimental.tasks.listTasks();
      assert.ok(listed.tasks.some((t) => t.taskId === created.taskId));

      const done = await pollTask(client, created.taskId, (t) => t.status === 'completed');
      assert.equal(done.taskId, created.taskId);
      const result = await client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
      assert.equal(result.isError, false);
      assert.equal((result.structuredContent as { output: unknown }).output, 'rested Bo');
      const link = result.content.find((c) => c.type === 'resource_link' && c.name === 'rested.txt');
      assert.ok(link?.type === 'resource_link', JSON.stringify(result.content));
      assert.equal(await (await fetch(link.uri)).text(), 'rested Bo');
      assert.equal((result._meta?.['io.modelcontextprotocol/related-task'] as { taskId: string }).taskId, created.taskId);
    } finally {
      await client.close();
    }
  });

  it('reports a failed run as a failed task whose result is a tool error', async () => {
    const name = toolName('boom');
    await publishTool({ name: 'boom', steps: [{ name: 'Boom', type: 'code', source: 'throw new Error("kaput");' }] }, name);
    const client = await connect(fg, 'workflows', token);
    try {
      const created = await startTask(client, name, {});
      const failed = await pollTask(client, created.taskId, (t) => t.status !== 'working');
      assert.equal(failed.status, 'failed');
      const result = await client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
      assert.equal(result.isError, true);
      // the run's failure message, sealed in Temporal (docs/operations.md, "Failures"), read in clear
      assert.match(JSON.stringify(result.content), /step 1 \(Boom\) failed: Error: kaput/);
    } finally {
      await client.close();
    }
  });

  it('cancels the run on tasks/cancel', async () => {
    const name = toolName('long_nap');
    await publishTool({ name: 'long-nap', steps: [{ name: 'Nap', type: 'delay', duration: '10m' }] }, name);
    const client = await connect(fg, 'workflows', token);
    try {
      const created = await startTask(client, name, {});
      const cancelled = await client.experimental.tasks.cancelTask(created.taskId);
      assert.equal(cancelled.status, 'cancelled');
      const handle = fg.client.workflow.getHandle(created.taskId);
      await handle.result().catch(() => undefined);
      assert.equal((await handle.describe()).status.name, 'CANCELLED');
      assert.equal((await client.experimental.tasks.getTask(created.taskId)).status, 'cancelled');
      await assert.rejects(client.experimental.tasks.cancelTask(created.taskId), (error: { code?: number }) => error.code === -32602);
    } finally {
      await client.close();
    }
  });

  it('shows a run paused on an approval as input_required with its message, and completes it after the approval', async () => {
    const name = toolName('approve');
    const p = await publishTool({
      name: 'approve',
      steps: [
        { name: 'Ask', type: 'approval', approvers: ['ann@example.com'], message: 'Pay invoice {{inputs.invoice}}?' },
        { name: 'Paid', type: 'template', template: 'paid {{inputs.invoice}}' },
      ],
    }, name);
    const client = await connect(fg, 'workflows', token);
    try {
      const created = await startTask(client, name, { invoice: 'INV-9' });
      const waiting = await pollTask(client, created.taskId, (t) => t.status === 'input_required');
      assert.equal(waiting.statusMessage, 'Pay invoice INV-9?');
      const decided = await fg.request(`/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${created.taskId}/approval`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decision: 'approve', approver: 'ann@example.com' }),
      });
      assert.equal(decided.status, 200);
      await pollTask(client, created.taskId, (t) => t.status === 'completed');
      const result = await client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
      assert.equal((result.structuredContent as { output: unknown }).output, 'paid INV-9');
    } finally {
      await client.close();
    }
  });

  it("answers another organization's task id exactly like a missing one", async () => {
    const name = toolName('mine');
    await publishTool({ name: 'mine', steps: [{ name: 'Nap', type: 'delay', duration: '1s' }] }, name);
    const client = await connect(fg, 'workflows', token);
    let taskId: string;
    try {
      taskId = (await startTask(client, name, {})).taskId;
    } finally {
      await client.close();
    }
    const other = await createOrg(fg);
    const otherToken = (await runtimeToken(fg, other.adminToken)).token;
    // the other organization has no workflow tools: no /tools/workflows either
    assert.equal((await rpc(fg, 'workflows', otherToken, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status, 404);
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      const theirs = await rpc(fg, 'mcp', otherToken, { jsonrpc: '2.0', id: 2, method, params: { taskId } });
      const missing = await rpc(fg, 'mcp', otherToken, { jsonrpc: '2.0', id: 2, method, params: { taskId: randomUUID() } });
      assert.equal(theirs.body?.error?.code, -32602, `${method}: ${theirs.text}`);
      assert.deepEqual({ ...theirs.body?.error, message: theirs.body?.error?.message.replace(taskId, 'X') },
        { ...missing.body?.error, message: missing.body?.error?.message.replace(/[0-9a-f-]{36}/, 'X') });
    }
    const list = await rpc(fg, 'mcp', otherToken, { jsonrpc: '2.0', id: 3, method: 'tasks/list' });
    assert.deepEqual(list.body?.result, { tasks: [] });
    // the owner still sees it
    const mine = await rpc(fg, 'mcp', token, { jsonrpc: '2.0', id: 4, method: 'tasks/get', params: { taskId } });
    assert.equal((mine.body?.result as { taskId?: string } | undefined)?.taskId, taskId);
  });

  it('answers -32601 to a task-augmented call on a tool without task support', async () => {
    const answer = await rpc(fg, 'mcp', token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'listServers', arguments: {}, task: { ttl: 1000 } } });
    assert.equal(answer.body?.error?.code, -32601);
  });

  it('keeps a task when the gateway process that created it is killed: another gateway answers for it', async () => {
    const name = toolName('orphan');
    await publishTool({ name: 'orphan', steps: [{ name: 'Nap', type: 'delay', duration: '3s' }, { name: 'Done', type: 'template', template: 'still here' }] }, name);
    // a second gateway process on the same registry, key and task queue (a replica), killed once it took the call
    const taskId = await withKilledReplica(fg, {}, async (url) => {
      const replica = await connectMcp(url, 'workflows', token);
      try {
        return (await startTask(replica, name, {})).taskId;
      } finally {
        await replica.close();
      }
    });
    const client = await connect(fg, 'workflows', token);
    try {
      assert.equal((await pollTask(client, taskId, (t) => t.status === 'completed')).taskId, taskId);
      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      assert.equal((result.structuredContent as { output: unknown }).output, 'still here');
    } finally {
      await client.close();
    }
  });

  // last: it replaces the suite's flowgate with a restarted one
  it('keeps a task across a gateway restart: a second gateway process polls it to completion', async () => {
    const name = toolName('survivor');
    await publishTool({ name: 'survivor', steps: [{ name: 'Nap', type: 'delay', duration: '4s' }, { name: 'Done', type: 'template', template: 'survived' }] }, name);
    const first = await connect(fg, 'workflows', token);
    let taskId: string;
    try {
      taskId = (await startTask(first, name, {})).taskId;
    } finally {
      await first.close();
    }
    await fg.stop(true);
    fg = await startTestFlowgate({}, { restartOf: fg });
    const second = await connect(fg, 'workflows', token);
    try {
      const done = await pollTask(second, taskId, (t) => t.status === 'completed');
      assert.equal(done.taskId, taskId);
      const result = await second.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      assert.equal((result.structuredContent as { output: unknown }).output, 'survived');
    } finally {
      await second.close();
    }
  });
});
