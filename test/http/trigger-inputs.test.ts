/**
 * The trigger surface's inputs and answers (interface.md 2.1, 4.1, 4.2, 7, 8): each content type
 * on the API and the webhook trigger, GET with query parameters, the query/body merge, the input
 * schema, size limits, `Prefer: wait`, wrong methods, and inputs too large for a Temporal payload.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { createLogger } from '../../src/observability/logger';
import { retryAfterSeconds } from '../../src/http/routes/triggers';
import { ECHO_STEP, echoInputsWorkflow, type EchoSyncBody } from '../support/echo-workflow';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { filesUnder } from '../support/multipart';
import { clearHistory } from '../support/histories';

const typed = {
  name: 'typed-inputs',
  inputSchema: {
    type: 'object',
    required: ['name', 'count'],
    properties: { name: { type: 'string', minLength: 1 }, count: { type: 'integer', minimum: 1 }, urgent: { type: 'boolean' } },
  },
  steps: [ECHO_STEP],
};

type SyncBody = EchoSyncBody;

type Endpoint = 'api' | 'webhook';
const ENDPOINTS: Endpoint[] = ['api', 'webhook'];

describe('trigger inputs and answers (API and webhook triggers)', () => {
  let fg: TestFlowgate;
  let p: Published;

  before(async () => {
    fg = await startTestFlowgate();
    p = await publishWorkflow(fg, echoInputsWorkflow);
  });
  after(async () => {
    await fg?.stop();
  });

  function call(endpoint: Endpoint, init: { method?: string; query?: string; contentType?: string; body?: string | Buffer; headers?: Record<string, string> } = {},
    target: Published = p): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers };
    if (init.contentType) headers['Content-Type'] = init.contentType;
    let pathname = `/ext/webhook/${target.apiKey}/triggers/${target.triggerId}`;
    if (endpoint === 'api') {
      headers['X-API-KEY'] = target.apiKey;
      pathname = `/ext/triggers/${target.triggerId}`;
    }
    return fg.request(`${pathname}${init.query ? `?${init.query}` : ''}`, { method: init.method ?? 'POST', headers, body: init.body });
  }

  /** What the run saw, from a synchronous call. */
  async function seen(response: Response): Promise<{ body: SyncBody; runInputs: unknown }> {
    const text = await response.text();
    assert.equal(response.status, 200, text);
    const body = JSON.parse(text) as SyncBody;
    assert.equal(body.status, 'COMPLETE', text);
    return { body, runInputs: JSON.parse(body.results[0]?.result.result ?? 'null') };
  }

  async function expectError(response: Response, status: number, code?: string): Promise<{ error: string; message: string }> {
    const text = await response.text();
    assert.equal(response.status, status, text);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    const body = JSON.parse(text) as { error: string; message: string };
    assert.deepEqual(Object.keys(body).sort(), ['error', 'message'], text);
    if (code) assert.equal(body.error, code, text);
    assert.equal(response.headers.get('X-Pf-Run-Id'), null, 'an error starts no run');
    return body;
  }

  const sync = { 'x-api-wait': 'true' };

  for (const endpoint of ENDPOINTS) {
    describe(`${endpoint} trigger`, () => {
      it('takes a JSON object as the inputs', async () => {
        const { body, runInputs } = await seen(await call(endpoint, { contentType: 'application/json', body: '{"who":"Ann","n":2,"deep":{"a":[1]}}', headers: sync }));
        assert.deepEqual(runInputs, { who: 'Ann', n: 2, deep: { a: [1] } });
        assert.deepEqual(body.inputs, runInputs);
      });

      it('takes application/x-www-form-urlencoded pairs: repeated names become arrays, values stay text', async () => {
        const { runInputs } = await seen(await call(endpoint, {
          contentType: 'application/x-www-form-urlencoded; charset=UTF-8', body: 'who=Ann+Lee&tag=a&tag=b&empty=&n=2&caf%C3%A9=%E2%9C%93&__proto__=x', headers: sync,
        }));
        assert.deepEqual(runInputs, { who: 'Ann Lee', tag: ['a', 'b'], empty: '', n: '2', 'café': '✓', ['__proto__']: 'x' });
        assert.equal(({} as Record<string, unknown>).x, undefined);
      });

      it('takes GET query parameters as the inputs', async () => {
        const { runInputs } = await seen(await call(endpoint, { method: 'GET', query: 'who=Bo&tag=1&tag=2', headers: sync }));
        assert.deepEqual(runInputs, { who: 'Bo', tag: ['1', '2'] });
      });

      it('merges query parameters into a POST body, the body winning a clash', async () => {
        const { runInputs } = await seen(await call(endpoint, { query: 'who=query&source=query', contentType: 'application/json', body: '{"who":"body"}', headers: sync }));
        assert.deepEqual(runInputs, { who: 'body', source: 'query' });
        const form = await seen(await call(endpoint, { query: 'who=query&only=q', contentType: 'application/x-www-form-urlencoded', body: 'who=form', headers: sync }));
        assert.deepEqual(form.runInputs, { who: 'form', only: 'q' });
      });

      it("gives '' as the inputs when neither query nor body carries any", async () => {
        assert.equal((await seen(await call(endpoint, { headers: sync }))).body.inputs, '');
        assert.equal((await seen(await call(endpoint, { method: 'GET', headers: sync }))).body.inputs, '');
      });

      it('answers an asynchronous call 200 with an empty body and the run headers', async () => {
        for (const init of [{ contentType: 'application/json', body: '{"a":1}' }, { method: 'GET', query: 'a=1' }, { contentType: 'application/x-www-form-urlencoded', body: 'a=1' }]) {
          const response = await call(endpoint, init);
          assert.equal(response.status, 200);
          assert.equal(await response.text(), '');
          assert.match(response.headers.get('X-Pf-Run-Id') ?? '', /^[0-9a-f-]{36}$/);
          assert.equal(response.headers.get('X-Pf-Automation-Id'), p.workflowId);
        }
      });

      it('answers 400 invalid_json to malformed JSON and 400 to a JSON array or scalar', async () => {
        const bad = await expectError(await call(endpoint, { contentType: 'application/json', body: '{"who":' }), 400, 'invalid_json');
        assert.match(bad.message, /JSON/);
        await expectError(await call(endpoint, { contentType: 'application/json', body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]) }), 400, 'invalid_json');
        for (const body of ['[1]', '"x"', 'null', '3']) await expectError(await call(endpoint, { contentType: 'application/json', body }), 400, 'invalid_body');
      });

      it('answers 415 unsupported_media_type to other content types, compressed bodies and other charsets', async () => {
        for (const contentType of ['text/plain', 'application/xml', 'multipart/mixed; boundary=x', 'application/octet-stream']) {
          await expectError(await call(endpoint, { contentType, body: 'a=1' }), 415, 'unsupported_media_type');
        }
        await expectError(await fg.request(endpoint === 'api' ? `/ext/triggers/${p.triggerId}` : `/ext/webhook/${p.apiKey}/triggers/${p.triggerId}`,
          { method: 'POST', headers: { 'X-API-KEY': p.apiKey }, body: 'a=1' }), 415, 'unsupported_media_type');
        await expectError(await call(endpoint, { contentType: 'application/json', body: '{}', headers: { 'Content-Encoding': 'gzip' } }), 415, 'unsupported_media_type');
        await expectError(await call(endpoint, { contentType: 'application/json; charset=latin1', body: '{}' }), 415, 'unsupported_media_type');
      });

      it('answers 413 to a JSON or form body over 1 MiB, and accepts one of exactly 1 MiB (passed to the run by reference)', async () => {
        const mib = 1024 * 1024;
        const json = (size: number): string => {
          const frame = '{"big":""}';
          return `{"big":"${'j'.repeat(size - frame.length)}"}`;
        };
        const over = await expectError(await call(endpoint, { contentType: 'application/json', body: json(mib + 1) }), 413, 'payload_too_large');
        assert.match(over.message, /1 MiB \(1048576 bytes\)/);
        await expectError(await call(endpoint, { contentType: 'application/x-www-form-urlencoded', body: `big=${'f'.repeat(mib)}` }), 413, 'payload_too_large');
        const code = {
          name: 'measure', steps: [{ name: 'Measure', type: 'code', source: 'return String(inputs.big.length)' }],
        };
        const measured = await publishWorkflow(fg, code);
        const response = await call(endpoint, { contentType: 'application/json', body: json(mib), headers: sync }, measured);
        const body = (await response.json()) as SyncBody;
        assert.equal(response.status, 200);
        assert.equal(body.results[0]?.result.result, String(mib - 10));
      });

      it('answers 405 with Allow: GET, POST to other methods, HEAD included (it would start a run)', async () => {
        for (const method of ['PUT', 'PATCH', 'DELETE', 'HEAD']) {
          const response = await call(endpoint, { method });
          assert.equal(response.status, 405, method);
          assert.equal(response.headers.get('allow'), 'GET, POST', method);
          assert.equal(response.headers.get('X-Pf-Run-Id'), null);
          if (method !== 'HEAD') await expectError(response, 405, 'method_not_allowed');
        }
      });

      it('answers 401 to an unknown key and 404 to an unknown trigger', async () => {
        await expectError(await call(endpoint, { contentType: 'application/json', body: '{}' }, { ...p, apiKey: `fgk_${randomUUID().replace(/-/g, '')}xx` }), 401, 'unauthorized');
        await expectError(await call(endpoint, { method: 'GET' }, { ...p, triggerId: 'trg_nosuchtrigger1' }), 404, 'unknown_trigger');
      });

      it('validates the inputs against the inputSchema: 422 naming the fields; text values are converted, JSON values are not', async () => {
        const t = await publishWorkflow(fg, typed);
        const missing = await expectError(await call(endpoint, { contentType: 'application/json', body: '{"count":"3"}' }, t), 422, 'invalid_inputs');
        assert.match(missing.message, /name is required/);
        assert.match(missing.message, /count must be integer/);
        const empty = await expectError(await call(endpoint, {}, t), 422, 'invalid_inputs');
        assert.match(empty.message, /name is required/);
        assert.match(empty.message, /count is required/);
        const fromQuery = await seen(await call(endpoint, { method: 'GET', query: 'name=Al&count=3&urgent=true', headers: sync }, t));
        assert.deepEqual(fromQuery.runInputs, { name: 'Al', count: 3, urgent: true });
        const fromForm = await seen(await call(endpoint, { contentType: 'application/x-www-form-urlencoded', body: 'name=Al&count=4', headers: sync }, t));
        assert.deepEqual(fromForm.runInputs, { name: 'Al', count: 4 });
        const notANumber = await expectError(await call(endpoint, { method: 'GET', query: 'name=Al&count=lots' }, t), 422, 'invalid_inputs');
        assert.match(notANumber.message, /count must be integer/);
      });

      it('honours Prefer: wait=N (at most the window) with Preference-Applied; x-api-wait: false wins', async () => {
        const waited = await call(endpoint, { contentType: 'application/json', body: '{"a":1}', headers: { Prefer: 'wait=20' } });
        assert.equal(waited.headers.get('Preference-Applied'), 'wait=20');
        assert.equal((await seen(waited)).body.status, 'COMPLETE');
        const capped = await call(endpoint, { method: 'GET', query: 'a=1', headers: { Prefer: 'respond-async, wait=3600' } });
        assert.equal(capped.headers.get('Preference-Applied'), 'wait=60');
        assert.equal(capped.status, 200);
        const async = await call(endpoint, { method: 'GET', headers: { Prefer: 'wait=20', 'x-api-wait': 'false' } });
        assert.equal(async.status, 200);
        assert.equal(await async.text(), '');
        assert.equal(async.headers.get('Preference-Applied'), null);
        const malformed = await call(endpoint, { method: 'GET', headers: { Prefer: 'wait=soon;;' } });
        assert.equal(malformed.status, 200);
        assert.equal(await malformed.text(), '');
      });

      it('answers Prefer: wait=0 at once with 202, the polling handle, Location and Retry-After', async () => {
        const response = await call(endpoint, { method: 'GET', query: 'a=1', headers: { Prefer: 'wait=0' } });
        assert.equal(response.status, 202);
        assert.equal(response.headers.get('Preference-Applied'), 'wait=0');
        const runId = response.headers.get('X-Pf-Run-Id') ?? '';
        const handle = (await response.json()) as Record<string, unknown>;
        assert.equal(handle.runId, runId);
        assert.equal(handle.status, 'RUNNING');
        assert.equal(handle.statusUrl, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/status`);
        assert.equal(response.headers.get('Location'), handle.statusUrl);
        assert.equal(response.headers.get('Retry-After'), '5');
        assert.equal(handle.retryAfterSeconds, 5);
        assert.match(String(handle.message), new RegExp(runId));
      });
    });
  }

  it('advises polling every 5 seconds after a short wait and every 10 after a wait of 30 seconds or more', () => {
    assert.equal(retryAfterSeconds(0), 5);
    assert.equal(retryAfterSeconds(29), 5);
    assert.equal(retryAfterSeconds(30), 10);
    assert.equal(retryAfterSeconds(60), 10);
  });

  it('passes inputs over 256 KiB to the run by reference: the Temporal payload stays small, the steps see them whole', async () => {
    const big = 'x'.repeat(700 * 1024);
    const response = await call('api', { contentType: 'application/json', body: JSON.stringify({ big, small: 1 }), headers: sync });
    const { body, runInputs } = await seen(response);
    assert.deepEqual(runInputs, { big, small: 1 });
    assert.deepEqual(body.inputs, { big, small: 1 });
    const history = await clearHistory(fg, body.id);
    const started = history.events?.find((e) => e.workflowExecutionStartedEventAttributes);
    const payloadBytes = (started?.workflowExecutionStartedEventAttributes?.input?.payloads ?? []).reduce((n, pl) => n + (pl.data?.length ?? 0), 0);
    assert.ok(payloadBytes > 0 && payloadBytes < 64 * 1024, `the start payload is ${payloadBytes} bytes`);
    assert.ok(filesUnder(path.join(fg.dataDir, 'blobs', 'inputs')).length > 0, 'the inputs are in the blob store');
  });

  it('refuses an input named $flowgate.inputsRef (reserved) with 400', async () => {
    await expectError(await call('api', { contentType: 'application/json', body: '{"$flowgate.inputsRef":{"key":"inputs/org_default/x.json"}}' }), 400, 'invalid_body');
    await expectError(await call('webhook', { method: 'GET', query: '%24flowgate.inputsRef=x' }), 400, 'invalid_body');
  });

  it('never writes the webhook key to the log, whatever the answer', async () => {
    const lines: string[] = [];
    const logged = await startTestFlowgate({}, { log: createLogger('debug', {}, (line) => lines.push(line)) });
    try {
      const { triggerId, apiKey: key } = await publishWorkflow(logged, echoInputsWorkflow);
      const base = `${logged.url}/ext/webhook/${key}/triggers`;
      const statuses = [
        (await fetch(`${base}/${triggerId}?a=1`, { headers: { 'x-api-wait': 'true' } })).status,
        (await fetch(`${base}/${triggerId}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"a":' })).status,
        (await fetch(`${base}/${triggerId}`, { method: 'PUT' })).status,
        (await fetch(`${base}/trg_nosuchtrigger1`)).status,
        (await fetch(`${logged.url}/ext/webhook/${key}x/triggers/${triggerId}`)).status,
      ];
      assert.deepEqual(statuses, [200, 400, 405, 404, 401]);
      assert.ok(lines.length > 0);
      const leaked = lines.filter((line) => line.includes(key) || line.includes(key.slice(4)));
      assert.deepEqual(leaked, [], 'the key appears in the log');
    } finally {
      await logged.stop();
    }
  });
});
