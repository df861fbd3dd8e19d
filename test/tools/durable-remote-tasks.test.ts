/**
 * Durable calls to remote MCP servers that answer with tasks of their own (issue 50), against a
 * real Temporal and a whole flowgate: the durable attempt follows the remote's task, of the 2026
 * Tasks extension (a remote written by hand, test/support/scripted-remote-mcp.ts) or of the
 * 2025-11-25 form (the official SDK's experimental tasks, test/support/task-remote-mcp.ts), so the
 * caller sees one task either way; a poll that fails is retried by following the same task, not by
 * calling again; and tasks/cancel on the durable call cancels the remote's task, which the remote
 * records with its task id.
 */
import assert from 'node:assert/strict';
import { eventually } from '../support/eventually';
import type { TestFlowgate } from '../support/flowgate';
import { startScriptedRemote, type ScriptedRemote } from '../support/scripted-remote-mcp';
import { startTaskRemote, type TaskRemote } from '../support/task-remote-mcp';
import { asAdmin, createServer } from './custom-support';
import { callTool, modernRpc, runtimeToken, startToolFlowgate } from './support';

const DURABLE = { maxAttempts: 3, initialIntervalSeconds: 0.2, attemptTimeoutSeconds: 10, timeoutSeconds: 300 };
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

interface AuditRecord {
  action: string;
  target: { id: string };
  details: Record<string, unknown>;
}

describe('durable calls following a remote MCP server\'s own tasks', () => {
  let fg: TestFlowgate;
  let token: string;
  let modern: ScriptedRemote;
  let legacy: TaskRemote;
  let modernServer: string;
  let legacyServer: string;

  before(async () => {
    modern = await startScriptedRemote([
      { name: 'report', inputSchema: { type: 'object', properties: { topic: { type: 'string' } } }, taskMs: 1200,
        answer: (params) => ({ result: { content: [{ type: 'text', text: 'ready' }], structuredContent: { report: 'ready', for: params.arguments } } }) },
      { name: 'forever', inputSchema: { type: 'object' }, taskMs: 600_000 },
    ]);
    legacy = await startTaskRemote();
    fg = await startToolFlowgate();
    ({ token } = await runtimeToken(fg));
    modernServer = (await createServer(fg, fg.adminToken, { url: modern.url, durable: DURABLE })).id;
    legacyServer = (await createServer(fg, fg.adminToken, { url: legacy.url, durable: DURABLE })).id;
  });

  after(async () => {
    await fg?.stop();
    await modern?.close();
    await legacy?.close();
  });

  /** A task-augmented call from a 2026 client: the durable call's task id. */
  async function startTask(server: string, tool: string, args: Record<string, unknown>): Promise<string> {
    const called = await modernRpc(fg, server, token, 'tools/call', { name: tool, arguments: args }, tool);
    const task = called.body?.result as { resultType?: string; taskId?: string } | undefined;
    assert.equal(task?.resultType, 'task', called.text);
    return task?.taskId ?? '';
  }

  /** tasks/get until the task is no longer working. */
  const ended = (server: string, taskId: string, timeoutMs = 60_000) => eventually(async () => {
    const got = await modernRpc(fg, server, token, 'tasks/get', { taskId }, taskId);
    const result = got.body?.result as { status: string; result?: { structuredContent?: unknown; isError?: boolean } } | undefined;
    return result && result.status !== 'working' ? result : undefined;
  }, `task ${taskId} to end`, timeoutMs, 250);

  /** The durable call's audit records, oldest first, once one of them is `last`. */
  const auditOf = (taskId: string, last: string) => eventually(async () => {
    const page = await asAdmin<{ records: AuditRecord[] }>(fg, fg.adminToken, 'GET', '/api/v1/audit?limit=200');
    const mine = page.body.records.filter((r) => r.target?.id === taskId).reverse();
    return mine.some((r) => r.action === last) ? mine : undefined;
  }, `the audit records of ${taskId}`);

  it('a 2026 remote that answers with a task (Tasks extension) is followed: one task for the caller, one tools/call at the remote, the result through tasks/get', async () => {
    const before = modern.calls().length;
    const taskId = await startTask(modernServer, 'report', { topic: 'q3' });
    const done = await ended(modernServer, taskId);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.result?.structuredContent, { report: 'ready', for: { topic: 'q3' } });
    const calls = modern.calls().slice(before);
    assert.equal(calls.length, 1, 'the remote was called once');
    const meta = calls[0]?.params._meta as Record<string, unknown>;
    assert.ok((meta['io.modelcontextprotocol/clientCapabilities'] as { extensions?: Record<string, unknown> }).extensions?.[TASKS_EXTENSION], 'the call declared the Tasks extension');
    assert.equal(meta['io.flowgate/idempotencyKey'], `flowgate-${taskId}`);
    const audit = await auditOf(taskId, 'durable_call.completed');
    const remoteTaskId = audit.find((r) => r.action === 'durable_call.upstream_task')?.details.upstreamTaskId;
    assert.ok(typeof remoteTaskId === 'string' && modern.tasks.get(remoteTaskId)?.status === 'completed', JSON.stringify(audit));
    const polls = modern.requests.filter((r) => r.rpcMethod === 'tasks/get' && r.params.taskId === remoteTaskId);
    assert.ok(polls.length >= 1, 'the remote\'s task was polled');
    assert.deepEqual(audit.map((r) => [r.action, r.details.attempt ?? null]), [
      ['durable_call.started', null], ['durable_call.upstream_task', 1], ['durable_call.completed', 1],
    ]);
  });

  it('a 2025 remote (the official SDK) that runs the tool as a task is followed through tasks/get and tasks/result; a plain call answers inline', async () => {
    const created = legacy.created.size;
    const answered = await callTool(fg, legacyServer, token, 'slow', { ms: 1200, tag: 'a' });
    assert.deepEqual(answered.body?.result?.structuredContent, { tag: 'a', ms: 1200 }, answered.text);
    assert.equal(legacy.created.size, created + 1, 'the remote ran the call as one task');
    const call = legacy.requests.filter((r) => r.rpcMethod === 'tools/call').at(-1);
    assert.equal(typeof (call?.params.task as { ttl?: unknown } | undefined)?.ttl, 'number', 'the call asked for a task');
    const remoteTaskId = [...legacy.created.keys()].at(-1);
    assert.ok(legacy.requests.some((r) => r.rpcMethod === 'tasks/result' && r.params.taskId === remoteTaskId), 'its result was read with tasks/result');
    // a tool the remote lists without task support is called as before
    const plain = await callTool(fg, legacyServer, token, 'slow_plain', { ms: 10, tag: 'b' });
    assert.deepEqual(plain.body?.result?.structuredContent, { tag: 'b', ms: 10 }, plain.text);
    assert.equal(legacy.requests.filter((r) => r.rpcMethod === 'tools/call').at(-1)?.params.task, undefined);
  });

  it('a poll that fails is retried by following the same task: the remote saw one tools/call', async () => {
    let polls = 0;
    modern.override = (method) => (method === 'tasks/get' && ++polls === 3 ? { error: { code: -32603, message: 'busy' }, status: 503 } : undefined);
    try {
      const before = modern.calls().length;
      const taskId = await startTask(modernServer, 'report', { topic: 'q4' });
      const done = await ended(modernServer, taskId);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(modern.calls().length - before, 1, 'not called again');
      const audit = await auditOf(taskId, 'durable_call.completed');
      assert.deepEqual(audit.map((r) => [r.action, r.details.attempt ?? null, r.details.reason ?? r.details.resumed ?? null]), [
        ['durable_call.started', null, null], ['durable_call.upstream_task', 1, null], ['durable_call.retried', 1, 'http_5xx'],
        ['durable_call.upstream_task', 2, true], ['durable_call.completed', 2, null],
      ]);
      const ids = new Set(audit.filter((r) => r.action === 'durable_call.upstream_task').map((r) => r.details.upstreamTaskId));
      assert.equal(ids.size, 1, 'the second attempt followed the first one\'s task');
    } finally {
      delete modern.override;
    }
  });

  it('tasks/cancel on a durable call cancels the remote\'s task (2025, the official SDK): the remote records tasks/cancel with its task id', async () => {
    const taskId = await startTask(legacyServer, 'slow', { ms: 600_000, tag: 'never' });
    const remoteTaskId = await eventually(async () => [...legacy.created].find(([, key]) => key === `flowgate-${taskId}`)?.[0], 'the remote to create its task');
    const cancelled = await modernRpc(fg, legacyServer, token, 'tasks/cancel', { taskId }, taskId);
    assert.equal(cancelled.status, 200, cancelled.text);
    const got = await ended(legacyServer, taskId);
    assert.equal(got.status, 'cancelled');
    await eventually(async () => (legacy.cancelled.includes(remoteTaskId) ? true : undefined), 'the remote to cancel its task', 30_000);
    assert.ok(legacy.requests.some((r) => r.rpcMethod === 'tasks/cancel' && r.params.taskId === remoteTaskId));
    const audit = await auditOf(taskId, 'durable_call.cancelled');
    assert.ok(audit.some((r) => r.action === 'durable_call.upstream_task' && r.details.upstreamTaskId === remoteTaskId));
  });

  it('tasks/cancel between two attempts (none runs) still cancels the remote\'s task the first attempt was handed', async () => {
    // a server whose second attempt comes 60 s after the first: the cancel lands while no attempt runs
    const paced = (await createServer(fg, fg.adminToken, { url: modern.url, durable: { ...DURABLE, initialIntervalSeconds: 60 } })).id;
    modern.override = (method) => (method === 'tasks/get' ? { error: { code: -32603, message: 'busy' }, status: 503 } : undefined);
    try {
      const taskId = await startTask(paced, 'forever', {});
      const audit = await auditOf(taskId, 'durable_call.retried');
      const remoteTaskId = String(audit.find((r) => r.action === 'durable_call.upstream_task')?.details.upstreamTaskId);
      assert.ok(!modern.cancelled.includes(remoteTaskId), 'the failed attempt itself cancelled nothing');
      const cancelled = await modernRpc(fg, paced, token, 'tasks/cancel', { taskId }, taskId);
      assert.equal(cancelled.status, 200, cancelled.text);
      await eventually(async () => (modern.cancelled.includes(remoteTaskId) ? true : undefined), 'the remote to cancel its task', 30_000);
      assert.equal(modern.tasks.get(remoteTaskId)?.status, 'cancelled');
      assert.equal((await ended(paced, taskId)).status, 'cancelled');
      const after = await auditOf(taskId, 'durable_call.cancelled');
      assert.ok(after.some((r) => r.action === 'durable_call.cancelled' && r.details.upstreamTaskId === remoteTaskId), JSON.stringify(after.map((r) => r.action)));
    } finally {
      delete modern.override;
    }
  });

  it('tasks/cancel on a durable call cancels the remote\'s task (2026, Tasks extension)', async () => {
    const taskId = await startTask(modernServer, 'forever', {});
    const audit = await auditOf(taskId, 'durable_call.upstream_task');
    const remoteTaskId = String(audit.find((r) => r.action === 'durable_call.upstream_task')?.details.upstreamTaskId);
    await modernRpc(fg, modernServer, token, 'tasks/cancel', { taskId }, taskId);
    await eventually(async () => (modern.cancelled.includes(remoteTaskId) ? true : undefined), 'the remote to cancel its task', 30_000);
    assert.equal(modern.tasks.get(remoteTaskId)?.status, 'cancelled');
    assert.equal((await ended(modernServer, taskId)).status, 'cancelled');
  });
});
