/**
 * The fast path's promises (issue 13): cached credentials still die within a second of a
 * revocation, on another replica too; every JSON surface refuses a deeply nested body with 400;
 * a synchronous call announces its run in a 103 before the wait, so a caller that drops the
 * connection can poll that run; a JSON-RPC batch counts each entry against the rate limit.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { MAX_JSON_DEPTH, jsonDepthExceeds } from '../../src/common/json-depth';
import { MAX_BATCH_ENTRIES } from '../../src/tools/mcp/batch';
import { publishWorkflow, pollStatus, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { RPC_HEADERS, rpc, runtimeToken } from '../tools/support';

const hello = { name: 'hello', steps: [{ name: 'Say', type: 'template', format: 'plaintext', template: 'hello {{inputs.who}}' }] };

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `{"a":{"a":…}}` nested `depth` levels, as text (built without recursion). */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

describe('jsonDepthExceeds', () => {
  it('counts levels of objects and arrays without recursion, scalars being level 0', () => {
    assert.equal(jsonDepthExceeds(1, 0), false);
    assert.equal(jsonDepthExceeds({}, 0), true);
    assert.equal(jsonDepthExceeds({ a: [{ b: 1 }] }, 3), false);
    assert.equal(jsonDepthExceeds({ a: [{ b: 1 }] }, 2), true);
    assert.equal(jsonDepthExceeds(JSON.parse(nested(MAX_JSON_DEPTH))), false);
    assert.equal(jsonDepthExceeds(JSON.parse(nested(MAX_JSON_DEPTH + 1))), true);
    assert.equal(jsonDepthExceeds(JSON.parse(nested(100_000))), true, 'a 100,000-level value is judged without a stack overflow');
  });
});

describe('the gateway fast path', function () {
  this.timeout(120_000);
  let fg: TestFlowgate;
  let replica: TestFlowgate | undefined;

  before(async () => {
    fg = await startTestFlowgate();
  });
  after(async () => {
    await replica?.stop(true);
    await fg?.stop();
  });

  it('refuses a revoked API key and its runtime tokens within a second, on the replica that revoked it and on another', async () => {
    // A second gateway on the same registry (and signing key): a replica that never saw the revocation.
    replica = await startTestFlowgate({}, { restartOf: fg, worker: false });
    const p = await publishWorkflow(fg, hello);
    const { token } = await (async () => {
      const response = await fetch(`${fg.url}/auth/token`, { method: 'POST', headers: { 'X-API-KEY': p.apiKey } });
      return (await response.json()) as { token: string };
    })();
    const statusOf = (on: TestFlowgate): Promise<number> => fetch(`${on.url}/ext/webhook/${p.apiKey}/runs/${p.workflowId}/no-such-run/status`).then((r) => r.status);
    const toolsStatusOf = async (on: TestFlowgate): Promise<number> => (await rpc(on, 'mcp', token, { jsonrpc: '2.0', id: 1, method: 'ping' })).status;
    // Both gateways have the key (and the token's key) cached now.
    for (const on of [fg, replica]) {
      assert.equal(await statusOf(on), 404, 'a known key reaches the route (unknown run)');
      assert.equal(await toolsStatusOf(on), 200);
    }
    const revoked = await fg.admin('DELETE', `/api/v1/api-keys/${p.apiKeyId}`);
    assert.equal(revoked.status, 204);
    const at = performance.now();
    assert.equal(await statusOf(fg), 401, 'the revoking replica refuses at once');
    assert.equal(await toolsStatusOf(fg), 401);
    const refusedAfter = async (probe: () => Promise<number>): Promise<number> => {
      // the time the refused request was sent, not when its answer arrived on a loaded machine
      while (performance.now() - at < 3000) {
        const sentAt = performance.now();
        if (await probe() === 401) return sentAt - at;
        await sleep(25);
      }
      return Infinity;
    };
    const replicaMs = await refusedAfter(() => statusOf(replica!));
    const replicaToolsMs = await refusedAfter(() => toolsStatusOf(replica!));
    assert.ok(replicaMs <= 1000, `the other replica refused the key after ${replicaMs.toFixed(0)} ms`);
    assert.ok(replicaToolsMs <= 1000, `the other replica refused the token after ${replicaToolsMs.toFixed(0)} ms`);
    const triggered = await fetch(`${replica.url}/ext/triggers/${p.triggerId}`, { method: 'POST', headers: { 'X-API-KEY': p.apiKey } });
    assert.equal(triggered.status, 401);
  });

  it('answers every poll of a finished run with the same JSON status body and ETag (304 on If-None-Match), and results whose links open', async () => {
    const p = await publishWorkflow(fg, hello);
    const done = await trigger(fg, p, { who: 'kept' }, { 'x-api-wait': 'true' });
    assert.equal(done.status, 200);
    const base = `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${done.headers.get('X-Pf-Run-Id') ?? ''}`;
    const polls = [await fg.request(`${base}/status`), await fg.request(`${base}/status`)];
    const texts: string[] = [];
    for (const poll of polls) {
      assert.equal(poll.status, 200);
      assert.equal(poll.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal(poll.headers.get('cache-control'), 'no-cache');
      const text = await poll.text();
      assert.equal(poll.headers.get('content-length'), String(Buffer.byteLength(text)));
      texts.push(text);
    }
    assert.equal(texts[1], texts[0]);
    assert.equal((JSON.parse(texts[0]!) as { status: string }).status, 'COMPLETE');
    const etag = polls[0]!.headers.get('etag') ?? '';
    assert.match(etag, /^"[A-Za-z0-9_-]{32}"$/);
    assert.equal(polls[1]!.headers.get('etag'), etag);
    assert.equal((await fg.request(`${base}/status`, { headers: { 'If-None-Match': etag } })).status, 304);
    const head = await fg.request(`${base}/status`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('etag'), etag);

    for (let i = 0; i < 2; i++) {
      const results = await fg.request(`${base}/results`);
      assert.equal(results.status, 200);
      assert.equal(results.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal(results.headers.get('cache-control'), 'no-store');
      const body = (await results.json()) as { status: string; results: { resultUrls: Record<string, { url: string }> }[] };
      assert.equal(body.status, 'COMPLETE');
      const file = await fetch(body.results[0]?.resultUrls['output.txt']?.url ?? '');
      assert.equal(file.status, 200);
      assert.equal(await file.text(), 'hello kept');
    }
  });

  it('answers 400 to a body nested 5,000 levels deep on every JSON surface', async () => {
    const p = await publishWorkflow(fg, hello);
    const deep = nested(5000);
    const json = { 'Content-Type': 'application/json' };
    const { token } = await runtimeToken(fg);
    const answers = {
      'API trigger': await fetch(`${fg.url}/ext/triggers/${p.triggerId}`, { method: 'POST', headers: { ...json, 'X-API-KEY': p.apiKey }, body: deep }),
      'webhook trigger': await fetch(`${fg.url}/ext/webhook/${p.apiKey}/triggers/${p.triggerId}`, { method: 'POST', headers: json, body: deep }),
      'sync trigger': await fetch(`${fg.url}/ext/triggers/${p.triggerId}`, { method: 'POST', headers: { ...json, 'X-API-KEY': p.apiKey, 'x-api-wait': 'true' }, body: deep }),
      'management API': await fetch(`${fg.url}/api/v1/workflows`, { method: 'POST', headers: { ...json, Authorization: `Bearer ${fg.adminToken}` }, body: deep }),
      'connections API': await fetch(`${fg.url}/api/v1/connections`, { method: 'POST', headers: { ...json, Authorization: `Bearer ${fg.adminToken}` }, body: deep }),
    };
    for (const [surface, response] of Object.entries(answers)) {
      const body = (await response.json()) as { error?: string; message?: string };
      assert.equal(response.status, 400, `${surface}: ${JSON.stringify(body)}`);
      assert.equal(body.error, 'too_deep', surface);
      assert.match(body.message ?? '', /nests deeper than 64 levels/, surface);
    }
    const tools = await rpc(fg, 'mcp', token, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"listServers","arguments":${deep}}}`);
    assert.equal(tools.status, 400, tools.text);
    assert.equal(tools.body?.error?.code, -32600);
    assert.match(tools.body?.error?.message ?? '', /nests deeper than 64 levels/);
    // Nothing was started by any of them.
    const runs = await fg.admin<{ runs: unknown[] }>('GET', `/api/v1/runs?workflowId=${p.workflowId}`);
    assert.deepEqual(runs.body.runs, []);
  });

  it('announces the run in a 103 before a sync wait; a caller that drops then can poll that run, and no second run starts', async () => {
    const p = await publishWorkflow(fg, { name: 'slow', steps: [{ name: 'Wait', type: 'delay', duration: '2s' }, { name: 'Say', type: 'template', template: 'done' }] });
    const url = new URL(`${fg.url}/ext/triggers/${p.triggerId}`);
    const hints = await new Promise<{ statusCode: number; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', headers: { 'X-API-KEY': p.apiKey, 'x-api-wait': 'true', 'Content-Type': 'application/json' } });
      req.on('information', (info) => {
        resolve({ statusCode: info.statusCode, headers: info.headers });
        req.destroy(); // the caller's connection drops during the wait
      });
      req.on('response', () => reject(new Error('the final answer came before any 103')));
      req.on('error', () => undefined);
      req.end('{}');
    });
    assert.equal(hints.statusCode, 103);
    const runId = String(hints.headers['x-pf-run-id'] ?? '');
    assert.match(runId, /^[0-9a-f-]{36}$/);
    assert.equal(hints.headers['x-pf-automation-id'], p.workflowId);
    assert.match(String(hints.headers.link ?? ''), new RegExp(`/runs/${p.workflowId}/${runId}/status>; rel="monitor"`));
    const done = await pollStatus(fg, p, runId);
    assert.equal(done.status, 'COMPLETE');
    const runs = await fg.admin<{ runs: { runId: string }[] }>('GET', `/api/v1/runs?workflowId=${p.workflowId}`);
    assert.deepEqual(runs.body.runs.map((r) => r.runId), [runId], 'one run: the one the 103 named');
  });

  it('sends no 103 for an asynchronous call, and fetch callers see only the final answer of a sync one', async () => {
    const p = await publishWorkflow(fg, hello);
    const informational: number[] = [];
    await new Promise<void>((resolve, reject) => {
      const req = http.request(new URL(`${fg.url}/ext/triggers/${p.triggerId}`), { method: 'POST', headers: { 'X-API-KEY': p.apiKey } });
      req.on('information', (info) => informational.push(info.statusCode));
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end();
    });
    assert.deepEqual(informational, []);
    const sync = await trigger(fg, p, { who: 'fetch' }, { 'x-api-wait': 'true' });
    assert.equal(sync.status, 200);
    assert.ok(sync.headers.get('X-Pf-Run-Id'));
  });
});

describe('JSON-RPC batches and the rate limit', function () {
  this.timeout(120_000);
  let fg: TestFlowgate;

  before(async () => {
    // One token a minute: nothing refills during the test, every call is counted.
    fg = await startTestFlowgate({ FLOWGATE_RATE_LIMIT_PER_MINUTE: '1', FLOWGATE_RATE_LIMIT_BURST: '100' });
  });
  after(async () => {
    await fg?.stop();
  });

  const pings = (n: number, from = 1): unknown[] => Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: from + i, method: 'ping' }));

  it('counts a 100-entry batch as 100 calls: it uses the whole burst, and the next request is refused', async () => {
    const { token } = await runtimeToken(fg);
    const batch = await rpc(fg, 'mcp', token, pings(100));
    assert.equal(batch.status, 200, batch.text);
    const answers = JSON.parse(batch.text) as { id: number; result?: unknown; error?: unknown }[];
    assert.equal(answers.length, 100);
    assert.ok(answers.every((a) => a.result !== undefined), 'every entry had a token');
    const next = await rpc(fg, 'mcp', token, { jsonrpc: '2.0', id: 101, method: 'ping' });
    assert.equal(next.status, 429);
    assert.ok(Number(next.headers.get('Retry-After')) >= 1);
  });

  it('answers the entries past the limit with an error each and runs the rest', async () => {
    const { token } = await runtimeToken(fg);
    const first = await rpc(fg, 'mcp', token, pings(40));
    assert.equal(first.status, 200);
    const second = await rpc(fg, 'mcp', token, pings(80, 1000));
    assert.equal(second.status, 200, second.text);
    const answers = JSON.parse(second.text) as { id: number; result?: unknown; error?: { code: number; message: string } }[];
    assert.equal(answers.filter((a) => a.result !== undefined).length, 60, '100 tokens - 40 = 60 entries run');
    const refused = answers.filter((a) => a.error !== undefined);
    assert.equal(refused.length, 20);
    assert.deepEqual(refused.map((a) => a.id), Array.from({ length: 20 }, (_, i) => 1060 + i), 'the last entries are the refused ones, each with its id');
    assert.match(refused[0]!.error!.message, /rate limited/);
    assert.ok(Number(second.headers.get('Retry-After')) >= 1);
  });

  it(`refuses a batch of more than ${MAX_BATCH_ENTRIES} entries as an invalid request`, async () => {
    const { token } = await runtimeToken(fg);
    const answer = await rpc(fg, 'mcp', token, pings(MAX_BATCH_ENTRIES + 1), RPC_HEADERS);
    assert.equal(answer.status, 400);
    assert.equal(answer.body?.error?.code, -32600);
    assert.match(answer.body?.error?.message ?? '', /at most 100 entries/);
  });
});
