/**
 * The gateway's Temporal connection when Temporal cannot be reached (issue 28, finding 5): a call
 * gives up after FLOWGATE_TEMPORAL_UNREACHABLE_MS instead of Temporal's 20 s of retries, and a slow
 * but reachable Temporal is still waited for. Between flowgate and the suite's real Temporal server
 * sits a TCP proxy that can delay or cut the link.
 */
import assert from 'node:assert/strict';
import type { Client } from '@temporalio/client';
import { connectClient, GRPC_UNAVAILABLE, type ReachSettings, type TemporalSettings } from '../../temporal/client';
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
