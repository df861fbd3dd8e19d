import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createSigner } from '../../src/crypto/signed-urls';
import { getJson, pollStatus, publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { listenOnLoopback } from '../support/loopback';

const greet = {
  name: 'greet',
  inputSchema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
  steps: [
    { name: 'Greeting', type: 'template', format: 'markdown', template: '# Hello {{inputs.name}}' },
    { name: 'Shout', type: 'code', source: "console.log('shouting'); return steps[1].result.toUpperCase()" },
  ],
  output: { stepIndex: 2, fileName: 'greeting.txt' },
};

interface SyncBody {
  automationId: string; automationVersion: number; automationName: string; id: string; type: string; status: string;
  stepMap: Record<string, number>; inputs: unknown; triggerId: string; started: string; startedBy: string; error?: string;
  results: { stepIndex: number; stepVersion: number; result: { stepIndex: number; resultType: string; result: string }; exitCode: number; duration: number }[];
}

interface ResultsBody {
  automationId: string; automationVersion: number; automationName: string; id: string; type: string; started: string; status: string;
  results: { stepIndex: number; stepVersion: number; exitCode: number; duration: number; resultUrls: Record<string, { url: string; mimeType: string; size: number }> }[];
  designatedOutput?: { url: string; fileName: string; mimeType: string; size: number };
}

describe('trigger → Temporal run → poll (API trigger)', () => {
  let fg: TestFlowgate;
  before(async () => {
    fg = await startTestFlowgate();
  });
  after(async () => {
    await fg?.stop();
  });

  it('answers a synchronous call with the 2.3 body: stepMap, results, exitCode, duration', async () => {
    const p = await publishWorkflow(fg, greet);
    const response = await trigger(fg, p, { name: 'Ada' }, { 'x-api-wait': 'true' });
    assert.equal(response.status, 200);
    const runId = response.headers.get('X-Pf-Run-Id');
    assert.ok(runId);
    assert.equal(response.headers.get('X-Pf-Automation-Id'), p.workflowId);
    const body = (await response.json()) as SyncBody;
    assert.equal(body.id, runId);
    assert.equal(body.automationId, p.workflowId);
    assert.equal(body.automationVersion, 1);
    assert.equal(body.automationName, 'greet');
    assert.equal(body.type, 'TRIGGER');
    assert.equal(body.status, 'COMPLETE');
    assert.deepEqual(body.stepMap, { 1: 1, 2: 1 });
    assert.deepEqual(body.inputs, { name: 'Ada' });
    assert.equal(body.triggerId, p.triggerId);
    assert.equal(body.startedBy, p.apiKeyId);
    assert.ok(!Number.isNaN(Date.parse(body.started)) && body.started.endsWith('Z'));
    assert.equal(body.results.length, 2);
    assert.deepEqual(body.results.map((r) => [r.stepIndex, r.stepVersion, r.exitCode]), [[1, 1, 0], [2, 1, 0]]);
    assert.deepEqual(body.results[0]?.result, { stepIndex: 1, resultType: 'markdown', result: '# Hello Ada' });
    assert.deepEqual(body.results[1]?.result, { stepIndex: 2, resultType: 'plaintext', result: '# HELLO ADA' });
    for (const r of body.results) assert.ok(Number.isInteger(r.duration) && r.duration >= 0);
  });

  it('reports the bumped step versions of a republished workflow in stepMap', async () => {
    const p = await publishWorkflow(fg, greet);
    const changed = { ...greet, steps: [greet.steps[0], { ...greet.steps[1], source: 'return steps[1].result.toLowerCase()' }] };
    assert.equal((await fg.admin('PUT', `/api/v1/workflows/${p.workflowId}`, changed)).status, 200);
    const v2 = await fg.admin<{ version: number; stepMap: Record<string, number> }>('POST', `/api/v1/workflows/${p.workflowId}/publish`);
    assert.deepEqual(v2.body, { workflowId: p.workflowId, version: 2, stepMap: { 1: 1, 2: 2 } });
    const body = (await (await trigger(fg, p, { name: 'Bo' }, { 'x-api-wait': 'true' })).json()) as SyncBody;
    assert.equal(body.automationVersion, 2);
    assert.deepEqual(body.stepMap, { 1: 1, 2: 2 });
    assert.deepEqual(body.results.map((r) => r.stepVersion), [1, 2]);
    assert.equal(body.results[1]?.result.result, '# hello bo');
  });

  it('answers 202 with a polling handle when the run outlives the wait window, and the run still completes', async () => {
    const short = await startTestFlowgate({ FLOWGATE_SYNC_WAIT_SECONDS: '1' });
    try {
      const slow = await slowServer(8000);
      try {
        const p = await publishWorkflow(short, {
          name: 'slow',
          steps: [{ name: 'Wait for upstream', type: 'http', url: `${slow.url}/slow` }, { name: 'Done', type: 'template', template: 'done: {{steps.1.result}}' }],
        });
        const started = Date.now();
        const response = await trigger(short, p, { a: 1 }, { 'x-api-wait': 'true' });
        assert.equal(response.status, 202);
        assert.ok(Date.now() - started < 6000, 'the 202 came after the window, not after the run (8 s)');
        const runId = response.headers.get('X-Pf-Run-Id') ?? '';
        assert.equal(response.headers.get('Retry-After'), '5');
        const handle = (await response.json()) as Record<string, unknown>;
        assert.deepEqual({ ...handle, message: undefined }, {
          runId, automationId: p.workflowId, status: 'RUNNING',
          statusUrl: `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/status`,
          resultsUrl: `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`,
          retryAfterSeconds: 5, message: undefined,
        });
        assert.match(String(handle.message), new RegExp(runId));
        assert.equal(response.headers.get('Location'), handle.statusUrl);
        const final = await pollStatus(short, p, runId);
        assert.equal(final.status, 'COMPLETE');
        const results = await getJson<ResultsBody>(short, String(handle.resultsUrl));
        const output = await (await fetch(results.body.results[1]?.resultUrls['output.txt']?.url ?? '')).text();
        assert.equal(output, 'done: slow answer');
      } finally {
        await slow.close();
      }
    } finally {
      await short.stop();
    }
  });

  it('starts an asynchronous run with an empty body and run headers; polling reaches COMPLETE and every file downloads', async () => {
    const p = await publishWorkflow(fg, greet);
    const response = await trigger(fg, p, { name: 'Cy' });
    assert.equal(response.status, 200);
    assert.equal(await response.text(), '');
    const runId = response.headers.get('X-Pf-Run-Id') ?? '';
    assert.match(runId, /^[0-9a-f-]{36}$/);
    assert.equal(response.headers.get('X-Pf-Automation-Id'), p.workflowId);

    const status = await pollStatus(fg, p, runId);
    assert.deepEqual(status, {
      automationId: p.workflowId, runId, status: 'COMPLETE',
      stepStatus: { 1: 'COMPLETE', 2: 'COMPLETE' },
      stepInfo: { 1: { status: 'COMPLETE', name: 'Greeting', executionOrder: 1 }, 2: { status: 'COMPLETE', name: 'Shout', executionOrder: 2 } },
    });

    const { status: code, body } = await getJson<ResultsBody>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
    assert.equal(code, 200);
    assert.equal(body.id, runId);
    assert.equal(body.status, 'COMPLETE');
    assert.equal(body.automationVersion, 1);
    assert.equal(body.type, 'TRIGGER');
    const expected: Record<string, string> = { '1/output.txt': '# Hello Cy', '2/output.txt': '# HELLO CY', '2/stdout.txt': 'shouting\n' };
    for (const result of body.results) {
      assert.equal(result.exitCode, 0);
      assert.deepEqual(Object.keys(result.resultUrls).sort(), ['output.txt', 'stdout.txt']);
      for (const [name, file] of Object.entries(result.resultUrls)) {
        assert.ok(file.url.startsWith(fg.url + '/files/'), file.url);
        const download = await fetch(file.url);
        assert.equal(download.status, 200);
        const text = await download.text();
        assert.equal(Buffer.byteLength(text), file.size);
        assert.equal(download.headers.get('content-type')?.split(';')[0], file.mimeType.split(';')[0]);
        const want = expected[`${result.stepIndex}/${name}`];
        if (want !== undefined) assert.equal(text, want);
      }
    }
    assert.equal(body.results[0]?.resultUrls['output.txt']?.mimeType, 'text/markdown; charset=utf-8');
    assert.ok(body.designatedOutput);
    assert.equal(body.designatedOutput.fileName, 'greeting.txt');
    const designated = await fetch(body.designatedOutput.url);
    assert.equal(await designated.text(), '# HELLO CY');
    assert.match(designated.headers.get('content-disposition') ?? '', /greeting\.txt/);
  });

  it('gives a designated output the MIME type of the name the trigger gives it: a plain-text step named echo.json is application/json', async () => {
    const p = await publishWorkflow(fg, {
      name: 'echo', inputSchema: { type: 'object', properties: { said: { type: 'string' } } },
      steps: [{ name: 'Echo', type: 'template', format: 'plaintext', template: '{"said": "{{inputs.said}}"}' }],
      output: { stepIndex: 1, fileName: 'echo.json' },
    });
    const runId = (await trigger(fg, p, { said: 'hi' }, { 'x-api-wait': 'true' })).headers.get('X-Pf-Run-Id') ?? '';
    const { body } = await getJson<ResultsBody>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
    // the step's own file keeps the type of its result
    assert.equal(body.results[0]?.resultUrls['output.txt']?.mimeType, 'text/plain; charset=utf-8');
    assert.deepEqual([body.designatedOutput?.fileName, body.designatedOutput?.mimeType], ['echo.json', 'application/json']);
    const download = await fetch(body.designatedOutput?.url ?? '');
    assert.equal(download.headers.get('content-type'), 'application/json');
    assert.deepEqual(await download.json(), { said: 'hi' });
  });

  it('refuses a tampered or expired file link', async () => {
    const p = await publishWorkflow(fg, greet);
    const runId = (await trigger(fg, p, { name: 'Di' }, { 'x-api-wait': 'true' })).headers.get('X-Pf-Run-Id') ?? '';
    const { body } = await getJson<ResultsBody>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
    const url = new URL(body.results[0]?.resultUrls['output.txt']?.url ?? '');
    const otherStep = new URL(url);
    otherStep.pathname = url.pathname.replace('/steps/1/', '/steps/2/');
    const tampered = await fetch(otherStep);
    assert.equal(tampered.status, 403);
    assert.deepEqual(await tampered.json(), { error: 'invalid_link', message: 'this link is not valid' });
    const longer = new URL(url);
    longer.searchParams.set('exp', String(Number(url.searchParams.get('exp')) + 3600));
    assert.equal((await fetch(longer)).status, 403);


    // A link signed with this instance's own key, an hour ago, for 60 seconds: genuine but expired.
    const key = readFileSync(path.join(fg.dataDir, 'secrets', 'signing.key'));
    const hourAgo = createSigner(key, fg.url, () => Date.now() - 3600_000);
    const expired = await fetch(hourAgo.sign(url.pathname.slice('/files/'.length), 60, { type: url.searchParams.get('type') ?? undefined }));
    assert.equal(expired.status, 403);
    assert.deepEqual(await expired.json(), { error: 'expired_link', message: 'this link has expired' });
    const fresh = await fetch(createSigner(key, fg.url).sign(url.pathname.slice('/files/'.length), 60));
    assert.equal(await fresh.text(), '# Hello Di');
  });

  it('gives FAILED and a non-zero exitCode when a code step throws, and names the reason', async () => {
    const p = await publishWorkflow(fg, {
      name: 'breaks',
      steps: [
        { name: 'Ok', type: 'template', template: 'fine' },
        { name: 'Boom', type: 'code', source: "throw new Error('the data is wrong')" },
        { name: 'Never', type: 'template', template: 'unreached' },
      ],
    });
    const response = await trigger(fg, p, {}, { 'x-api-wait': 'true' });
    assert.equal(response.status, 200);
    const body = (await response.json()) as SyncBody;
    assert.equal(body.status, 'FAILED');
    assert.match(body.error ?? '', /the data is wrong/);
    assert.deepEqual(body.results.map((r) => [r.stepIndex, r.exitCode]), [[1, 0], [2, 1]]);

    const status = await pollStatus(fg, p, body.id);
    assert.equal(status.status, 'FAILED');
    assert.deepEqual(status.stepStatus, { 1: 'COMPLETE', 2: 'FAILED', 3: 'PENDING' });
    assert.match(status.error ?? '', /step 2 \(Boom\) failed: Error: the data is wrong/);
    const { body: results } = await getJson<ResultsBody>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${body.id}/results`);
    assert.equal(results.status, 'FAILED');
    const log = await (await fetch(results.results[1]?.resultUrls['stdout.txt']?.url ?? '')).text();
    assert.match(log, /the data is wrong/);
  });

  it('gives TIMEOUT when the run passes its timeoutSeconds', async () => {
    const slow = await slowServer(5000);
    try {
      const p = await publishWorkflow(fg, {
        name: 'too-slow', timeoutSeconds: 2,
        steps: [{ name: 'Slow upstream', type: 'http', url: `${slow.url}/slow`, timeoutMs: 10_000 }],
      });
      const response = await trigger(fg, p, {}, { 'x-api-wait': 'true' });
      const body = (await response.json()) as SyncBody;
      assert.equal(body.status, 'TIMEOUT');
      // Step states of a timed-out run come from replaying it on a worker: wait for that too.
      const status = await pollStatus(fg, p, body.id, (s) => s.status === 'TIMEOUT' && s.stepStatus['1'] === 'TIMEOUT');
      assert.equal(status.status, 'TIMEOUT');
      assert.equal(status.stepStatus['1'], 'TIMEOUT');
      assert.match(status.error ?? '', /time limit of 2 seconds/);
    } finally {
      await slow.close();
    }
  });

  it('gives TIMEOUT when a step passes its own limit', async () => {
    const p = await publishWorkflow(fg, { name: 'spins', steps: [{ name: 'Spin', type: 'code', source: 'for (;;) {}', timeoutMs: 200 }] });
    const body = (await (await trigger(fg, p, {}, { 'x-api-wait': 'true' })).json()) as SyncBody;
    assert.equal(body.status, 'TIMEOUT');
    assert.equal(body.results[0]?.exitCode, 124);
  });

  it('starts one run for two calls with the same Idempotency-Key', async () => {
    const p = await publishWorkflow(fg, greet);
    const key = `idem-${Date.now()}`;
    const first = await trigger(fg, p, { name: 'Ed' }, { 'Idempotency-Key': key });
    const second = await trigger(fg, p, { name: 'Ed' }, { 'Idempotency-Key': key, 'x-api-wait': 'true' });
    const runId = first.headers.get('X-Pf-Run-Id');
    assert.equal(second.headers.get('X-Pf-Run-Id'), runId);
    assert.equal(second.headers.get('Idempotent-Replayed'), 'true');
    assert.equal(((await second.json()) as SyncBody).id, runId);
    const other = await trigger(fg, p, { name: 'Ed' }, { 'Idempotency-Key': `${key}-other` });
    assert.notEqual(other.headers.get('X-Pf-Run-Id'), runId);
    const listed = await fg.admin<{ runs: { runId: string }[] }>('GET', `/api/v1/runs?workflowId=${p.workflowId}`);
    await waitFor(async () => (await fg.admin<{ runs: { runId: string }[] }>('GET', `/api/v1/runs?workflowId=${p.workflowId}`)).body.runs.length === 2);
    assert.equal(listed.status, 200);
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** An upstream on loopback that answers after `delayMs`. */
export async function slowServer(delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    const timer = setTimeout(() => res.end('slow answer'), delayMs);
    res.on('close', () => clearTimeout(timer));
  });
  return listenOnLoopback(server);
}
