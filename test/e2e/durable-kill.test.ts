/**
 * Durable tool calls through a gateway and a worker killed with SIGKILL (issue 50,
 * docs/tool-gateway.md#durable-calls): two gateways and a worker are child processes
 * (FLOWGATE_ROLE) sharing the data dir of an in-process flowgate without a worker, which registers
 * a durable remote MCP server: a slow remote on loopback built on the official SDK (2025-11-25),
 * whose `slow` tool runs as the remote's own task and whose `slow_plain` answers inline.
 *
 * - N calls in flight at the remote (a third task-augmented calls of `slow`, a third of
 *   `slow_plain`, a third plain calls of `slow_plain` waiting inline with an Idempotency-Key): the
 *   first gateway is killed with SIGKILL and started again. Every task reaches `completed` with its
 *   result, read through the other gateway; the plain calls cut off are made again there with their
 *   key and answered by the same durable call.
 * - N more calls in flight, then the worker is killed with SIGKILL and started again: every task
 *   completes with its result; an attempt after the kill follows the remote's task it was handed
 *   rather than calling again, and `slow_plain` is called again (same key).
 * In both, the remote saw each call at most once per attempt the audit trail records for it.
 *
 * FLOWGATE_TEST_DURABLE_KILL_CALLS sets N (default 20 in CI, 50 otherwise: the issue's figure).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DEFAULT_ORG_ID } from '../../src/registry';
import { durableTaskId } from '../../src/tools/custom/durable';
import { temporalAddress } from '../setup/root-hooks';
import { eventually } from '../support/eventually';
import { startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { startBeside, type Replica, type Role } from '../support/replicas';
import { startTaskRemote, type TaskRemote } from '../support/task-remote-mcp';
import { asAdmin, createServer } from '../tools/custom-support';
import { modernRpc, rpc, RPC_HEADERS, runtimeToken } from '../tools/support';

const CALLS = Number(process.env.FLOWGATE_TEST_DURABLE_KILL_CALLS ?? (process.env.CI === 'true' ? 20 : 50));
const DURABLE = { maxAttempts: 5, initialIntervalSeconds: 0.5, backoff: 1.5, attemptTimeoutSeconds: 60, timeoutSeconds: 600 };

/** One durable call of the test: how it was made, and what the caller holds of it. */
interface Call {
  tag: string;
  /** how long the remote takes */
  ms: number;
  tool: 'slow' | 'slow_plain';
  /** a plain call waiting inline, with this Idempotency-Key; else a task-augmented call */
  key?: string;
  taskId?: string;
  /** the plain call's answer (its structuredContent), once it came */
  answered?: unknown;
}

interface AuditRecord {
  action: string;
  target: { id: string } | null;
  details: Record<string, unknown>;
}

describe('durable tool calls through a gateway and a worker killed with SIGKILL', () => {
  let fg: TestFlowgate;
  let remote: TaskRemote;
  let token: string;
  let server: string;
  let gateway: Replica;
  let other: Replica;
  let worker: Replica;
  const replicas: Replica[] = [];

  // each process shares the in-process flowgate's data dir: its registry (SQLite), blobs and keys (startBeside)
  const start = async (role: Role): Promise<Replica> => {
    const replica = await startBeside(fg, temporalAddress(), role);
    replicas.push(replica);
    return replica;
  };
  const at = (replica: Replica): { url: string } => ({ url: replica.url ?? '' });

  before(async function () {
    this.timeout(300_000);
    fg = await startTestFlowgate({ FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true' }, { worker: false });
    remote = await startTaskRemote();
    ({ token } = await runtimeToken(fg));
    server = (await createServer(fg, fg.adminToken, { url: remote.url, durable: DURABLE })).id;
    [gateway, other, worker] = await Promise.all([start('gateway'), start('gateway'), start('worker')]);
  });
  after(async () => {
    for (const replica of replicas) await replica.kill();
    await remote?.close();
    await fg?.stop();
  });

  /** N calls, a third of each kind, taking `ms` at the remote; a plain call's task id follows from its key. */
  function plan(ms: number): Call[] {
    return Array.from({ length: CALLS }, (_, i): Call => {
      const tag = `c${i}-${randomUUID().slice(0, 6)}`;
      if (i % 3 === 0) return { tag, ms, tool: 'slow' };
      if (i % 3 === 1) return { tag, ms, tool: 'slow_plain' };
      const key = `kill-${tag}`;
      return { tag, ms, tool: 'slow_plain', key, taskId: durableTaskId(DEFAULT_ORG_ID, server, 'slow_plain', key) };
    });
  }

  /** Makes one call through `replica`: a task-augmented one answers its task id; a plain one waits for its answer (or the connection's end). */
  async function make(replica: Replica, call: Call): Promise<void> {
    const args = { ms: call.ms, tag: call.tag };
    if (call.key === undefined) {
      const called = await modernRpc(at(replica), server, token, 'tools/call', { name: call.tool, arguments: args }, call.tool);
      const task = called.body?.result as { resultType?: string; taskId?: string } | undefined;
      assert.equal(task?.resultType, 'task', called.text);
      call.taskId = task?.taskId;
      return;
    }
    const answer = await rpc(at(replica), server, token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: call.tool, arguments: args } },
      { ...RPC_HEADERS, 'Idempotency-Key': call.key }).catch(() => undefined);
    if (answer?.body?.result) call.answered = answer.body.result.structuredContent;
  }

  /** Starts every call through `replica`: the task-augmented ones are answered, the plain ones are left waiting. */
  async function startAll(replica: Replica, calls: Call[]): Promise<Promise<void>[]> {
    const waiting: Promise<void>[] = [];
    for (let i = 0; i < calls.length; i += 10) {
      const batch = calls.slice(i, i + 10).map((call) => make(replica, call));
      await Promise.all(batch.filter((_, j) => calls[i + j]?.key === undefined));
      waiting.push(...batch);
    }
    return waiting;
  }

  /** Waits until the remote has seen every call (all are in flight there). */
  const inFlight = (calls: Call[]): Promise<true> => eventually(async () => (calls.every((c) => remote.requests.some((r) => r.rpcMethod === 'tools/call' && (r.params.arguments as { tag?: string } | undefined)?.tag === c.tag)) ? true : undefined),
    'every call to reach the remote', 120_000, 250);

  /** The durable call's task through `replica` once completed: its result's structuredContent. */
  const completed = (replica: Replica, taskId: string): Promise<unknown> => eventually(async () => {
    const got = await modernRpc(at(replica), server, token, 'tasks/get', { taskId }, taskId);
    const task = got.body?.result as { status?: string; result?: { structuredContent?: unknown; isError?: boolean } } | undefined;
    if (task?.status === 'working' || task === undefined) return undefined;
    assert.equal(task.status, 'completed', got.text);
    assert.notEqual(task.result?.isError, true, got.text);
    return task.result?.structuredContent;
  }, `task ${taskId} to complete`, 180_000, 500);

  /** Every durable_call record of the organization (all pages). */
  async function durableRecords(): Promise<AuditRecord[]> {
    const records: AuditRecord[] = [];
    let cursor: string | undefined;
    do {
      const page = await asAdmin<{ records: AuditRecord[]; nextCursor?: string }>(fg, fg.adminToken, 'GET', `/api/v1/audit?action=durable_call.&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      records.push(...page.body.records);
      cursor = page.body.nextCursor;
    } while (cursor);
    return records;
  }

  /** The remote saw each call at most once per attempt its audit records show; answers the calls made again, and tasks resumed. */
  async function checkAttempts(calls: Call[]): Promise<{ calledAgain: number; resumed: number }> {
    const records = await eventually(async () => {
      const all = await durableRecords();
      return calls.every((c) => all.some((r) => r.target?.id === c.taskId && r.action === 'durable_call.completed')) ? all : undefined;
    }, 'every call\'s completion in the audit trail', 60_000, 500);
    let calledAgain = 0;
    let resumed = 0;
    for (const call of calls) {
      const mine = records.filter((r) => r.target?.id === call.taskId);
      const attempts = Math.max(...mine.map((r) => (typeof r.details.attempt === 'number' ? r.details.attempt : 0)));
      const seen = remote.callsWithKey(call.key ?? `flowgate-${call.taskId}`);
      assert.ok(seen >= 1 && seen <= attempts, `${call.tag} (${call.tool}): the remote saw ${seen} call(s) for ${attempts} recorded attempt(s): ${JSON.stringify(mine.map((r) => [r.action, r.details]))}`);
      if (seen > 1) calledAgain++;
      if (mine.some((r) => r.details.resumed === true)) resumed++;
    }
    return { calledAgain, resumed };
  }

  it(`${CALLS} durable calls in flight through a gateway killed with -9: every task completes, read through another replica; the cut-off plain calls are answered by their key`, async function () {
    this.timeout(300_000);
    const started = Date.now();
    const calls = plan(8000);
    const waiting = await startAll(gateway, calls);
    await inFlight(calls);
    await gateway.kill();
    await Promise.all(waiting);
    const cutOff = calls.filter((c) => c.key !== undefined && c.answered === undefined).length;
    gateway = await start('gateway');
    for (const call of calls.filter((c) => c.key === undefined)) {
      assert.deepEqual(await completed(other, call.taskId ?? ''), { tag: call.tag, ms: 8000 });
    }
    // the plain calls, made again with their key through the other replica: the same durable call answers
    await Promise.all(calls.filter((c) => c.key !== undefined).map((c) => make(other, c)));
    for (const call of calls.filter((c) => c.key !== undefined)) assert.deepEqual(call.answered, { tag: call.tag, ms: 8000 }, call.tag);
    const sample = calls.find((c) => c.key === undefined);
    assert.deepEqual(await completed(gateway, sample?.taskId ?? ''), { tag: sample?.tag, ms: 8000 }, 'the restarted gateway reads it too');
    for (const call of calls) assert.ok(remote.callsWithKey(call.key ?? `flowgate-${call.taskId}`) === 1, `${call.tag}: called once`);
    console.log(`      [durable-kill] gateway: ${CALLS} calls (${cutOff} plain calls cut off and answered by their key) in ${Date.now() - started} ms`);
  });

  it(`${CALLS} durable calls in flight through a worker killed with -9: every task completes; the remote saw each call at most once per audited attempt`, async function () {
    this.timeout(300_000);
    const started = Date.now();
    const calls = plan(15_000);
    const waiting = await startAll(gateway, calls);
    await inFlight(calls);
    await worker.kill();
    const killedAt = Date.now();
    worker = await start('worker');
    const workerDownMs = Date.now() - killedAt;
    await Promise.all(waiting);
    for (const call of calls.filter((c) => c.key === undefined)) {
      assert.deepEqual(await completed(other, call.taskId ?? ''), { tag: call.tag, ms: 15_000 });
    }
    for (const call of calls.filter((c) => c.key !== undefined && c.answered === undefined)) await make(other, call);
    for (const call of calls.filter((c) => c.key !== undefined)) assert.deepEqual(call.answered, { tag: call.tag, ms: 15_000 }, call.tag);
    const { calledAgain, resumed } = await checkAttempts(calls);
    const followed = calls.filter((c) => c.tool === 'slow');
    assert.ok(resumed >= 1, 'an attempt after the kill followed the remote\'s task it was handed');
    console.log(`      [durable-kill] worker: ${CALLS} calls in ${Date.now() - started} ms (worker down ${workerDownMs} ms, restart included); `
      + `${resumed} of ${followed.length} remote tasks followed by a later attempt, ${calledAgain} of ${calls.length} calls made again at the remote (same key)`);
  });
});
