/**
 * Scale-out (issue 15): two gateway and two worker processes on one Temporal server, one PostgreSQL
 * registry and one S3-compatible blob store, each process with a data dir of its own and nothing in
 * it the others need. Calls with attachments are spread over both gateways while one gateway and one
 * worker are killed (SIGKILL) and the gateway is started again from an empty data dir.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { temporalAddress } from '../setup/root-hooks';
import { startLoadBalancer, type LoadBalancer } from '../support/load-balancer';
import { MultipartBody, send } from '../support/multipart';
import { startMain } from '../support/processes';
import { freshPostgresSchema, replicaSecrets, startReplica, type PostgresSchema, type Replica, type Role } from '../support/replicas';
import { sharedBlobStore, type BlobStorePeer } from '../support/scale-out-blob-store';

/** trigger calls in all: half before and during the kills, half after the gateway came back */
const CALLS = 48;
/** the call after whose acceptance a gateway and a worker are killed */
const KILL_AFTER_ACCEPTED = 10;
const CONCURRENCY = 4;
/** API keys the load is spread over: each credential's share stays well inside its budget */
const LOAD_KEYS = 6;
/** the rate limit of every credential: BURST requests per window of BURST × 60 / PER_MINUTE = 120 s */
const BURST = 60;
const PER_MINUTE = 30;
/** requests the budget probe sends with a credential of its own, half to each gateway */
const PROBE_REQUESTS = 100;
/** attachments are fetched through the load balancer this much slower, so steps are in flight at the kill */
const SLOW_FILE_MS = 700;

interface Call {
  index: number;
  gateway: string;
  apiKey: string;
  content: string;
  status?: number;
  runId?: string;
  error?: string;
}

describe('scale-out: two gateways and two workers sharing nothing on disk', function () {
  this.timeout(420_000);
  let pg: PostgresSchema | undefined;
  let lb: LoadBalancer | undefined;
  let blobPeer: BlobStorePeer | undefined;
  const replicas: Replica[] = [];
  let env: Record<string, string> = {};

  const start = async (role: Role): Promise<Replica> => {
    const replica = await startReplica(role, env);
    replicas.push(replica);
    return replica;
  };

  before(async function () {
    this.timeout(300_000);
    blobPeer = await sharedBlobStore(this);
    pg = await freshPostgresSchema('scale_out_');
    lb = await startLoadBalancer([], { delay: { pathPrefix: '/files/attachments/', ms: SLOW_FILE_MS } });
    env = {
      TEMPORAL_ADDRESS: temporalAddress(),
      FLOWGATE_TASK_QUEUE: `scale-out-${randomUUID()}`,
      DATABASE_URL: pg.url,
      FLOWGATE_PUBLIC_URL: lb.url,
      FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true',
      FLOWGATE_RATE_LIMIT_PER_MINUTE: String(PER_MINUTE),
      FLOWGATE_RATE_LIMIT_BURST: String(BURST),
      ...replicaSecrets(),
      ...blobPeer.env,
    };
  });

  after(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await lb?.close();
    await pg?.drop();
    await blobPeer?.close();
  });

  it('completes every accepted call, serves every result from either gateway, and counts one rate-limit budget', async () => {
    // All four start at once on the empty schema, as replicas do: migrations and bootstrap race.
    const [gatewayA, gatewayB, workerKept, workerKilled] = await Promise.all([start('gateway'), start('gateway'), start('worker'), start('worker')]);
    const urlA = gatewayA.url!;
    let gateways = [urlA, gatewayB.url!];
    lb!.setBackends(gateways);

    const admin = async <T>(method: string, pathname: string, body?: unknown): Promise<T> => {
      const response = await fetch(`${urlA}${pathname}`, {
        method, headers: { Authorization: `Bearer ${env.FLOWGATE_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      assert.ok(response.ok, `${method} ${pathname}: ${response.status} ${text}`);
      return JSON.parse(text) as T;
    };
    const workflow = await admin<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'scale-out',
      steps: [
        // a gateway killed while it sends the file drops the answer after its headers: no load balancer can move
        // that on (a clean-clone run saw "other side closed" so), so the step retries, as its author would
        { name: 'Fetch attachment', type: 'http', url: '{{inputs.attachments.0.url}}', retry: { maxAttempts: 4, initialInterval: '500ms' } },
        { name: 'Echo', type: 'template', template: '{{steps.1.result}} / call {{inputs.n}}' },
      ],
    });
    await admin('POST', `/api/v1/workflows/${workflow.id}/publish`);
    const triggerId = (await admin<{ id: string }>('POST', '/api/v1/triggers', { workflowId: workflow.id })).id;
    const keys: string[] = [];
    for (let i = 0; i <= LOAD_KEYS; i++) keys.push((await admin<{ key: string }>('POST', '/api/v1/api-keys', { name: `scale-out ${i}` })).key);
    const probeKey = keys.pop()!;

    // The load: multipart calls with one attachment each, gateways taken in turn.
    const calls: Call[] = [];
    let accepted = 0;
    let killed: Promise<void> | undefined;
    const callOnce = async (index: number): Promise<void> => {
      const call: Call = {
        index, gateway: gateways[index % gateways.length]!, apiKey: keys[index % keys.length]!,
        content: `attachment ${index} ${randomUUID()}`,
      };
      calls.push(call);
      const body = new MultipartBody([
        { name: 'n', value: String(index) },
        { name: 'file', filename: `note-${index}.txt`, contentType: 'text/plain', head: Buffer.from(call.content) },
      ]);
      try {
        const answer = await send(`${call.gateway}/ext/triggers/${triggerId}`, { 'X-API-KEY': call.apiKey }, body);
        call.status = answer.status;
        const runId = answer.headers['x-pf-run-id'];
        if (answer.status >= 200 && answer.status < 300 && typeof runId === 'string') {
          call.runId = runId;
          accepted += 1;
        } else {
          call.error = answer.text;
        }
      } catch (err) {
        call.error = (err as Error).message;
      }
      if (accepted === KILL_AFTER_ACCEPTED && !killed) {
        // in the middle of the load: other calls are being received and runs are on both workers
        killed = Promise.all([gatewayB.kill(), workerKilled.kill()]).then(() => undefined);
      }
    };
    await runPool(Array.from({ length: CALLS / 2 }, (_, i) => i), CONCURRENCY, callOnce);
    await killed;
    assert.ok(killed, `the kill happened during the load; calls: ${JSON.stringify(calls.map((c) => ({ i: c.index, status: c.status, error: c.error?.slice(0, 200) })))}; gateway: ${gatewayA.child.output().slice(-3000)}`);
    assert.equal(gatewayB.child.process.signalCode, 'SIGKILL');
    assert.equal(workerKilled.child.process.signalCode, 'SIGKILL');

    // The killed gateway comes back from an empty data dir, on another port; the load goes on.
    const gatewayB2 = await start('gateway');
    gateways = [urlA, gatewayB2.url!];
    lb!.setBackends(gateways);
    await runPool(Array.from({ length: CALLS / 2 }, (_, i) => CALLS / 2 + i), CONCURRENCY, callOnce);

    const acceptedCalls = calls.filter((c) => c.runId !== undefined);
    const refused = calls.filter((c) => c.runId === undefined);
    for (const c of refused) {
      assert.equal(c.gateway, gatewayB.url, `only calls to the killed gateway may go unanswered: call ${c.index} to ${c.gateway}: ${c.status ?? ''} ${c.error ?? ''}`);
    }
    assert.ok(acceptedCalls.length >= CALLS / 2 + KILL_AFTER_ACCEPTED, `accepted ${acceptedCalls.length} of ${CALLS}`);
    assert.ok(acceptedCalls.some((c) => c.gateway === gatewayB.url) && acceptedCalls.some((c) => c.gateway === gatewayB2.url), 'both B and its restart accepted calls');

    // Every accepted run completes; watched through the surviving gateway.
    await runPool(acceptedCalls, 8, async (call) => {
      const status = await waitForEnd(urlA, call, workflow.id);
      assert.equal(status.status, 'COMPLETE', `call ${call.index} (run ${call.runId}): ${JSON.stringify(status)}`);
    });

    // Every result file downloads from either gateway (and through the load balancer).
    await runPool(acceptedCalls, 4, async (call) => {
      const { body } = await limited(() => fetch(`${urlA}/ext/webhook/${call.apiKey}/runs/${workflow.id}/${call.runId}/results`));
      const results = (body as { results: { stepIndex: number; resultUrls: Record<string, { url: string }> }[] }).results;
      const fetched = results.find((r) => r.stepIndex === 1)?.resultUrls['output.txt']?.url;
      const echoed = results.find((r) => r.stepIndex === 2)?.resultUrls['output.txt']?.url;
      assert.ok(fetched && echoed, `call ${call.index}: ${JSON.stringify(results)}`);
      for (const origin of [urlA, gatewayB2.url!, lb!.url]) {
        assert.equal(await download(fetched, origin), call.content, `step 1 of call ${call.index} via ${origin}`);
        assert.equal(await download(echoed, origin), `${call.content} / call ${call.index}`, `step 2 of call ${call.index} via ${origin}`);
      }
    });

    // One budget for both gateways: a fresh credential's requests, alternating between them.
    const probeRun = acceptedCalls[0]!;
    const answers: { gateway: string; status: number }[] = [];
    await runPool(Array.from({ length: PROBE_REQUESTS }, (_, i) => i), 4, async (i) => {
      const gateway = gateways[i % 2]!;
      const response = await fetch(`${gateway}/ext/webhook/${probeKey}/runs/${workflow.id}/${probeRun.runId}/status`);
      await response.arrayBuffer();
      answers.push({ gateway, status: response.status });
    });
    const allowed = answers.filter((a) => a.status !== 429);
    assert.ok(allowed.every((a) => a.status === 404 || a.status === 200), JSON.stringify(allowed.filter((a) => a.status !== 200)));
    assert.equal(allowed.length, BURST, `accepted ${allowed.length} of ${PROBE_REQUESTS}; each gateway alone would take ${BURST}`);
    for (const gateway of gateways) {
      assert.ok(allowed.some((a) => a.gateway === gateway), `${gateway} accepted some`);
      assert.ok(answers.some((a) => a.gateway === gateway && a.status === 429), `${gateway} refused some`);
    }
    for (const replica of [gatewayA, gatewayB2]) {
      assert.doesNotMatch(replica.child.output(), /rate-limit store .* did not answer/, 'the shared store answered throughout');
    }

    // Nothing any replica needed was in its own data dir.
    for (const replica of [gatewayA, gatewayB, gatewayB2, workerKept, workerKilled]) {
      assert.equal(existsSync(path.join(replica.dataDir, 'secrets')), false, `${replica.dataDir} holds no keys`);
      assert.equal(existsSync(path.join(replica.dataDir, 'admin-token')), false);
      assert.equal(existsSync(path.join(replica.dataDir, 'registry.sqlite')), false);
      for (const dir of blobPeer!.localDirs(replica.dataDir)) assert.equal(existsSync(dir), false, `${dir} holds no blobs`);
    }
    console.log(`      ${acceptedCalls.length} of ${CALLS} calls accepted (${refused.length} sent to the killed gateway), all COMPLETE; load balancer forwarded ${JSON.stringify(Object.values(lb!.forwarded))}`);
  });
});

describe('FLOWGATE_SIGNING_KEY at start-up', () => {
  it('refuses a key shorter than 32 bytes with a message naming the variable, and exits 2', async () => {
    const child = startMain({ FLOWGATE_ROLE: 'worker', TEMPORAL_ADDRESS: '127.0.0.1:1', FLOWGATE_SIGNING_KEY: 'c2hvcnQgc2VjcmV0' });
    const { code } = await child.exited;
    assert.equal(code, 2);
    assert.match(child.output(), /invalid configuration: FLOWGATE_SIGNING_KEY: must be at least 32 bytes/);
    assert.doesNotMatch(child.output(), /c2hvcnQgc2VjcmV0/, 'the refused key is not printed');
  });
});

/** Runs `task` over `items`, at most `concurrency` at a time. */
async function runPool<T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++]!;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
}

/** A request that a 429 makes wait (Retry-After) and try again. */
async function limited(request: () => Promise<Response>, deadline = Date.now() + 240_000): Promise<{ status: number; body: unknown }> {
  for (;;) {
    const response = await request();
    const text = await response.text();
    if (response.status === 429 && Date.now() < deadline) {
      await sleep(Number(response.headers.get('Retry-After') ?? '1') * 1000);
      continue;
    }
    assert.ok(response.ok, `${response.status} ${text}`);
    return { status: response.status, body: text ? JSON.parse(text) as unknown : undefined };
  }
}

/** Follows the run's status stream until it ends, then reads its final status. */
async function waitForEnd(gateway: string, call: Call, workflowId: string): Promise<{ status: string }> {
  const base = `${gateway}/ext/webhook/${call.apiKey}/runs/${workflowId}/${call.runId}`;
  const deadline = Date.now() + 240_000;
  for (;;) {
    const stream = await fetch(`${base}/status/stream`);
    if (stream.status === 429) {
      await stream.arrayBuffer();
      await sleep(Number(stream.headers.get('Retry-After') ?? '1') * 1000);
    } else {
      const events = await stream.text(); // ends when the run has ended
      assert.equal(stream.status, 200, `status stream of call ${call.index}: ${events}`);
    }
    const { body } = await limited(() => fetch(`${base}/status`), deadline);
    const status = body as { status: string };
    if (['COMPLETE', 'FAILED', 'TIMEOUT'].includes(status.status) || Date.now() > deadline) return status;
  }
}

/** The body of a signed result link, fetched from `origin` instead of the address it names. */
async function download(link: string, origin: string): Promise<string> {
  const url = new URL(link);
  const response = await fetch(`${origin}${url.pathname}${url.search}`);
  const text = await response.text();
  assert.equal(response.status, 200, `${origin}${url.pathname}: ${text}`);
  return text;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
