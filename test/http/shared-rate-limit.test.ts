/**
 * The rate limit shared by gateway replicas (issue 15): two limiters over one real PostgreSQL or
 * Redis count one budget, a batch gets the prefix that fits, an unreachable store falls back to
 * per-process buckets with one warning; then two real gateways over loopback sharing one budget.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Client } from 'pg';
import { createLogger, type Logger } from '../../src/observability/logger';
import { STORE_TIMEOUT_MS, SharedRateLimit, sharedWindow, type RateLimitStoreConfig } from '../../src/http/rate-limit/shared';
import { missingPeer } from '../support/ci';
import { publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';
import { TEST_POSTGRES_URL } from '../support/registry-dialects';

const REDIS_URL = process.env.FLOWGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Whether something listens on the URL's host and port. */
function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(2_000);
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => { socket.destroy(); resolve(false); });
  });
}

async function dropSchema(schema: string): Promise<void> {
  const client = new Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

async function createSchema(schema: string): Promise<void> {
  const client = new Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`create schema "${schema}"`);
  } finally {
    await client.end();
  }
}

/** A logger that keeps its warning lines. */
function recordingLogger(): { log: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const log = createLogger('warn', {}, (line) => {
    const parsed = JSON.parse(line) as { level: string; msg: string };
    if (parsed.level === 'warn') warnings.push(parsed.msg);
  });
  return { log, warnings };
}

const freshCredential = (): string => `fgk_test_${randomBytes(12).toString('hex')}`;

describe('SharedRateLimit', () => {
  it('keeps BURST per window of BURST × 60 / PER_MINUTE seconds, at least one second', () => {
    assert.deepEqual(sharedWindow(600, 60), { points: 60, seconds: 6 });
    assert.deepEqual(sharedWindow(6, 3), { points: 3, seconds: 30 });
    assert.deepEqual(sharedWindow(600, 1), { points: 1, seconds: 1 });
    assert.deepEqual(sharedWindow(7, 2), { points: 2, seconds: 18 }, 'rounded up: never more than PER_MINUTE');
  });

  const stores: { name: string; setUp(ctx: Mocha.Context): Promise<RateLimitStoreConfig>; tearDown(): Promise<void> }[] = [];
  {
    const schema = `rl_${Date.now()}_${randomBytes(4).toString('hex')}`;
    stores.push({
      name: 'PostgreSQL',
      async setUp() {
        await createSchema(schema);
        return { kind: 'postgres', url: TEST_POSTGRES_URL, schema };
      },
      tearDown: () => dropSchema(schema),
    });
    stores.push({
      name: 'Redis',
      async setUp(ctx) {
        if (!(await reachable(REDIS_URL))) missingPeer(ctx, 'Redis', `nothing listens at ${REDIS_URL} (set FLOWGATE_TEST_REDIS_URL)`);
        return { kind: 'redis', url: REDIS_URL };
      },
      tearDown: async () => undefined,
    });
  }

  for (const store of stores) {
    describe(`over ${store.name}`, () => {
      let config: RateLimitStoreConfig;
      const opened: SharedRateLimit[] = [];
      const open = async (perMinute: number, burst: number, log: Logger = createLogger('error', {}, () => undefined)): Promise<SharedRateLimit> => {
        const limit = await SharedRateLimit.open({ perMinute, burst, store: config, log });
        opened.push(limit);
        return limit;
      };

      before(async function () {
        config = await store.setUp(this);
      });
      after(async () => {
        for (const limit of opened) await limit.close();
        await store.tearDown();
      });

      it('lets two replicas together make BURST requests, then refuses on both with Retry-After', async () => {
        const a = await open(6, 3);
        const b = await open(6, 3);
        const key = freshCredential();
        const verdicts = [];
        for (let i = 0; i < 8; i++) verdicts.push(await (i % 2 === 0 ? a : b).take(key));
        assert.equal(verdicts.filter((v) => v.allowed).length, 3, JSON.stringify(verdicts));
        assert.deepEqual(verdicts.slice(0, 3).map((v) => v.allowed), [true, true, true], 'the first three, whichever replica took them');
        for (const refused of verdicts.slice(3)) {
          assert.equal(refused.allowed, false);
          if (!refused.allowed) assert.ok(refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 30, `Retry-After ${refused.retryAfterSeconds}`);
        }
        assert.equal((await a.take(freshCredential())).allowed, true, 'another credential has its own budget');
      });

      it('grants a batch the entries that still fit, in order, across replicas', async () => {
        const a = await open(60, 5);
        const b = await open(60, 5);
        const key = freshCredential();
        assert.deepEqual(await a.takeMany(key, 3), { granted: 3, retryAfterSeconds: 0 });
        const partial = await b.takeMany(key, 4);
        assert.equal(partial.granted, 2);
        assert.ok(partial.retryAfterSeconds >= 1 && partial.retryAfterSeconds <= 5, `Retry-After ${partial.retryAfterSeconds}`);
        assert.equal((await a.takeMany(key, 2)).granted, 0);
      });
    });
  }

  describe('when the store does not answer', () => {
    for (const store of [
      { name: 'PostgreSQL', config: { kind: 'postgres', url: 'postgres://postgres@127.0.0.1:1/test' } as const },
      { name: 'Redis', config: { kind: 'redis', url: 'redis://127.0.0.1:1' } as const },
    ]) {
      it(`limits per process with one warning (${store.name} unreachable)`, async () => {
        const { log, warnings } = recordingLogger();
        const a = await SharedRateLimit.open({ perMinute: 6, burst: 3, store: store.config, log });
        const b = await SharedRateLimit.open({ perMinute: 6, burst: 3, store: store.config, log: createLogger('error', {}, () => undefined) });
        try {
          const key = freshCredential();
          const onA = [];
          const onB = [];
          for (let i = 0; i < 5; i++) onA.push((await a.take(key)).allowed);
          for (let i = 0; i < 5; i++) onB.push((await b.take(key)).allowed);
          assert.deepEqual(onA, [true, true, true, false, false], 'neither open nor shut: this process\'s own bucket');
          assert.deepEqual(onB, [true, true, true, false, false], 'each process counts alone');
          const storeWarnings = warnings.filter((w) => w.includes('rate-limit store'));
          assert.equal(storeWarnings.length, 1, JSON.stringify(warnings));
          assert.match(storeWarnings[0]!, /each gateway limits on its own/);
        } finally {
          await a.close();
          await b.close();
        }
      });
    }

    it(`limits per process when the store is connected but slower than ${STORE_TIMEOUT_MS} ms`, async () => {
      // A Redis that answers ioredis's handshake (HELLO, CLIENT SETINFO, the INFO of the ready
      // check) and then never answers a command, as a store stuck behind a slow disk would.
      const handshake: Record<string, string> = { hello: '*0\r\n', client: '+OK\r\n', info: '$0\r\n\r\n' };
      const silent = net.createServer((socket) => {
        socket.on('data', (data) => {
          for (const [, name] of data.toString('utf8').matchAll(/\*\d+\r\n\$\d+\r\n(\w+)\r\n/g)) {
            const reply = handshake[(name ?? '').toLowerCase()];
            if (reply) socket.write(reply);
          }
        });
        socket.on('error', () => undefined);
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const { port } = silent.address() as net.AddressInfo;
      const { log, warnings } = recordingLogger();
      const limit = await SharedRateLimit.open({ perMinute: 6, burst: 3, store: { kind: 'redis', url: `redis://127.0.0.1:${port}` }, log });
      try {
        const key = freshCredential();
        const started = Date.now();
        assert.equal((await limit.take(key)).allowed, true, 'counted by this process');
        const waited = Date.now() - started;
        assert.ok(waited >= STORE_TIMEOUT_MS - 50 && waited < STORE_TIMEOUT_MS + 1_000, `the first call waited ${waited} ms for the store`);
        const again = Date.now();
        const rest = [];
        for (let i = 0; i < 3; i++) rest.push((await limit.take(key)).allowed);
        assert.deepEqual(rest, [true, true, false], 'the same bucket of this process');
        assert.ok(Date.now() - again < STORE_TIMEOUT_MS / 2, 'calls after the timeout do not wait for the store again at once');
        assert.equal(warnings.filter((w) => w.includes('rate-limit store')).length, 1, JSON.stringify(warnings));
      } finally {
        await limit.close();
        silent.close();
      }
    });
  });
});

describe('two gateways sharing one rate limit (FLOWGATE_RATE_LIMIT_PER_MINUTE=6, BURST=3)', () => {
  const hello = { name: 'hello', steps: [{ name: 'Say', type: 'template', format: 'plaintext', template: 'hello {{inputs.who}}' }] };

  for (const via of ['PostgreSQL', 'Redis'] as const) {
    describe(`counted in ${via}`, () => {
      const schema = `rlgw_${Date.now()}_${randomBytes(4).toString('hex')}`;
      const gateways: TestFlowgate[] = [];
      let published: Published;

      before(async function () {
        if (via === 'Redis' && !(await reachable(REDIS_URL))) missingPeer(this, 'Redis', `nothing listens at ${REDIS_URL} (set FLOWGATE_TEST_REDIS_URL)`);
        await createSchema(schema);
        const database = { kind: 'postgres', url: TEST_POSTGRES_URL, schema } as const;
        const env = {
          DATABASE_URL: TEST_POSTGRES_URL, FLOWGATE_RATE_LIMIT_PER_MINUTE: '6', FLOWGATE_RATE_LIMIT_BURST: '3',
          ...(via === 'Redis' ? { FLOWGATE_REDIS_URL: REDIS_URL } : {}),
        };
        // the workflow, trigger and key are made with limiting off: the admin token's budget is small here
        const setup = await startTestFlowgate({ ...env, FLOWGATE_RATE_LIMIT_PER_MINUTE: '0' }, { database, worker: false });
        try {
          published = await publishWorkflow(setup, hello);
        } finally {
          await setup.stop();
        }
        gateways.push(await startTestFlowgate(env, { database }));
        gateways.push(await startTestFlowgate({ ...env, FLOWGATE_TASK_QUEUE: gateways[0]!.taskQueue }, { database, worker: false }));
      });

      after(async () => {
        for (const gateway of gateways) await gateway.stop();
        await dropSchema(schema);
      });

      it('accepts BURST trigger calls of one key over both gateways together, then answers 429 on both', async () => {
        const [a, b] = gateways as [TestFlowgate, TestFlowgate];
        const statuses: number[] = [];
        const retryAfters: number[] = [];
        for (let i = 0; i < 8; i++) {
          const response = await trigger(i % 2 === 0 ? a : b, published, { who: String(i) });
          statuses.push(response.status);
          if (response.status === 429) {
            retryAfters.push(Number(response.headers.get('retry-after')));
            const body = (await response.json()) as { error: string };
            assert.equal(body.error, 'rate_limited');
          } else {
            await response.body?.cancel();
          }
        }
        assert.deepEqual(statuses.slice(0, 3), [200, 200, 200], JSON.stringify(statuses));
        assert.deepEqual(statuses.slice(3), [429, 429, 429, 429, 429], 'per-process limits would have let gateway B take three more');
        for (const seconds of retryAfters) assert.ok(Number.isInteger(seconds) && seconds >= 1 && seconds <= 30, `Retry-After ${seconds}`);
      });
    });
  }
});
