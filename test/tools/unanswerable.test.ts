/**
 * Calls that cannot be answered (issue 46, item 4): a plain call of a workflow tool whose workflow
 * waits on an approval, from a client that cannot be asked for it — any plain 2025-11-25 call, a
 * 2026-07-28 call without elicitation — is refused at once, before its run starts, with how to call
 * it; a run that waits on one all the same (an earlier call's, named by the same idempotency key) is
 * handed over at once. A client with elicitation still gets the approval asked, and a task still
 * runs. The official SDK clients (v1 for 2025-11-25, v2 pinned to 2026-07-28), a real gateway and a
 * real Temporal dev server.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { DEFAULT_ORG_ID } from '../../src/registry';
import { runIdFor } from '../../src/runs/run-service';
import { eventually } from '../support/eventually';
import { publishWorkflow, type Published, type TestFlowgate } from '../support/flowgate';
import { connectMcp, pollTask } from './mcp-tasks-support';
import { rpc, runtimeToken, startToolFlowgate } from './support';

const V2026 = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
/** Well below the 5 minutes a plain call waited for such a run before. */
const ANSWER_WITHIN_MS = 10_000;
/** What the tests read of a workflow tool's result value, and of a run handed over. */
const Output = z.looseObject({ output: z.string(), runId: z.string() });
const HandedOver = z.looseObject({
  runId: z.string(), workflowId: z.string().optional(), status: z.string(), error: z.string(),
  waitingOn: z.object({ kind: z.string(), stepIndex: z.number(), message: z.string() }), follow: z.object({ taskId: z.string(), approvals: z.string() }),
});
const RpcBody = z.object({
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
});
type RpcBody = z.infer<typeof RpcBody>;
const ProtocolFailure = z.looseObject({ code: z.number(), message: z.string(), data: z.looseObject({ requiredCapabilities: z.unknown() }).optional() });
const ModernTask = z.looseObject({
  taskId: z.string(), status: z.string(), inputRequests: z.record(z.string(), z.unknown()).optional(),
  result: z.looseObject({ structuredContent: Output }).optional(),
});

const sign = (steps: Record<string, unknown>[] = [{ name: 'Ask', type: 'approval', approvers: ['ann@example.com'], message: 'Sign {{inputs.doc}}?' }]): Record<string, unknown> => ({
  name: 'sign', steps: [...steps, { name: 'Done', type: 'template', template: 'signed {{inputs.doc}}' }],
});

describe('calls that cannot be answered: refused before their run starts, or handed over at once', function () {
  this.timeout(120_000);
  let fg: TestFlowgate;
  let token: string;

  before(async () => {
    fg = await startToolFlowgate();
    ({ token } = await runtimeToken(fg));
  });
  after(async () => {
    await fg?.stop();
  });

  async function publishTool(definition: Record<string, unknown>): Promise<{ name: string; published: Published }> {
    const name = `${String(definition.name)}_${randomUUID().slice(0, 8)}`;
    const published = await publishWorkflow(fg, { ...definition, name: `${String(definition.name)}-${randomUUID()}` }, { tool: { name, description: `tool ${name}` } });
    return { name, published };
  }

  /** The SDK v2 client pinned to 2026-07-28 on /tools/workflows, declaring `capabilities`. */
  async function modernClient(capabilities: Record<string, unknown>): Promise<ModernClient> {
    const client = new ModernClient({ name: 'flowgate-unanswerable-test', version: '1.0.0' }, { capabilities, versionNegotiation: { mode: { pin: V2026 } } });
    await client.connect(new ModernTransport(new URL(`${fg.url}/tools/workflows`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    return client;
  }

  /** A 2026 request on the wire, as the SDK's transport sends it; `headers` adds some (an Idempotency-Key). */
  async function send2026(method: string, params: Record<string, unknown>, capabilities: Record<string, unknown>, name?: string, headers: Record<string, string> = {}): Promise<{ status: number; body: RpcBody }> {
    const response = await fetch(`${fg.url}/tools/workflows`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': V2026, 'Mcp-Method': method,
        ...(name === undefined ? {} : { 'Mcp-Name': name }), ...headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0', id: randomUUID(), method,
        params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': V2026, 'io.modelcontextprotocol/clientCapabilities': capabilities, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } } },
      }),
    });
    return { status: response.status, body: RpcBody.parse(await response.json()) };
  }

  /** The ids of the trigger's runs, as Temporal's visibility lists them. */
  async function runsOf(triggerId: string): Promise<string[]> {
    const ids: string[] = [];
    for await (const execution of fg.client.workflow.list({ query: `FlowgateTriggerId = '${triggerId}'` })) ids.push(execution.workflowId);
    return ids.sort();
  }

  /**
   * No refused call left a run: the runs its idempotency keys would have named do not exist, and
   * once visibility lists the runs `expected` started afterwards, it lists nothing else.
   */
  async function noRunLeft(published: Published, refusedKeys: string[], expected: string[]): Promise<void> {
    for (const key of refusedKeys) {
      await assert.rejects(fg.client.workflow.getHandle(runIdFor(DEFAULT_ORG_ID, published.triggerId, key)).describe(), WorkflowNotFoundError,
        `no run for the refused call with key ${key}`);
    }
    const listed = await eventually(async () => {
      const ids = await runsOf(published.triggerId);
      return expected.every((id) => ids.includes(id)) ? ids : undefined;
    }, 'the expected runs to show in visibility');
    assert.deepEqual(listed, [...expected].sort(), 'no other run of the trigger');
  }

  it('2025-11-25: refuses a plain call at once (-32601: call it as a task) and starts no run; tools/list says taskSupport "required"; a task with elicitation still runs', async () => {
    const { name, published } = await publishTool(sign());
    const nested = await publishTool(sign([{ name: 'Maybe', type: 'branch', cases: [{ if: 'inputs.big', steps: [{ name: 'Ask', type: 'approval', approvers: ['ann@example.com'] }] }] }]));
    const plain = await publishTool(sign([]));
    const key = `k-${randomUUID()}`;
    const client = await connectMcp(fg.url, 'workflows', token);
    try {
      // the server refuses (the SDK has not listed the tools, so it sends the call)
      await assert.rejects(
        client.callTool({ name, arguments: { doc: 'D-1' }, _meta: { idempotencyKey: key } }, CallToolResultSchema, { timeout: ANSWER_WITHIN_MS }),
        (e: unknown) => e instanceof McpError && e.code === -32601 && /waits on an approval \(step "Ask"\).*no run was started.*as an MCP task/.test(e.message),
      );
      await assert.rejects(client.callTool({ name: nested.name, arguments: { doc: 'D-1' } }, CallToolResultSchema, { timeout: ANSWER_WITHIN_MS }),
        (e: unknown) => e instanceof McpError && e.code === -32601, 'an approval in a branch that may not be taken counts');
      const { tools } = await client.listTools();
      const support = (tool: string): string | undefined => tools.find((t) => t.name === tool)?.execution?.taskSupport;
      assert.deepEqual([support(name), support(nested.name), support(plain.name)], ['required', 'required', 'optional']);
      // having listed the tools, the official SDK itself refuses a plain call of a tool that requires a task
      await assert.rejects(client.callTool({ name, arguments: { doc: 'D-1' } }), (e: unknown) => e instanceof McpError && /requires task-based execution/.test(e.message));
      const ran = CallToolResultSchema.parse(await client.callTool({ name: plain.name, arguments: { doc: 'D-0' } }));
      assert.equal(Output.parse(ran.structuredContent).output, 'signed D-0', 'a workflow without an approval runs plainly as before');
    } finally {
      await client.close();
    }

    // a client with elicitation calls it as a task: the approval is asked through elicitation, and the run finishes
    const asked: string[] = [];
    const approver = await connectMcp(fg.url, 'workflows', token, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { decision: 'approve' } };
    });
    let taskId = '';
    let result: z.infer<typeof CallToolResultSchema> | undefined;
    try {
      for await (const message of approver.experimental.tasks.callToolStream({ name, arguments: { doc: 'D-2' } }, CallToolResultSchema, { task: {} })) {
        if (message.type === 'taskCreated') taskId = message.task.taskId;
        if (message.type === 'result') result = CallToolResultSchema.parse(message.result);
        if (message.type === 'error') throw message.error;
      }
    } finally {
      await approver.close();
    }
    assert.deepEqual(asked, ['Sign D-2?']);
    assert.equal(result?.isError, false, JSON.stringify(result));
    assert.equal(Output.parse(result.structuredContent).output, 'signed D-2');
    await noRunLeft(published, [key], [taskId]);
    assert.deepEqual(await runsOf(nested.published.triggerId), [], 'the nested tool\'s refused call started no run');
  });

  it('2026-07-28: refuses a call without elicitation at once (-32021) and starts no run; with elicitation the approval is asked; as a task it runs', async () => {
    const { name, published } = await publishTool(sign());
    const key = `k-${randomUUID()}`;
    const mute = await modernClient({});
    try {
      await assert.rejects(mute.callTool({ name, arguments: { doc: 'E-1' } }, { timeout: ANSWER_WITHIN_MS }), (e: unknown) => {
        const error = ProtocolFailure.parse(e);
        return error.code === -32021 && /no run was started/.test(error.message) && JSON.stringify(error.data?.requiredCapabilities) === '{"elicitation":{}}';
      });
    } finally {
      await mute.close();
    }
    // on the wire, with an idempotency key: HTTP 400, and the Tasks extension named as the other way
    const refused = await send2026('tools/call', { name, arguments: { doc: 'E-1' } }, {}, name, { 'Idempotency-Key': key });
    assert.deepEqual([refused.status, refused.body.error?.code], [400, -32021], JSON.stringify(refused.body));
    assert.deepEqual(refused.body.error?.data, { requiredCapabilities: { elicitation: {} }, orCapabilities: { extensions: { [TASKS]: {} } } });

    // a client that declares elicitation gets the approval asked (input_required, answered by the SDK's handler)
    const asked: string[] = [];
    const eliciting = await modernClient({ elicitation: { form: {} } });
    eliciting.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { decision: 'approve' } };
    });
    let elicitedRun: string;
    try {
      const result = await eliciting.callTool({ name, arguments: { doc: 'E-2' } });
      assert.equal(result.isError, false, JSON.stringify(result));
      const value = Output.parse(result.structuredContent);
      assert.equal(value.output, 'signed E-2');
      elicitedRun = value.runId;
    } finally {
      await eliciting.close();
    }
    assert.deepEqual(asked, ['Sign E-2?']);

    // a client of the Tasks extension gets a task; the approval is answered through tasks/update
    const created = await send2026('tools/call', { name, arguments: { doc: 'E-3' } }, { extensions: { [TASKS]: {} } }, name);
    assert.equal(created.body.result?.resultType, 'task', JSON.stringify(created.body));
    const taskId = String(created.body.result?.taskId);
    // (SDK 2.4.0 has no runtime for the extension's task methods: they go on the wire, as the SDK's transport would send them)
    const tasks = { extensions: { [TASKS]: {} } };
    const get = async (): Promise<z.infer<typeof ModernTask>> => ModernTask.parse((await send2026('tasks/get', { taskId }, tasks, taskId)).body.result);
    const waiting = await eventually(async () => { const t = await get(); return t.status === 'input_required' ? t : undefined; }, 'the task to wait on its approval');
    const [input] = Object.keys(waiting.inputRequests ?? {});
    const updated = await send2026('tasks/update', { taskId, inputResponses: { [input!]: { action: 'accept', content: { decision: 'approve' } } } }, tasks, taskId);
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    const done = await eventually(async () => { const t = await get(); return t.status === 'completed' ? t : undefined; }, 'the task to complete');
    assert.equal(done.result?.structuredContent.output, 'signed E-3');
    await noRunLeft(published, [key], [elicitedRun, taskId]);
  });

  it('hands a run that waits on an approval all the same over at once, in both eras: a tool error naming the run to follow, which can still be decided', async () => {
    // an earlier task's run, named by an idempotency key, waits on its approval; the workflow is then published again without one
    const { name, published } = await publishTool(sign());
    const key = `k-${randomUUID()}`;
    const started = await rpc(fg, 'workflows', token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { doc: 'F-1' }, task: {}, _meta: { idempotencyKey: key } } });
    const runId = z.object({ task: z.object({ taskId: z.string() }) }).parse(started.body?.result).task.taskId;
    assert.equal(runId, runIdFor(DEFAULT_ORG_ID, published.triggerId, key));
    const client = await connectMcp(fg.url, 'workflows', token);
    try {
      await pollTask(client, runId, (t) => t.status === 'input_required');
      const updated = await fg.admin('PUT', `/api/v1/workflows/${published.workflowId}`, { ...sign([]), name: `sign-${randomUUID()}` });
      assert.equal(updated.status, 200, JSON.stringify(updated.body));
      assert.equal((await fg.admin('POST', `/api/v1/workflows/${published.workflowId}/publish`)).status, 201);

      // 2025: the plain call with the same key answers at once with the run to follow
      const handed = CallToolResultSchema.parse(await client.callTool({ name, arguments: { doc: 'F-1' }, _meta: { idempotencyKey: key } }, CallToolResultSchema, { timeout: ANSWER_WITHIN_MS }));
      assert.equal(handed.isError, true, JSON.stringify(handed));
      const value = HandedOver.parse(handed.structuredContent);
      assert.deepEqual([value.runId, value.workflowId, value.status, value.follow], [runId, published.workflowId, 'PAUSED', { taskId: runId, approvals: `/api/v1/runs/${runId}/approvals` }]);
      assert.deepEqual(value.waitingOn, { kind: 'approval', stepIndex: 1, message: 'Sign F-1?' });
      assert.match(value.error, new RegExp(`goes on as task ${runId}.*POST /ext/webhook/\\{apiKey\\}/runs/${published.workflowId}/${runId}/approval`));

      // 2026 without elicitation: the same, not -32021 with the run left behind unnamed
      const modern = await send2026('tools/call', { name, arguments: { doc: 'F-1' } }, {}, name, { 'Idempotency-Key': key });
      assert.equal(modern.status, 200, JSON.stringify(modern.body));
      assert.deepEqual([modern.body.result?.resultType, modern.body.result?.isError], ['complete', true]);
      const modernValue = HandedOver.parse(modern.body.result?.structuredContent);
      assert.deepEqual([modernValue.runId, modernValue.follow.taskId], [runId, runId]);

      // the run handed over is the caller's task, and can be decided
      assert.equal((await client.experimental.tasks.getTask(runId)).status, 'input_required');
      const decided = await fg.request(`/ext/webhook/${published.apiKey}/runs/${published.workflowId}/${runId}/approval`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decision: 'approve' }),
      });
      assert.equal(decided.status, 200);
      await pollTask(client, runId, (t) => t.status === 'completed');
      const result = await client.experimental.tasks.getTaskResult(runId, CallToolResultSchema);
      assert.equal(Output.parse(result.structuredContent).output, 'signed F-1');
    } finally {
      await client.close();
    }
  });
});
