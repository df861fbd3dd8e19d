/**
 * Temporal going away and coming back (issue 28, findings 5 and 6): a Temporal dev server of this
 * test's own (its state in a SQLite file, on a fixed port so it comes back where it was), a gateway
 * with a worker in one process and a second, gateway-only replica, all against it. While Temporal
 * is down every call that needs it answers 503 with Retry-After within seconds; once it is back,
 * every gateway serves again within 10 s, and the worker takes new work and the runs that waited.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EmbeddedTemporal } from '../../temporal/embedded';
import { freeTemporalFrontendPort, startTestTemporal } from '../setup/root-hooks';
import { freshPostgresSchema, replicaSecrets, startReplica, type PostgresSchema, type Replica, type Role } from '../support/replicas';

/** What the issue asks: a 503 in under 5 s while Temporal is down, every gateway back within 10 s. */
const DOWN_ANSWER_MS = 5000;
const BACK_WITHIN_MS = 10_000;
/**
 * How long Temporal stays down. gRPC's pause between reconnection attempts grows with each failure
 * (1 s, 1.6 s, 2.6 s … up to 120 s): after 80 s of failures the next attempt is 40-ish s away, the
 * issue's "80-95 s after Temporal came back" in the making.
 */
const OUTAGE_MS = 80_000;
const HELLO = { name: 'hello', steps: [{ name: 'Hi', type: 'template', template: 'hi {{inputs.who}}' }] };
const ASK = { name: 'ask', steps: [{ name: 'Ask', type: 'approval', approvers: ['ann'], timeout: '10m' }, { name: 'Done', type: 'template', template: 'approved' }] };

interface Timed {
  ms: number;
  status: number;
  headers: Headers;
  text: string;
}

/** One HTTP call, timed; a call that hangs fails the test after a minute instead of hanging it. */
async function timed(url: string, init: RequestInit = {}): Promise<Timed> {
  const began = Date.now();
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
  const text = await response.text();
  return { ms: Date.now() - began, status: response.status, headers: response.headers, text };
}

describe('Temporal going away and coming back', function () {
  this.timeout(600_000);
  let temporal: EmbeddedTemporal | undefined;
  let temporalPort = 0;
  let temporalDir = '';
  let pg: PostgresSchema | undefined;
  const replicas: Replica[] = [];
  let env: Record<string, string> = {};

  const startTemporal = (): Promise<EmbeddedTemporal> => startTestTemporal({
    port: temporalPort, dbFile: path.join(temporalDir, 'temporal.sqlite'),
  });

  before(async function () {
    this.timeout(300_000);
    temporalDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-outage-temporal-'));
    temporalPort = await freeTemporalFrontendPort();
    temporal = await startTemporal();
    pg = await freshPostgresSchema('temporal_outage_');
    env = {
      TEMPORAL_ADDRESS: temporal.address,
      FLOWGATE_TASK_QUEUE: `outage-${randomUUID()}`,
      DATABASE_URL: pg.url,
      FLOWGATE_RATE_LIMIT_PER_MINUTE: '0',
      FLOWGATE_SYNC_WAIT_SECONDS: '20',
      ...replicaSecrets(),
    };
  });

  after(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await temporal?.stop();
    await pg?.drop();
    if (temporalDir) rmSync(temporalDir, { recursive: true, force: true });
  });

  const start = async (role: Role): Promise<Replica> => {
    const replica = await startReplica(role, env);
    replicas.push(replica);
    return replica;
  };

  it('answers 503 with Retry-After within 5 s on every route that needs Temporal while it is down, and every gateway serves again within 10 s of its return', async () => {
    // One process with a gateway and a worker (synchronous calls start eagerly over the worker's
    // connection) and a gateway-only replica.
    const [full, bare] = await Promise.all([start('all'), start('gateway')]);
    const gateways = { full: full.url!, bare: bare.url! };
    const admin = async <T>(method: string, pathname: string, body?: unknown): Promise<T> => {
      const answer = await timed(`${gateways.full}${pathname}`, {
        method, headers: { Authorization: `Bearer ${env.FLOWGATE_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      assert.ok(answer.status < 300, `${method} ${pathname}: ${answer.status} ${answer.text}`);
      return JSON.parse(answer.text) as T;
    };
    const publish = async (definition: object, trigger: object = {}): Promise<{ workflowId: string; triggerId: string }> => {
      const workflow = await admin<{ id: string }>('POST', '/api/v1/workflows', { ...definition, name: `${(definition as { name: string }).name}-${randomUUID()}` });
      await admin('POST', `/api/v1/workflows/${workflow.id}/publish`);
      const created = await admin<{ id: string }>('POST', '/api/v1/triggers', { workflowId: workflow.id, ...trigger });
      return { workflowId: workflow.id, triggerId: created.id };
    };
    const hello = await publish(HELLO);
    const toolName = `hello_${randomUUID().slice(0, 8)}`;
    await publish(HELLO, { tool: { name: toolName, description: 'says hi' } });
    const ask = await publish(ASK);
    const { key: apiKey } = await admin<{ key: string }>('POST', '/api/v1/api-keys', { name: 'outage' });
    const tokenAnswer = await timed(`${gateways.bare}/auth/token`, { method: 'POST', headers: { 'X-API-KEY': apiKey } });
    const { token } = JSON.parse(tokenAnswer.text) as { token: string };

    const triggerCall = (gateway: string, triggerId: string, headers: Record<string, string> = {}) => timed(`${gateway}/ext/triggers/${triggerId}`, {
      method: 'POST', headers: { 'X-API-KEY': apiKey, 'Content-Type': 'application/json', ...headers }, body: JSON.stringify({ who: 'ann' }),
    });
    const runPath = (workflowId: string, runId: string) => `/ext/webhook/${apiKey}/runs/${workflowId}/${runId}`;
    const toolCall = (gateway: string) => timed(`${gateway}/tools/workflows`, {
      method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: toolName, arguments: { who: 'ann' } } }),
    });
    const decide = (gateway: string, runId: string) => timed(`${gateway}${runPath(ask.workflowId, runId)}/approval`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decision: 'approve', approver: 'ann' }),
    });
    const statusOf = async (gateway: string, workflowId: string, runId: string): Promise<{ status: string }> => {
      const answer = await timed(`${gateway}${runPath(workflowId, runId)}/status`);
      assert.equal(answer.status, 200, answer.text);
      return JSON.parse(answer.text) as { status: string };
    };
    const until = async <T>(what: string, deadlineMs: number, probe: () => Promise<T | undefined>): Promise<T> => {
      const deadline = Date.now() + deadlineMs;
      for (;;) {
        const value = await probe();
        if (value !== undefined) return value;
        assert.ok(Date.now() < deadline, `${what} within ${deadlineMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };

    // Before: a synchronous call completes on each gateway, and a run waits for an approval.
    for (const gateway of Object.values(gateways)) {
      const sync = await triggerCall(gateway, hello.triggerId, { 'x-api-wait': 'true' });
      assert.equal(sync.status, 200, sync.text);
    }
    const finishedRunId = (await triggerCall(gateways.bare, hello.triggerId, { 'x-api-wait': 'true' })).headers.get('X-Pf-Run-Id')!;
    const waitingRunId = (await triggerCall(gateways.bare, ask.triggerId)).headers.get('X-Pf-Run-Id')!;
    await until('the approval run pauses', 60_000, async () => ((await statusOf(gateways.bare, ask.workflowId, waitingRunId)).status === 'PAUSED' ? true : undefined));

    await temporal!.stop();
    const stoppedAt = Date.now();

    // What went wrong is collected and asserted at the end, so that one run shows every figure.
    const problems: string[] = [];
    const inTime = (what: string, ms: number, boundMs: number): void => {
      if (ms >= boundMs) problems.push(`${what} after ${ms} ms (at most ${boundMs})`);
    };

    // Every route that needs Temporal, on both gateways at once: a 503 with Retry-After, in time.
    const downAnswers: Record<string, number> = {};
    await Promise.all(Object.entries(gateways).map(async ([name, gateway]) => {
      const calls: [string, Promise<Timed>][] = [
        ['async trigger', triggerCall(gateway, hello.triggerId)],
        ['sync trigger', triggerCall(gateway, hello.triggerId, { 'x-api-wait': 'true' })],
        ['status of an open run', timed(`${gateway}${runPath(ask.workflowId, waitingRunId)}/status`)],
        ['approval decision', decide(gateway, waitingRunId)],
        ['healthz', timed(`${gateway}/healthz`)],
      ];
      for (const [what, call] of calls) {
        const answer = await call;
        downAnswers[`${name} ${what}`] = answer.ms;
        assert.equal(answer.status, 503, `${name} ${what}: ${answer.status} ${answer.text}`);
        if (!(Number(answer.headers.get('Retry-After')) > 0)) problems.push(`${name} ${what} without Retry-After`);
        inTime(`${name} ${what} answered`, answer.ms, DOWN_ANSWER_MS);
      }
      const tool = await toolCall(gateway);
      downAnswers[`${name} tools/call`] = tool.ms;
      assert.match(tool.text, /"error"/, `${name} tools/call fails: ${tool.text}`);
      inTime(`${name} tools/call answered`, tool.ms, DOWN_ANSWER_MS);
      // a finished run needs no Temporal
      assert.equal((await statusOf(gateway, hello.workflowId, finishedRunId)).status, 'COMPLETE');
    }));

    // The outage goes on; the gateways keep answering (load balancers probe /healthz).
    let slowestProbeMs = 0;
    while (Date.now() - stoppedAt < OUTAGE_MS) {
      for (const gateway of Object.values(gateways)) {
        const probe = await timed(`${gateway}/healthz`);
        assert.equal(probe.status, 503, probe.text);
        slowestProbeMs = Math.max(slowestProbeMs, probe.ms);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    inTime('the slowest /healthz during the outage answered', slowestProbeMs, DOWN_ANSWER_MS);

    temporal = await startTemporal();
    const backAt = Date.now();
    const backAfter: Record<string, number> = {};
    await Promise.all(Object.entries(gateways).map(async ([name, gateway]) => {
      // (the deadline is generous so that a slow recovery is measured, then reported below)
      await until(`${name} serves a trigger call again`, 240_000, async () => ((await triggerCall(gateway, hello.triggerId)).status === 200 ? true : undefined));
      backAfter[name] = Date.now() - backAt;
      inTime(`${name} served a trigger call again`, backAfter[name], BACK_WITHIN_MS);
    }));

    // The worker is back too: the waiting run takes its approval and ends, a new run completes
    // (eagerly on the gateway with the worker, through the task queue on the other). A decision
    // the run does not answer in time, its worker still reconnecting, is recorded (202) and
    // applied once it does (docs/http-api.md, "Decisions and cancellations under load").
    const decided = await until('the decision is taken', 60_000, async () => {
      const answer = await decide(gateways.bare, waitingRunId);
      return answer.status === 200 || answer.status === 202 ? answer : undefined;
    });
    backAfter['approval decided'] = Date.now() - backAt;
    assert.ok([200, 202].includes(decided.status), decided.text);
    await until('the approved run completes', 60_000, async () => ((await statusOf(gateways.full, ask.workflowId, waitingRunId)).status === 'COMPLETE' ? true : undefined));
    for (const gateway of Object.values(gateways)) {
      const sync = await triggerCall(gateway, hello.triggerId, { 'x-api-wait': 'true' });
      assert.equal(sync.status, 200, sync.text);
      assert.equal((JSON.parse(sync.text) as { status: string }).status, 'COMPLETE');
    }
    backAfter['sync runs completed'] = Date.now() - backAt;
    console.log(`      answers while Temporal was down (ms): ${JSON.stringify(downAnswers)}; slowest /healthz over ${OUTAGE_MS / 1000} s: ${slowestProbeMs} ms`);
    console.log(`      after Temporal came back (ms): ${JSON.stringify(backAfter)}`);
    assert.deepEqual(problems, [], 'every answer in time, every 503 with Retry-After');
  });
});
