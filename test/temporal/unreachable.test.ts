/**
 * The gateway's Temporal connections when Temporal cannot be reached (issue 28, finding 5): a call
 * gives up after FLOWGATE_TEMPORAL_UNREACHABLE_MS instead of Temporal's 20 s of retries, a slow but
 * reachable Temporal is still waited for, and an eager start (over the worker's native connection,
 * which retries on its own for about 10 s) is let go once the gateway's connection is down. Between
 * flowgate and the suite's real Temporal server sits a TCP proxy that can delay or cut the link.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { WorkflowDefinitionSchema } from '../../activities/steps';
import { silentLogger } from '../../src/observability/logger';
import { runInputFor } from '../../src/runs/run-input';
import { RunService, StartInFlightError } from '../../src/runs/run-service';
import { channelReady, connectClient, connectWorker, eagerStartClient, ensureSearchAttributes, GRPC_UNAVAILABLE, type ReachSettings, type TemporalSettings } from '../../temporal/client';
import { temporalAddress } from '../setup/root-hooks';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

const UNREACHABLE_MS = 1000;

function settings(proxy: TcpProxy): TemporalSettings & ReachSettings {
  return { address: proxy.address, namespace: 'default', tls: false, unreachableMs: UNREACHABLE_MS, reconnectMs: 500 };
}

async function proxyToTemporal(): Promise<TcpProxy> {
  const [host = '127.0.0.1', port = '0'] = temporalAddress().split(':');
  return startTcpProxy({ host, port: Number(port) });
}

/** A run's input as a trigger call builds it (no registry needed to start one). */
function runInput(): Parameters<RunService['start']>[0] {
  const definition = WorkflowDefinitionSchema.parse({ name: 'hello', steps: [{ name: 'Hi', type: 'template', template: 'hi' }] });
  return runInputFor({
    orgId: 'org_unreachable', triggerId: 'trg_unreachable', startedBy: 'test', inputs: {},
    version: { workflowId: 'wf_unreachable', version: 1, name: 'hello', definition, stepMap: { 1: 1 }, createdAt: new Date().toISOString() },
  });
}

async function failureOf(call: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const began = Date.now();
  try {
    await call;
  } catch (error) {
    return { error, ms: Date.now() - began };
  }
  assert.fail('the call succeeded');
}

describe('the gateway\'s Temporal client when Temporal is unreachable', () => {
  let proxy: TcpProxy;
  let client: Client;

  beforeEach(async () => {
    proxy = await proxyToTemporal();
    client = await connectClient(settings(proxy));
  });
  afterEach(async () => {
    await client?.connection.close();
    await proxy?.close();
  });

  it('fails a call within about FLOWGATE_TEMPORAL_UNREACHABLE_MS, not after Temporal\'s 20 s of retries', async () => {
    proxy.cut();
    const { error, ms } = await failureOf(client.workflowService.getSystemInfo({}));
    assert.equal((error as { code?: number }).code, GRPC_UNAVAILABLE, String(error));
    assert.ok(ms < UNREACHABLE_MS + 1500, `failed after ${ms} ms`);
  });

  it('waits for a slow but reachable Temporal longer than that', async () => {
    // a round trip takes 2.4 s: more than twice the budget, which bounds retries, not answers
    proxy.delayMs = 1200;
    const began = Date.now();
    await client.workflowService.getSystemInfo({});
    assert.ok(Date.now() - began >= 2 * proxy.delayMs, 'the call went through the slow link');
  });
});

describe('RunService: an eager start when Temporal is unreachable', () => {
  let proxy: TcpProxy;
  let client: Client;
  let native: NativeConnection;
  let runs: RunService;

  beforeEach(async () => {
    proxy = await proxyToTemporal();
    client = await connectClient(settings(proxy));
    native = await connectWorker(settings(proxy));
    await ensureSearchAttributes(client, 'default');
    runs = new RunService(client, `unreachable-${randomUUID()}`, silentLogger, undefined, undefined, { unreachableMs: UNREACHABLE_MS });
    runs.startEagerlyThrough(eagerStartClient(native, 'default'));
    // both connections are live: the gateway's is ready, and an eager start goes through
    assert.equal((await runs.start(runInput(), undefined, undefined, { eager: true })).existing, false);
    assert.ok(channelReady(client.connection));
  });
  afterEach(async () => {
    await client?.connection.close();
    await native?.close();
    await proxy?.close();
  });

  it('lets an eager start under way go once the gateway\'s connection finds Temporal gone (StartInFlightError)', async () => {
    const runId = randomUUID();
    proxy.cut();
    // started at once: the gateway's connection has not noticed yet, so the start goes eagerly
    const { error, ms } = await failureOf(runs.start(runInput(), undefined, runId, { eager: true }));
    assert.ok(error instanceof StartInFlightError, String(error));
    assert.equal(error.runId, runId);
    // the worker's connection alone would have retried for about 10 s
    assert.ok(ms < UNREACHABLE_MS + 2000, `given up after ${ms} ms`);
  });

  it('waits for an eager start as long as Temporal is reachable, however slow', async () => {
    proxy.delayMs = 1200;
    const began = Date.now();
    const started = await runs.start(runInput(), undefined, randomUUID(), { eager: true });
    assert.equal(started.existing, false);
    assert.ok(Date.now() - began > UNREACHABLE_MS, 'the start took longer than the budget');
  });
});
