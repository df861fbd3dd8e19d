/**
 * MCP Tasks beyond the workflows server's basics (test/tools/workflow-tools.test.ts): agent_invoke
 * as a task, approvals answered through the task (elicitation on the tasks/result stream),
 * `notifications/tasks/status`, and tasks/list paging. The official SDK client throughout, against
 * a real gateway, a real Temporal dev server and a fake OpenAI-compatible model on loopback.
 */
import assert from 'node:assert/strict';
import { DEFAULT_ORG_ID } from '../../src/registry';
import { randomUUID } from 'node:crypto';
import {
  CallToolResultSchema, TaskStatusNotificationSchema, type CallToolResult, type ElicitRequest, type TaskStatusNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm';
import { asAdminOf, publishWorkflow, type Published, type TestFlowgate } from '../support/flowgate';
import { connectMcp as connect, pollTask, startTask, withKilledReplica } from './mcp-tasks-support';
import { callTool, createOrg, rpc, runtimeToken, startToolFlowgate } from './support';

const PAGE_SIZE = 2;
const LLM_ENV = (llm: FakeLlm): Record<string, string> => ({ FLOWGATE_LLM_BASE_URL: llm.baseUrl, FLOWGATE_LLM_MODEL: 'fake-model', FLOWGATE_LLM_API_KEY: 'sk-test' });

describe('MCP Tasks: agent_invoke, approvals through the task, status notifications, tasks/list paging', function () {
  this.timeout(120_000);
  let fg: TestFlowgate;
  let llm: FakeLlm;
  let token: string;
  let apiKeyId: string;

  before(async () => {
    llm = await startFakeLlm();
    fg = await startToolFlowgate({ ...LLM_ENV(llm), FLOWGATE_TASKS_PAGE_SIZE: String(PAGE_SIZE) });
    ({ token, apiKeyId } = await runtimeToken(fg));
  });
  after(async () => {
    await fg?.stop();
    await llm?.close();
  });
  beforeEach(() => {
    llm.script.length = 0;
    llm.fallback = undefined;
  });

  async function createAgent(name: string): Promise<string> {
    const created = await callTool(fg, 'agent-management', token, 'agent_create', { name, instructions: 'Answer briefly.' });
    return String((created.body?.result?.structuredContent as { id: string }).id);
  }

  async function publishTool(definition: Record<string, unknown>, on: TestFlowgate = fg): Promise<{ name: string; published: Published }> {
    const name = `${String(definition.name)}_${randomUUID().slice(0, 8)}`;
    const published = await publishWorkflow(on, { ...definition, name: `${String(definition.name)}-${randomUUID()}` }, { tool: { name, description: `tool ${name}` } });
    return { name, published };
  }

  it('advertises agent_invoke as task-capable, runs it as a task whose id is the invocation id, and answers the agent\'s answer', async () => {
    const agentId = await createAgent('tasked');
    llm.script.push({ delayMs: 1500, then: { content: 'Paris.' } });
    const client = await connect(fg.url, 'agent-management', token);
    try {
      assert.ok(client.getServerCapabilities()?.tasks?.requests?.tools?.call, 'agent-management advertises task-augmented tools/call');
      const { tools } = await client.listTools();
      assert.equal(tools.find((t) => t.name === 'agent_invoke')?.execution?.taskSupport, 'optional');
      assert.equal(tools.find((t) => t.name === 'agent_list')?.execution, undefined, 'other tools are not task-capable');

      const created = await startTask(client, 'agent_invoke', { agentId, message: 'Capital of France?' });
      assert.equal(created.status, 'working');
      assert.match(created.taskId, /^inv_/);
      const description = await fg.client.workflow.getHandle(created.taskId).describe();
      assert.equal(description.type, 'invokeAgent', 'the task id is the invocation (workflow) id');

      const done = await pollTask(client, created.taskId, (t) => t.status === 'completed');
      assert.equal(done.taskId, created.taskId);
      const result = await client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
      assert.equal(result.isError, false, JSON.stringify(result));
      const answer = result.structuredContent as { status: string; response: string; invocationId: string; agentId: string };
      assert.deepEqual([answer.status, answer.response, answer.invocationId, answer.agentId], ['COMPLETE', 'Paris.', created.taskId, agentId]);
      // the same invocation reads the same through agent_invocation_status
      const status = await client.callTool({ name: 'agent_invocation_status', arguments: { invocationId: created.taskId } }) as CallToolResult;
      assert.equal((status.structuredContent as { response: string }).response, 'Paris.');

      // a task-augmented call of a tool without task support, and bad arguments
      await assert.rejects(client.experimental.tasks.getTask('inv_missing'), (e: { code?: number }) => e.code === -32602);
      const plain = await rpc(fg, 'agent-management', token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'agent_list', arguments: {}, task: {} } });
      assert.equal(plain.body?.error?.code, -32601);
      const bad = await rpc(fg, 'agent-management', token, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'agent_invoke', arguments: { message: 'x' }, task: {} } });
      assert.equal(bad.body?.error?.code, -32000);
      assert.match(bad.body?.error?.message ?? '', /agentId/);
    } finally {
      await client.close();
    }
  });

  it('cancels the invocation workflow on tasks/cancel; another organization cannot see the task', async () => {
    const agentId = await createAgent('slow');
    llm.script.push({ delayMs: 60_000, then: { content: 'too late' } });
    const client = await connect(fg.url, 'agent-management', token);
    try {
      const created = await startTask(client, 'agent_invoke', { agentId, message: 'Take your time.' });
      const other = await createOrg(fg);
      const otherToken = (await runtimeToken(fg, other.adminToken)).token;
      const theirs = await rpc(fg, 'mcp', otherToken, { jsonrpc: '2.0', id: 1, method: 'tasks/cancel', params: { taskId: created.taskId } });
      assert.equal(theirs.body?.error?.code, -32602);
      assert.equal(theirs.body?.error?.message, `no task ${created.taskId}`);

      const cancelled = await client.experimental.tasks.cancelTask(created.taskId);
      assert.equal(cancelled.status, 'cancelled');
      const handle = fg.client.workflow.getHandle(created.taskId);
      await handle.result().catch(() => undefined);
      assert.equal((await handle.describe()).status.name, 'CANCELLED');
      assert.equal((await client.experimental.tasks.getTask(created.taskId)).status, 'cancelled');
      const result = await client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
      assert.equal(result.isError, true);
      assert.equal((result.structuredContent as { status: string }).status, 'CANCELLED');
    } finally {
      await client.close();
    }
  });

  it('finishes an agent task through this gateway after the gateway process that created it was killed', async () => {
    const agentId = await createAgent('orphaned');
    llm.script.push({ delayMs: 2000, then: { content: 'still answered' } });
    const taskId = await withKilledReplica(fg, LLM_ENV(llm), async (url) => {
      const replica = await connect(url, 'agent-management', token);
      try {
        return (await startTask(replica, 'agent_invoke', { agentId, message: 'Are you there?' })).taskId;
      } finally {
        await replica.close();
      }
    });
    const client = await connect(fg.url, 'agent-management', token);
    try {
      await pollTask(client, taskId, (t) => t.status === 'completed');
      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      assert.equal((result.structuredContent as { response: string }).response, 'still answered');
    } finally {
      await client.close();
    }
  });

  it('asks for an approval through the task (elicitation) and takes the answer as the token\'s API key\'s decision; status notifications arrive on the stream', async () => {
    const { name } = await publishTool({
      name: 'pay',
      steps: [
        { name: 'Ask', type: 'approval', approvers: ['ann@example.com', 'bob@example.com'], message: 'Pay invoice {{inputs.invoice}}?' },
        { name: 'Paid', type: 'template', template: 'paid {{inputs.invoice}}' },
      ],
    });
    const asked: ElicitRequest[] = [];
    const client = await connect(fg.url, 'workflows', token, async (request) => {
      asked.push(request);
      return { action: 'accept', content: { decision: 'approve', approver: 'bob@example.com', comment: 'fine' } };
    });
    const notes: TaskStatusNotification['params'][] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      notes.push(notification.params);
    });
    try {
      const seen: string[] = [];
      let result: CallToolResult | undefined;
      let taskId = '';
      for await (const message of client.experimental.tasks.callToolStream({ name, arguments: { invoice: 'INV-7' } }, CallToolResultSchema, { task: {} })) {
        if (message.type === 'taskCreated') taskId = message.task.taskId;
        if (message.type === 'taskStatus') seen.push(message.task.status);
        if (message.type === 'result') result = message.result as CallToolResult;
        if (message.type === 'error') throw message.error;
      }
      assert.ok(seen.includes('input_required'), `the SDK saw input_required: ${seen.join(', ')}`);
      assert.equal(asked.length, 1);
      assert.equal(asked[0]!.params.message, 'Pay invoice INV-7?');
      assert.equal((asked[0]!.params._meta?.['io.modelcontextprotocol/related-task'] as { taskId: string }).taskId, taskId);
      assert.ok(result, 'the stream ended with the result');
      assert.equal(result.isError, false, JSON.stringify(result));
      const value = result.structuredContent as { output: string; results: { stepIndex: number; result: string }[] };
      assert.equal(value.output, 'paid INV-7');
      const approval = JSON.parse(value.results.find((r) => r.stepIndex === 1)!.result) as { outcome: string; decisions: { approver: string; actor: string; via: string; comment?: string }[] };
      assert.equal(approval.outcome, 'approved');
      assert.deepEqual(approval.decisions.map((d) => [d.approver, d.actor, d.via, d.comment]), [['bob@example.com', `api-key:${apiKeyId}`, 'api', 'fine']]);
      // the stream told of the status changes while it waited
      assert.ok(notes.some((n) => n.taskId === taskId && n.status === 'completed'), JSON.stringify(notes));
      // the audit trail has the task's start as a tool call and the decision through the elicitation (never its comment)
      const decided = await fg.audit.list(DEFAULT_ORG_ID, { action: 'approval.decided', target: `run:${taskId}` }, 10);
      assert.deepEqual(decided.records.map((r) => [r.actor, r.credentialKind, r.details.via, r.details.approver, r.outcome]),
        [[`api-key:${apiKeyId}`, 'runtime_token', 'mcp', 'bob@example.com', 'success']]);
      const started = await fg.audit.list(DEFAULT_ORG_ID, { action: 'tool.called', target: `tool:workflows/${name}` }, 10);
      assert.deepEqual(started.records.map((r) => [r.details.task, r.outcome]), [[true, 'success']]);
      assert.ok(!JSON.stringify([decided, started]).includes('INV-7') && !JSON.stringify(decided).includes('fine'), 'no arguments, no comment');
    } finally {
      await client.close();
    }
  });

  it('ignores a declined elicitation and an answer from another organization; an answer POSTed to the gateway later decides', async () => {
    const { name } = await publishTool({
      name: 'gate',
      steps: [{ name: 'Ask', type: 'approval', approvers: ['ann@example.com'], message: 'Open the gate?' }, { name: 'Done', type: 'template', template: 'open' }],
    });
    const client = await connect(fg.url, 'workflows', token);
    try {
      const { taskId } = await startTask(client, name, {});
      await pollTask(client, taskId, (t) => t.status === 'input_required');
      // tasks/result as a stream: the elicitation request arrives on it; the client does not answer yet
      const controller = new AbortController();
      const stream = await fetch(`${fg.url}/tools/workflows`, {
        method: 'POST', signal: controller.signal,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tasks/result', params: { taskId } }),
      });
      assert.equal(stream.status, 200);
      assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
      const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      while (!text.includes('elicitation/create')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
      const request = JSON.parse(/data: (.*elicitation\/create.*)\n/.exec(text)![1]!) as { id: string; params: { requestedSchema: { properties: Record<string, { enum?: string[] }> } } };
      assert.deepEqual(request.params.requestedSchema.properties.approver?.enum, ['ann@example.com']);
      controller.abort();

      const answer = (result: unknown): Record<string, unknown> => ({ jsonrpc: '2.0', id: request.id, result });
      const declined = await rpc(fg, 'workflows', token, answer({ action: 'decline' }));
      assert.equal(declined.status, 202);
      assert.equal(declined.text, '', 'a response gets no answer');
      const refusedByClient = await rpc(fg, 'workflows', token, { jsonrpc: '2.0', id: request.id, error: { code: -32601, message: 'Method not found' } });
      assert.equal(refusedByClient.status, 202);
      const other = await createOrg(fg);
      const otherToken = (await runtimeToken(fg, other.adminToken)).token;
      assert.equal((await rpc(fg, 'mcp', otherToken, answer({ action: 'accept', content: { decision: 'approve' } }))).status, 202);
      assert.equal((await client.experimental.tasks.getTask(taskId)).status, 'input_required', 'neither decided');

      assert.equal((await rpc(fg, 'mcp', token, answer({ action: 'accept', content: { decision: 'reject', comment: 'not today' } }))).status, 202);
      const failed = await pollTask(client, taskId, (t) => t.status !== 'input_required' && t.status !== 'working');
      assert.equal(failed.status, 'failed');
      assert.match(failed.statusMessage ?? '', /rejected by api-key:.*not today/);
    } finally {
      await client.close();
    }
  });

  it('pages tasks/list with a cursor, newest first, without repeats', async () => {
    // An organization of its own: the other test files' tasks start and close meanwhile, and a
    // cursor is a position in visibility's order (a task started while paging shifts it; docs/mcp-tasks.md).
    const org = await createOrg(fg);
    const asOrg = asAdminOf(fg, org.adminToken);
    const { name } = await publishTool({ name: 'quick', steps: [{ name: 'Done', type: 'template', template: 'ok' }] }, asOrg);
    const client = await connect(fg.url, 'workflows', (await runtimeToken(fg, org.adminToken)).token);
    try {
      const mine: string[] = [];
      for (let i = 0; i < 5; i++) mine.push((await startTask(client, name, {})).taskId);
      // visibility orders open workflows first: a task that closes between two pages moves (docs/mcp-tasks.md says so)
      for (const id of mine) await pollTask(client, id, (t) => t.status === 'completed');
      // Visibility (what tasks/list reads) lags behind tasks/get: page once it shows all five closed.
      const settleBy = Date.now() + 30_000;
      for (;;) {
        const shown: { taskId: string; status: string }[] = [];
        let at: string | undefined;
        do {
          const page = await client.experimental.tasks.listTasks(at);
          shown.push(...page.tasks);
          at = page.nextCursor;
        } while (at);
        if (shown.filter((t) => t.status === 'completed').length >= mine.length) break;
        assert.ok(Date.now() < settleBy, `visibility shows ${JSON.stringify(shown)}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const listed: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await client.experimental.tasks.listTasks(cursor);
        assert.ok(page.tasks.length <= PAGE_SIZE, `a page holds at most ${PAGE_SIZE}: ${page.tasks.length}`);
        listed.push(...page.tasks.map((t) => t.taskId));
        cursor = page.nextCursor;
        pages++;
      } while (cursor && pages < 100);
      assert.equal(cursor, undefined, 'the last page has no cursor');
      assert.equal(new Set(listed).size, listed.length, 'no task on two pages');
      for (const id of mine) assert.ok(listed.includes(id), `${id} is listed`);
      assert.ok(pages >= 3);
      const bad = await rpc(fg, 'mcp', token, { jsonrpc: '2.0', id: 1, method: 'tasks/list', params: { cursor: 'not-a-cursor' } });
      assert.equal(bad.body?.error?.code, -32602);
    } finally {
      await client.close();
    }
  });
});
