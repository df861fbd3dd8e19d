/**
 * Following a remote MCP server's own task (src/tools/custom/remote-tasks.ts), through flowgate's
 * remote client, against remotes on loopback that run tasks: of the 2026 Tasks extension (written
 * by hand) and of the 2025-11-25 form (the official SDK). No Temporal: the hold a durable attempt
 * gives is played by the test.
 */
import assert from 'node:assert/strict';
import type { UpstreamTask } from '../../src/common/durable-call';
import { RemoteMcpClient, RemoteRpcError, type RemoteTarget } from '../../src/tools/custom/remote-mcp';
import { callFollowingTasks, TASKS_CAPABILITIES, upstreamTaskOf, type FollowOptions } from '../../src/tools/custom/remote-tasks';
import type { UpstreamTaskHold } from '../../src/tools/server';
import { eventually } from '../support/eventually';
import { startScriptedRemote, type ScriptedRemote } from '../support/scripted-remote-mcp';
import { startTaskRemote, type TaskRemote } from '../support/task-remote-mcp';

const target = (url: string): RemoteTarget => ({ url, credential: { headers: {}, query: {} }, allowPrivateNetwork: true });

/** The options a durable attempt's call at `url` gives, with a hold that records what it is told. */
function following(client: RemoteMcpClient, url: string, tool: string, args: Record<string, unknown>, hold: Partial<UpstreamTaskHold> = {}, signal = AbortSignal.timeout(20_000)) {
  const received: UpstreamTask[] = [];
  const to = target(url);
  const options: FollowOptions = {
    hold: { requestTimeoutMs: 5000, ttlMs: 60_000, received: async (task) => void received.push(task), abandoned: () => false, ...hold },
    signal,
    legacyTaskSupport: async () => tool === 'slow',
    call: (extra) => client.request(to, 'tools/call', { name: tool, arguments: args }, { forward: {}, signal, deadline: Date.now() + 5000, ...extra }),
    request: (method, params, requestSignal, deadline) => client.request(to, method, params, { forward: {}, signal: requestSignal, deadline, clientCapabilities: TASKS_CAPABILITIES }),
  };
  return { options, received };
}

describe('following a remote MCP server\'s own task', () => {
  let modern: ScriptedRemote;
  let legacy: TaskRemote;
  const client = new RemoteMcpClient();

  before(async () => {
    modern = await startScriptedRemote([
      { name: 'report', inputSchema: { type: 'object' }, taskMs: 300, answer: () => ({ result: { content: [{ type: 'text', text: 'ready' }], structuredContent: { report: 'ready' } } }) },
      { name: 'forever', inputSchema: { type: 'object' }, taskMs: 600_000 },
      { name: 'inline', inputSchema: { type: 'object' } },
    ]);
    legacy = await startTaskRemote();
  });
  after(async () => {
    await modern?.close();
    await legacy?.close();
  });

  it('reads a task answer of either era, and nothing else', () => {
    assert.deepEqual(upstreamTaskOf({ resultType: 'task', taskId: 't1', status: 'working', pollIntervalMs: 250 }), { taskId: 't1', era: 'modern', pollIntervalMs: 250 });
    assert.deepEqual(upstreamTaskOf({ task: { taskId: 't2', status: 'working', pollInterval: 1000 } }), { taskId: 't2', era: 'legacy', pollIntervalMs: 1000 });
    assert.equal(upstreamTaskOf({ resultType: 'complete', content: [] }), undefined);
    assert.equal(upstreamTaskOf({ task: { taskId: '' , status: 'working' } }), undefined);
  });

  it('a 2026 task: the hold is told of it, then it is polled to its inline result; a tool answered inline stays inline', async () => {
    const { options, received } = following(client, modern.url, 'report', {});
    const result = await callFollowingTasks(options);
    assert.deepEqual(result.structuredContent, { report: 'ready' });
    assert.equal(received.length, 1);
    assert.equal(modern.tasks.get(received[0]!.taskId)?.status, 'completed');
    const inline = following(client, modern.url, 'inline', { a: 1 });
    assert.deepEqual((await callFollowingTasks(inline.options)).structuredContent, { echoed: { a: 1 } });
    assert.equal(inline.received.length, 0);
  });

  it('a 2025 task (official SDK): asked for only on a tool listed with task support, followed through tasks/get and tasks/result', async () => {
    const { options, received } = following(client, legacy.url, 'slow', { ms: 300, tag: 'x' });
    const result = await callFollowingTasks(options);
    assert.deepEqual(result.structuredContent, { tag: 'x', ms: 300 });
    assert.equal(received[0]?.era, 'legacy');
    assert.ok(legacy.requests.some((r) => r.rpcMethod === 'tasks/result' && r.params.taskId === received[0]?.taskId));
    const plain = following(client, legacy.url, 'slow_plain', { ms: 1, tag: 'y' });
    assert.deepEqual((await callFollowingTasks(plain.options)).structuredContent, { tag: 'y', ms: 1 });
    assert.equal(legacy.requests.filter((r) => r.rpcMethod === 'tools/call').at(-1)?.params.task, undefined, 'no task asked of a tool without task support');
  });

  it('resumes: a task an earlier attempt was handed is followed without calling again; one the remote no longer knows is called again', async () => {
    const first = following(client, modern.url, 'report', {});
    await callFollowingTasks(first.options);
    const calls = modern.calls().length;
    const again = following(client, modern.url, 'report', {}, { resume: first.received[0]! });
    assert.deepEqual((await callFollowingTasks(again.options)).structuredContent, { report: 'ready' });
    assert.equal(modern.calls().length, calls, 'not called again');
    const unknown = following(client, modern.url, 'report', {}, { resume: { taskId: 'gone', era: 'modern' } });
    assert.deepEqual((await callFollowingTasks(unknown.options)).structuredContent, { report: 'ready' });
    assert.equal(modern.calls().length, calls + 1, 'called again');
    assert.equal(unknown.received.length, 1);
  });

  it('a call abandoned while it follows cancels the remote\'s task (both eras); one merely interrupted (a worker going away) leaves it running', async () => {
    for (const [url, tool, args] of [[modern.url, 'forever', {}], [legacy.url, 'slow', { ms: 600_000, tag: 'z' }]] as const) {
      const abort = new AbortController();
      const { options, received } = following(client, url, tool, args, { abandoned: () => true }, abort.signal);
      const running = callFollowingTasks(options);
      await eventually(async () => received[0], 'the remote\'s task');
      abort.abort(new Error('tasks/cancel'));
      await assert.rejects(running);
      const cancelled = url === modern.url ? modern.cancelled : legacy.cancelled;
      assert.ok(cancelled.includes(received[0]!.taskId), `${tool}: the remote cancelled ${received[0]!.taskId}`);
    }
    const abort = new AbortController();
    const { options, received } = following(client, modern.url, 'forever', {}, { abandoned: () => false }, abort.signal);
    const running = callFollowingTasks(options);
    await eventually(async () => received[0], 'the remote\'s task');
    abort.abort(new Error('worker shutdown'));
    await assert.rejects(running);
    assert.equal(modern.tasks.get(received[0]!.taskId)?.status, 'working', 'left for the next attempt');
    assert.ok(!modern.cancelled.includes(received[0]!.taskId));
  });

  it('a remote\'s failure to answer a poll is thrown as its error (the attempt is retried)', async () => {
    modern.override = (method) => (method === 'tasks/get' ? { error: { code: -32603, message: 'busy' }, status: 503 } : undefined);
    try {
      const { options } = following(client, modern.url, 'report', {});
      await assert.rejects(callFollowingTasks(options), (error: unknown) => error instanceof RemoteRpcError && error.httpStatus === 503);
    } finally {
      delete modern.override;
    }
  });
});
