/**
 * Per-credential rate limiting (ARCHITECTURE.md: "429 rate limited (with Retry-After)"): the token
 * bucket with a fake clock, then a real flowgate over loopback on every surface that takes a
 * credential, and one with limiting off.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { RateLimiter } from '../../src/http/rate-limit/local';
import type { Registry } from '../../src/registry';
import { createRuntimeTokens } from '../../src/crypto/runtime-tokens';
import { publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';
import { MultipartBody, filesUnder, send } from '../support/multipart';
import { RPC_HEADERS, rpc } from '../tools/support';

const hello = {
  name: 'hello',
  steps: [{ name: 'Say', type: 'template', format: 'plaintext', template: 'hello {{inputs.who}}' }],
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A clock the test moves by hand, in milliseconds. */
function fakeClock(): { now: () => number; advance(ms: number): void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => { t += ms; } };
}

describe('RateLimiter', () => {
  it('allows BURST requests at once, then refuses with the whole seconds until the next token', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ perMinute: 60, burst: 3, now: clock.now });
    for (let i = 0; i < 3; i++) assert.deepEqual(limiter.take('key-a'), { allowed: true }, `call ${i + 1}`);
    assert.deepEqual(limiter.take('key-a'), { allowed: false, retryAfterSeconds: 1 });
  });

  it('refills at the per-minute rate and never holds more than BURST', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ perMinute: 60, burst: 3, now: clock.now });
    for (let i = 0; i < 3; i++) limiter.take('key-a');
    clock.advance(999);
    assert.equal(limiter.take('key-a').allowed, false, 'a token takes a whole second at 60 a minute');
    clock.advance(1);
    assert.equal(limiter.take('key-a').allowed, true);
    assert.equal(limiter.take('key-a').allowed, false);
    clock.advance(60 * 60_000);
    for (let i = 0; i < 3; i++) assert.equal(limiter.take('key-a').allowed, true, `call ${i + 1} after an idle hour`);
    assert.equal(limiter.take('key-a').allowed, false, 'an idle hour still fills the bucket only to BURST');
  });

  it('announces a Retry-After that is enough and not more, rounded up to whole seconds', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ perMinute: 6, burst: 1, now: clock.now }); // a token every 10 s
    assert.equal(limiter.take('key-a').allowed, true);
    assert.deepEqual(limiter.take('key-a'), { allowed: false, retryAfterSeconds: 10 });
    clock.advance(2_500);
    assert.deepEqual(limiter.take('key-a'), { allowed: false, retryAfterSeconds: 8 });
    clock.advance(7_400);
    assert.deepEqual(limiter.take('key-a'), { allowed: false, retryAfterSeconds: 1 }, 'never 0: at least one second');
    clock.advance(100);
    assert.deepEqual(limiter.take('key-a'), { allowed: true });
  });

  it('charges nothing for a refused request', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ perMinute: 60, burst: 1, now: clock.now });
    limiter.take('key-a');
    for (let i = 0; i < 9; i++) {
      clock.advance(100);
      assert.equal(limiter.take('key-a').allowed, false);
    }
    clock.advance(100);
    assert.equal(limiter.take('key-a').allowed, true, 'the hammering did not push the next token back');
  });

  it('keeps one bucket per credential', () => {
    const limiter = new RateLimiter({ perMinute: 60, burst: 2, now: fakeClock().now });
    limiter.take('key-a');
    limiter.take('key-a');
    assert.equal(limiter.take('key-a').allowed, false);
    assert.equal(limiter.take('key-b').allowed, true);
    assert.equal(limiter.take('key-A').allowed, true, 'credentials are compared exactly');
  });

  it('drops buckets that have filled up again', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ perMinute: 60, burst: 3, now: clock.now });
    for (let i = 0; i < 50; i++) limiter.take(`key-${i}`);
    assert.equal(limiter.size, 50);
    clock.advance(2_999);
    limiter.take('key-late');
    assert.equal(limiter.size, 51, 'not yet full: 3 tokens take 3 s at 60 a minute');
    clock.advance(1);
    limiter.take('key-later');
    assert.equal(limiter.size, 2, 'the 50 full buckets are gone, the two recent ones stay');
  });

  it('never holds more than maxBuckets, whatever a flood of invented keys does', () => {
    const limiter = new RateLimiter({ perMinute: 60, burst: 3, maxBuckets: 100, now: fakeClock().now });
    for (let i = 0; i < 10_000; i++) {
      assert.equal(limiter.take(`invented-${i}`).allowed, true);
      assert.ok(limiter.size <= 100, `size ${limiter.size} after ${i + 1} keys`);
    }
    assert.equal(limiter.size, 100);
  });

  it('evicts the least recently used bucket when full, not a busy one', () => {
    const limiter = new RateLimiter({ perMinute: 60, burst: 2, maxBuckets: 3, now: fakeClock().now });
    limiter.take('busy');
    limiter.take('busy');
    limiter.take('idle-1');
    limiter.take('idle-2');
    assert.equal(limiter.take('busy').allowed, false); // refused, and now the most recently used
    limiter.take('newcomer'); // evicts idle-1
    assert.equal(limiter.size, 3);
    assert.equal(limiter.take('busy').allowed, false, 'the busy key kept its empty bucket');
  });

  it('refuses a configuration without a rate or a burst', () => {
    assert.throws(() => new RateLimiter({ perMinute: 0, burst: 3 }), RangeError);
    assert.throws(() => new RateLimiter({ perMinute: 60, burst: 0 }), RangeError);
  });
});

interface ErrorBody {
  error: string;
  message: string;
}

/** A 429 on the trigger, polling and management surfaces: Retry-After and exactly {error, message}. */
async function expectRateLimited(response: Response, maxRetryAfter: number): Promise<{ retryAfter: number; text: string }> {
  const text = await response.text();
  assert.equal(response.status, 429, text);
  const retryAfter = Number(response.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= maxRetryAfter, `Retry-After: ${response.headers.get('retry-after')}`);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  const body = JSON.parse(text) as ErrorBody;
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
  assert.equal(body.error, 'rate_limited');
  assert.match(body.message, /retry in \d+ s/);
  return { retryAfter, text };
}

/** One request through `agent`, resolving with the status and whether it went over a reused socket. */
function requestVia(agent: http.Agent, url: string, options: { method: string; headers: Record<string, string>; body?: Buffer }): Promise<{ status: number; reusedSocket: boolean; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: options.method, headers: options.headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, reusedSocket: request.reusedSocket, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

// A token every 10 s: the sequential calls of a test cannot earn one back by being slow.
const PER_MINUTE = 6;
const BURST = 3;
const TOKEN_SECONDS = 60 / PER_MINUTE;
const TOOLS_BASE = '/rpc';

describe(`gateway rate limiting (FLOWGATE_RATE_LIMIT_PER_MINUTE=${PER_MINUTE}, BURST=${BURST})`, () => {
  let fg: TestFlowgate;
  /** made beforehand on the same data dir with limiting off, so the limited admin token is spared */
  const made: {
    burst?: Published; otherKey?: { p: Published; secondKey: string }; keepAlive?: { p: Published; secondKey: string };
    webhook?: Published; caseless?: Published; refillKey?: string; tokenKey?: string; exemptKey?: string; runtimeToken?: string; orgAdminToken?: string;
  } = {};

  async function newKey(setup: TestFlowgate): Promise<string> {
    const created = await setup.admin<{ key: string }>('POST', '/api/v1/api-keys', { name: 'rate-limit' });
    assert.equal(created.status, 201);
    return created.body.key;
  }

  /** A management call that waits out a 429 as a well-behaved client would. */
  async function patientAdmin<T>(pathname: string): Promise<T> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const response = await fg.request(pathname, { headers: { Authorization: `Bearer ${fg.adminToken}` } });
      if (response.status === 429) {
        await sleep(Number(response.headers.get('retry-after')) * 1000);
        continue;
      }
      assert.equal(response.status, 200);
      return (await response.json()) as T;
    }
    throw new Error(`${pathname} stayed rate limited`);
  }

  async function triggerAsync(p: Published, key = p.apiKey): Promise<Response> {
    return trigger(fg, { ...p, apiKey: key }, { who: 'x' });
  }

  before(async () => {
    const setup = await startTestFlowgate(); // the test default: limiting off
    try {
      made.burst = await publishWorkflow(setup, hello);
      const other = await publishWorkflow(setup, hello);
      made.otherKey = { p: other, secondKey: await newKey(setup) };
      const keepAlive = await publishWorkflow(setup, hello);
      made.keepAlive = { p: keepAlive, secondKey: await newKey(setup) };
      made.webhook = await publishWorkflow(setup, hello);
      made.caseless = await publishWorkflow(setup, hello);
      made.refillKey = await newKey(setup);
      made.tokenKey = await newKey(setup);
      made.exemptKey = await newKey(setup);
      const token = await setup.request('/auth/token', { method: 'POST', headers: { 'X-API-KEY': await newKey(setup) } });
      made.runtimeToken = ((await token.json()) as { token: string }).token;
      const org = await setup.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: `rate-limit-${Date.now()}` });
      made.orgAdminToken = org.body.adminToken;
    } finally {
      await setup.stop(true);
    }
    fg = await startTestFlowgate({
      FLOWGATE_RATE_LIMIT_PER_MINUTE: String(PER_MINUTE), FLOWGATE_RATE_LIMIT_BURST: String(BURST), FLOWGATE_TOOLS_BASE_PATH: TOOLS_BASE,
    }, { restartOf: setup });
  });
  after(async () => {
    await fg?.stop();
  });

  it('answers the 4th trigger call of a key 429 with Retry-After and {error, message}, starting no run and storing nothing', async () => {
    const p = made.burst!;
    const runIds: string[] = [];
    for (let i = 0; i < BURST; i++) {
      const response = await triggerAsync(p);
      assert.equal(response.status, 200, await response.text());
      runIds.push(response.headers.get('x-pf-run-id') ?? '');
    }
    // The refused call carries a file: nothing of it may reach the blob store.
    const upload = new MultipartBody([{ name: 'who', value: 'refused' }, { name: 'doc', filename: 'a.txt', contentType: 'text/plain', size: 1024 * 1024 }]);
    const refused = await send(`${fg.url}/ext/triggers/${p.triggerId}`, { 'X-API-KEY': p.apiKey }, upload);
    assert.equal(refused.status, 429, refused.text);
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= TOKEN_SECONDS, `Retry-After: ${refused.headers['retry-after']}`);
    assert.deepEqual(Object.keys(refused.json()).sort(), ['error', 'message']);
    assert.equal(refused.json().error, 'rate_limited');
    assert.equal(refused.headers['x-pf-run-id'], undefined);
    await expectRateLimited(await triggerAsync(p), TOKEN_SECONDS);
    assert.deepEqual(filesUnder(path.join(fg.dataDir, 'blobs', 'attachments')), []);

    let listed: string[] = [];
    const deadline = Date.now() + 30_000;
    while (listed.length < BURST && Date.now() < deadline) {
      listed = (await patientAdmin<{ runs: { runId: string }[] }>(`/api/v1/runs?workflowId=${p.workflowId}`)).runs.map((r) => r.runId);
      if (listed.length < BURST) await sleep(200);
    }
    assert.deepEqual(listed.sort(), runIds.sort(), 'exactly the accepted calls started runs');
  });

  it('leaves another API key of the same organization unaffected', async () => {
    const { p, secondKey } = made.otherKey!;
    for (let i = 0; i < BURST; i++) assert.equal((await triggerAsync(p)).status, 200);
    await expectRateLimited(await triggerAsync(p), TOKEN_SECONDS);
    for (let i = 0; i < BURST; i++) assert.equal((await triggerAsync(p, secondKey)).status, 200, `second key, call ${i + 1}`);
  });

  it('accepts the key again once the announced Retry-After has passed', async function () {
    this.timeout(60_000);
    const key = made.refillKey!;
    const token = (): Promise<Response> => fg.request('/auth/token', { method: 'POST', headers: { 'X-API-KEY': key } });
    for (let i = 0; i < BURST; i++) assert.equal((await token()).status, 200);
    const { retryAfter } = await expectRateLimited(await token(), TOKEN_SECONDS);
    // the behaviour under test: the budget refills after Retry-After (the client waits it out, as asked)
    await sleep(retryAfter * 1000);
    assert.equal((await token()).status, 200, 'one token came back');
    await expectRateLimited(await token(), TOKEN_SECONDS);
  });

  it('keeps the connection usable after refusing a request whose body it never read', async () => {
    const { p, secondKey } = made.keepAlive!;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const url = `${fg.url}/ext/triggers/${p.triggerId}`;
      const body = Buffer.from(JSON.stringify({ who: 'x', padding: 'p'.repeat(512 * 1024) }));
      const post = (key: string) => requestVia(agent, url, { method: 'POST', headers: { 'X-API-KEY': key, 'Content-Type': 'application/json', 'Content-Length': String(body.length) }, body });
      for (let i = 0; i < BURST; i++) assert.equal((await post(p.apiKey)).status, 200);
      const refused = await post(p.apiKey);
      assert.equal(refused.status, 429, refused.text);
      const next = await post(secondKey);
      assert.equal(next.status, 200, next.text);
      assert.equal(next.reusedSocket, true, 'the request after the refusal went over the same connection');
    } finally {
      agent.destroy();
    }
  });

  it('limits the key in webhook paths (triggers, polling, approval) in the same bucket as X-API-KEY, without echoing it', async () => {
    const p = made.webhook!;
    const base = `/ext/webhook/${p.apiKey}`;
    const started = await fg.request(`${base}/triggers/${p.triggerId}?who=hook`);
    assert.equal(started.status, 200, await started.text());
    const runId = started.headers.get('x-pf-run-id') ?? '';
    assert.equal((await fg.request(`${base}/runs/${p.workflowId}/${runId}/status`)).status, 200);
    assert.equal((await triggerAsync(p)).status, 200, 'X-API-KEY draws on the same bucket');
    const refusals = [
      await fg.request(`${base}/runs/${p.workflowId}/${runId}/results`),
      await fg.request(`${base}/runs/${p.workflowId}/${runId}/approval`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"decision":"approve"}' }),
      await fg.request(`${base}/triggers/${p.triggerId}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"who":"again"}' }),
      await fg.request(`/ext/webhook/${encodeURIComponent(p.apiKey).replace(/_/g, '%5F')}/runs/${p.workflowId}/${runId}/status`),
      await triggerAsync(p),
    ];
    for (const response of refusals) {
      const { text } = await expectRateLimited(response, TOKEN_SECONDS);
      assert.ok(!text.includes(p.apiKey), 'the answer never echoes the key');
    }
  });

  it('matches surfaces without regard to case, as the router does', async () => {
    const p = made.caseless!;
    for (let i = 0; i < BURST; i++) assert.equal((await triggerAsync(p)).status, 200);
    await expectRateLimited(await fg.request(`/EXT/Triggers/${p.triggerId}`, { method: 'POST', headers: { 'X-API-KEY': p.apiKey } }), TOKEN_SECONDS);
  });

  it('limits POST /auth/token per API key', async () => {
    const token = (): Promise<Response> => fg.request('/auth/token', { method: 'POST', headers: { 'X-API-KEY': made.tokenKey! } });
    for (let i = 0; i < BURST; i++) assert.equal((await token()).status, 200);
    await expectRateLimited(await token(), TOKEN_SECONDS);
  });

  it('refuses a flood with an invented key before looking it up: 429, not 401', async () => {
    const invented = `fgk_invented${Date.now()}abcdefghijklmnop`;
    const token = (): Promise<Response> => fg.request('/auth/token', { method: 'POST', headers: { 'X-API-KEY': invented } });
    for (let i = 0; i < BURST; i++) assert.equal((await token()).status, 401);
    await expectRateLimited(await token(), TOKEN_SECONDS);
  });

  it('limits the tool gateway per runtime token under the configured base path, answering a JSON-RPC error envelope', async () => {
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    for (let i = 0; i < BURST; i++) {
      const answer = await rpc(fg, 'mcp', made.runtimeToken, ping, RPC_HEADERS, TOOLS_BASE);
      assert.equal(answer.status, 200, answer.text);
    }
    const refused = await rpc(fg, 'mcp', made.runtimeToken, ping, RPC_HEADERS, TOOLS_BASE);
    assert.equal(refused.status, 429, refused.text);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= TOKEN_SECONDS, `Retry-After: ${refused.headers.get('retry-after')}`);
    assert.match(refused.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(refused.body?.jsonrpc, '2.0');
    assert.equal(refused.body?.id, null);
    assert.equal(refused.body?.error?.code, -32000);
    assert.match(refused.body?.error?.message ?? '', /^rate limited/);

    // A fresh token of the same API key (another expiry, so another string) buys no more calls.
    const claims = JSON.parse(Buffer.from((made.runtimeToken ?? '').slice('fgr_'.length).split('.')[0] ?? '', 'base64url').toString('utf8')) as { org: string; kid: string };
    const signingKey = readFileSync(path.join(fg.dataDir, 'secrets', 'signing.key'));
    const minted = createRuntimeTokens(signingKey, {} as Registry, () => Date.now() - 5_000).issue({ orgId: claims.org, keyId: claims.kid });
    assert.notEqual(minted.token, made.runtimeToken);
    const again = await rpc(fg, 'mcp', minted.token, ping, RPC_HEADERS, TOOLS_BASE);
    assert.equal(again.status, 429, again.text);
  });

  it('limits the management API per admin token', async () => {
    const list = (): Promise<Response> => fg.request('/api/v1/connections', { headers: { Authorization: `Bearer ${made.orgAdminToken}` } });
    for (let i = 0; i < BURST; i++) assert.equal((await list()).status, 200);
    await expectRateLimited(await list(), TOKEN_SECONDS);
  });

  it('limits the sign-in endpoints per client address: OAuth registration, token, authorization and the console sign-in form share one bucket', async () => {
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
    for (let i = 0; i < BURST; i++) {
      const answer = await fg.request('/oauth/token', { method: 'POST', headers: form, body: 'grant_type=authorization_code&code=fgac_nope&client_id=x' });
      assert.notEqual(answer.status, 429, await answer.text());
    }
    const limited = await expectRateLimited(await fg.request('/oauth/register', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/cb'] }),
    }), TOKEN_SECONDS);
    assert.match(limited.text, /this address may make sign-in requests/);
    await expectRateLimited(await fg.request('/console/sign-in', { method: 'POST', headers: form, body: 'token=fga_guess' }), TOKEN_SECONDS);
    await expectRateLimited(await fg.request('/OAuth/Authorize', { method: 'POST', headers: form, body: 'step=org' }), TOKEN_SECONDS);
    // reading the pages and the metadata is not counted
    assert.notEqual((await fg.request('/.well-known/oauth-authorization-server')).status, 429);
    assert.notEqual((await fg.request('/console/sign-in')).status, 429);
  });

  it('does not limit requests without a credential, signed files, approval links or /healthz', async () => {
    const key = made.exemptKey!;
    for (let i = 0; i < BURST; i++) assert.equal((await fg.request('/auth/token', { method: 'POST', headers: { 'X-API-KEY': key } })).status, 200);
    await expectRateLimited(await fg.request('/auth/token', { method: 'POST', headers: { 'X-API-KEY': key } }), TOKEN_SECONDS);
    // A used-up credential sent where none is taken changes nothing.
    const spent = { 'X-API-KEY': key, Authorization: `Bearer ${key}` };
    for (let i = 0; i < 2 * BURST; i++) {
      assert.equal((await fg.request('/healthz', { headers: spent })).status, 200);
      assert.equal((await fg.request('/approvals/not-a-real-link', { headers: spent })).status, 403);
      assert.equal((await fg.request('/files/some/key?exp=1&sig=x', { headers: spent })).status, 403);
      assert.equal((await fg.request('/ext/triggers/trg_doesnotexist00', { method: 'POST' })).status, 401);
      assert.equal((await fg.request('/auth/token', { method: 'POST' })).status, 401);
      assert.equal((await fg.request('/api/v1/connections')).status, 401);
      assert.equal((await rpc(fg, 'mcp', undefined, { jsonrpc: '2.0', id: 1, method: 'ping' }, RPC_HEADERS, TOOLS_BASE)).status, 401);
    }
  });
});

describe('gateway with FLOWGATE_RATE_LIMIT_PER_MINUTE=0', () => {
  let fg: TestFlowgate;
  before(async () => {
    fg = await startTestFlowgate({ FLOWGATE_RATE_LIMIT_PER_MINUTE: '0', FLOWGATE_RATE_LIMIT_BURST: '1' });
  });
  after(async () => {
    await fg?.stop();
  });

  it('limits nothing', async () => {
    const p = await publishWorkflow(fg, hello);
    const calls = await Promise.all(Array.from({ length: 10 }, () => trigger(fg, p, { who: 'many' })));
    assert.deepEqual(calls.map((r) => r.status), Array(10).fill(200));
    for (let i = 0; i < 5; i++) {
      assert.equal((await fg.request('/auth/token', { method: 'POST', headers: { 'X-API-KEY': p.apiKey } })).status, 200);
      assert.equal((await fg.admin('GET', '/api/v1/connections')).status, 200);
    }
  });
});
