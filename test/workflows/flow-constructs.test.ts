import assert from 'node:assert/strict';
import http from 'node:http';
import { getJson, pollStatus, publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';
import { listenOnLoopback, type LoopbackServer } from '../support/loopback';

interface SyncBody {
  status: string;
  error?: string;
  results: { stepIndex: number; stepPath?: string; exitCode: number; result: { resultType: string; result: string } }[];
}

/**
 * What a caller sees of the workflow language over HTTP: nested results listed and downloadable,
 * retries of a real http step, refusals at publish time. The control flow itself (conditions,
 * branches, forEach, parallel, onError, failures) runs in the fast layer: test/fast/interpreter.test.ts.
 */
describe('workflow language through the trigger surface: nested results, http retries, publish-time refusals', () => {
  let fg: TestFlowgate;
  let upstream: LoopbackServer;
  /** requests per path, and a path that fails its first N calls */
  const hits = new Map<string, number>();
  const failFirst = new Map<string, number>();

  before(async () => {
    fg = await startTestFlowgate();
    upstream = await listenOnLoopback(http.createServer((req, res) => {
      const path = req.url ?? '/';
      const n = (hits.get(path) ?? 0) + 1;
      hits.set(path, n);
      const delay = /slow/.test(path) ? 3000 : 0;
      setTimeout(() => {
        if (n <= (failFirst.get(path) ?? 0)) {
          res.statusCode = 503;
          res.end('busy');
          return;
        }
        if (/notfound/.test(path)) {
          res.statusCode = 404;
          res.end('no');
          return;
        }
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ path, n }));
      }, delay);
    }));
  });
  after(async () => {
    await fg?.stop();
    await upstream?.close();
  });

  async function runSync(definition: unknown, inputs: unknown): Promise<{ p: Published; body: SyncBody; runId: string }> {
    const p = await publishWorkflow(fg, definition);
    const response = await trigger(fg, p, inputs, { 'x-api-wait': 'true' });
    assert.equal(response.status, 200, await response.clone().text());
    return { p, body: (await response.json()) as SyncBody, runId: response.headers.get('X-Pf-Run-Id') ?? '' };
  }
  const status = async (p: Published, runId: string) => pollStatus(fg, p, runId);
  const topLevel = (body: SyncBody, index: number) => body.results.find((r) => r.stepIndex === index && r.stepPath === undefined);

  it('forEach: runs its steps once per item with bounded concurrency and collects the results in order', async () => {
    const { p, body, runId } = await runSync({
      name: 'foreach',
      steps: [
        {
          name: 'Each', type: 'forEach', items: 'inputs.ids', concurrency: 3,
          steps: [
            { name: 'Fetch', type: 'http', url: `${upstream.url}/item/{{item}}` },
            { name: 'Label', type: 'code', source: 'return { id: item, index, path: local[1].json.path }' },
          ],
        },
        { name: 'Count', type: 'code', source: 'return steps[1].json.length' },
      ],
    }, { ids: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] });
    assert.equal(body.status, 'COMPLETE', JSON.stringify(body));
    const each = JSON.parse(topLevel(body, 1)?.result.result ?? 'null') as { id: string; index: number; path: string }[];
    assert.deepEqual(each.map((e) => e.id), ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    assert.deepEqual(each.map((e) => e.index), [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(each[3]?.path, '/item/d');
    assert.equal(topLevel(body, 2)?.result.result, '7');
    const s = await status(p, runId);
    assert.equal(s.stepStatus['1.7.2'], 'COMPLETE');
    assert.equal((s.stepInfo['1'] as { progress?: string }).progress, '7/7 done');
    const results = await getJson<{ results: { stepIndex: number; stepPath?: string; resultUrls: Record<string, { url: string }> }[] }>(fg,
      `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
    const inner = results.body.results.find((r) => r.stepPath === '1.4.1');
    assert.ok(inner, 'nested steps are listed in the results with their stepPath');
    const file = await fetch(inner.resultUrls['output.txt']!.url.startsWith('http') ? inner.resultUrls['output.txt']!.url : `${fg.url}${inner.resultUrls['output.txt']!.url}`);
    assert.deepEqual(JSON.parse(await file.text()), { path: '/item/d', n: 1 });
  });

  it('retry: a flaky http step is tried again per its policy; nonRetryable types are not', async () => {
    failFirst.set('/flaky', 2);
    const flaky = await runSync({
      name: 'retry',
      steps: [{ name: 'Flaky', type: 'http', url: `${upstream.url}/flaky`, retry: { maxAttempts: 3, initialInterval: '100ms', backoff: 1 } }],
    }, {});
    assert.equal(flaky.body.status, 'COMPLETE', JSON.stringify(flaky.body));
    assert.equal(hits.get('/flaky'), 3);

    const missing = await runSync({
      name: 'retry-non-retryable',
      steps: [{ name: 'Missing', type: 'http', url: `${upstream.url}/notfound`, retry: { maxAttempts: 5, initialInterval: '100ms', nonRetryable: ['HTTP_4XX'] } }],
    }, {});
    assert.equal(missing.body.status, 'FAILED');
    assert.equal(hits.get('/notfound'), 1);
  });

  it('refuses at publish time: unparsable expressions, unknown step references, empty branches, nesting too deep, retry on a wait', async () => {
    const refused = async (definition: unknown, pattern: RegExp) => {
      const created = await fg.admin<{ error: string; message: string }>('POST', '/api/v1/workflows', definition);
      assert.equal(created.status, 400, JSON.stringify(created.body));
      assert.equal(created.body.error, 'invalid_definition');
      assert.match(created.body.message, pattern);
    };
    const t = (name: string) => ({ name, type: 'template', template: 'x' });
    await refused({ name: 'x', steps: [{ ...t('a'), if: 'inputs.(' }] }, /steps\.0\.if: does not parse as JSONata/);
    await refused({ name: 'x', steps: [t('a'), { ...t('b'), if: 'steps.`5`.exitCode = 0' }] }, /steps\.1\.if: refers to steps\.5/);
    await refused({ name: 'x', steps: [{ name: 'b', type: 'branch', cases: [{ if: 'true', steps: [] }] }] }, /steps\.0\.cases\.0\.steps: .*at least one step/);
    const deep = (n: number): unknown => (n === 0 ? t('leaf') : { name: `l${n}`, type: 'forEach', items: '[1]', steps: [deep(n - 1)] });
    await refused({ name: 'x', steps: [deep(4)] }, /nest at most 3 deep/);
    await refused({ name: 'x', steps: [{ name: 'w', type: 'delay', duration: '1s', retry: { maxAttempts: 2 } }] }, /retry applies to template, code, http and tool steps/);
    const ok = await fg.admin('POST', '/api/v1/workflows', { name: 'x', steps: [deep(3)] });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
  });
});
