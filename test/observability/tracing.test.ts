import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { loadConfig } from '../../src/config/config';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../../temporal/worker';
import { recordHistoryPath } from '../support/ci';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { listenOnLoopback, type LoopbackServer } from '../support/loopback';
import { startFakeSearch, startToolFlowgate, type FakeSearch } from '../tools/support';
import { clearHistory } from '../support/histories';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
}

/** An OTLP/HTTP receiver on loopback taking the JSON encoding (what the exporter sends). */
async function startOtlpReceiver(): Promise<LoopbackServer & { spans: OtlpSpan[]; contentTypes: Set<string> }> {
  const spans: OtlpSpan[] = [];
  const contentTypes = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      contentTypes.add(req.headers['content-type'] ?? '');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const resource of body.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  return Object.assign(await listenOnLoopback(server), { spans, contentTypes });
}

/**
 * A parent run that chains two child runs (waited for, and fire-and-forget) and completes; answers
 * its ID and history. Child run IDs come from derived-child-ids, not the workflow's random numbers
 * (which Temporal's OpenTelemetry workflow interceptors draw span IDs from).
 */
async function chainingRun(fg: TestFlowgate) {
  const child = await publishWorkflow(fg, { name: 'traced-child', steps: [{ name: 'Echo', type: 'template', template: 'child {{inputs.n}}' }] });
  const parent = await publishWorkflow(fg, {
    name: 'traced-parent',
    steps: [
      { name: 'Waited', type: 'trigger', triggerId: child.triggerId, inputs: { n: 1 } },
      { name: 'Fired', type: 'trigger', triggerId: child.triggerId, inputs: { n: 2 }, wait: false },
      { name: 'After', type: 'template', template: '{{steps.1.result}}' },
      { name: 'Shout', type: 'code', source: 'return steps[3].result.toUpperCase()' },
      // $random() is seeded by the run: which coins land depends on the random numbers drawn before
      // (span IDs, with the OpenTelemetry 1 interceptors), so a replay that draws differently fails
      ...[1, 2, 3, 4, 5, 6].map((n) => ({ name: `Coin ${n}`, type: 'template', if: '$random() < 0.5', template: 'heads' })),
    ],
  });
  const response = await trigger(fg, parent, {}, { 'x-api-wait': 'true' });
  const body = (await response.json()) as { status: string; error?: string; results: { result: { result: string } }[] };
  assert.equal(body.status, 'COMPLETE', body.error);
  const runId = response.headers.get('X-Pf-Run-Id') ?? '';
  const history = await clearHistory(fg, runId);
  const children = (history.events ?? []).flatMap((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ?? []);
  assert.equal(children.length, 2, 'two chained runs');
  return { runId, history };
}

describe('tracing', () => {
  it('is off by default and on with the standard OTEL_* variables', () => {
    const base = { FLOWGATE_DATA_DIR: '/tmp/x' };
    assert.equal(loadConfig(base).tracing, undefined);
    assert.equal(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing, undefined);
    assert.equal(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracing, undefined);
    const on = loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_SERVICE_NAME: 'fg-eu', OTEL_EXPORTER_OTLP_HEADERS: 'x-token=a%3Db' }).tracing;
    assert.deepEqual([on?.tracesUrl, on?.serviceName, on?.headers], ['http://collector:4318/v1/traces', 'fg-eu', { 'x-token': 'a=b' }]);
    assert.equal(loadConfig({ ...base, OTEL_TRACES_EXPORTER: 'otlp' }).tracing?.tracesUrl, 'http://localhost:4318/v1/traces');
    assert.equal(loadConfig({ ...base, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom' }).tracing?.tracesUrl, 'http://c:4318/custom');
    assert.throws(() => loadConfig({ ...base, OTEL_TRACES_EXPORTER: 'zipkin' }), /OTEL_TRACES_EXPORTER/);
  });

  describe('with an OTLP receiver', () => {
    let fg: TestFlowgate;
    let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
    let search: FakeSearch;
    let customer: LoopbackServer;
    const seenTraceparents: string[] = [];

    before(async () => {
      receiver = await startOtlpReceiver();
      search = await startFakeSearch();
      customer = await listenOnLoopback(http.createServer((req, res) => {
        seenTraceparents.push(String(req.headers.traceparent ?? ''));
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
      }));
      fg = await startToolFlowgate({
        FLOWGATE_SEARCH_URL: search.url, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'flowgate-test', OTEL_BSP_SCHEDULE_DELAY: '50',
      });
    });
    after(async () => {
      await fg?.stop();
      await receiver?.close();
      await search?.close();
      await customer?.close();
    });

    it('links one trigger call\'s spans in one trace: gateway, workflow start, workflow, activities, outbound HTTP and the tool call', async () => {
      const p = await publishWorkflow(fg, {
        name: 'traced',
        steps: [
          { name: 'Call', type: 'http', url: `${customer.url}/orders`, method: 'POST', body: { id: '{{inputs.id}}' } },
          { name: 'Search', type: 'tool', server: 'web-search', tool: 'search', arguments: { query: 'otters' } },
        ],
      });
      // the caller's own trace: the gateway continues it
      const traceId = randomBytes(16).toString('hex');
      const callerSpan = randomBytes(8).toString('hex');
      const answer = await trigger(fg, p, { id: 7 }, { 'x-api-wait': 'true', traceparent: `00-${traceId}-${callerSpan}-01` });
      assert.equal(answer.status, 200);
      assert.equal(((await answer.json()) as { status: string }).status, 'COMPLETE');

      const wanted = ['POST /ext/triggers/:triggerId', 'StartWorkflow:runAutomation', 'RunWorkflow:runAutomation', 'RunActivity:runStep', 'HTTP POST', 'tool web-search/search'];
      const deadline = Date.now() + 30_000;
      let ours: OtlpSpan[] = [];
      while (Date.now() < deadline) {
        ours = receiver.spans.filter((s) => s.traceId === traceId);
        if (wanted.every((name) => ours.some((s) => s.name === name))) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const names = ours.map((s) => s.name);
      for (const name of wanted) assert.ok(names.includes(name), `no span ${name} in the trace; got ${JSON.stringify(names)}`);
      assert.ok(receiver.contentTypes.has('application/json'));

      // the parent chain from the outbound call back to the caller's span
      const byId = new Map(ours.map((s) => [s.spanId, s]));
      const chain = (span: OtlpSpan | undefined): string[] => {
        const out: string[] = [];
        for (let s = span; s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined) out.push(s.name);
        return out;
      };
      const httpSpan = ours.find((s) => s.name === 'HTTP POST' && chain(s).includes('RunActivity:runStep'));
      const path = chain(httpSpan);
      assert.deepEqual(path.filter((n) => wanted.includes(n)), ['HTTP POST', 'RunActivity:runStep', 'RunWorkflow:runAutomation', 'StartWorkflow:runAutomation', 'POST /ext/triggers/:triggerId'], JSON.stringify(path));
      const server = ours.find((s) => s.name === 'POST /ext/triggers/:triggerId');
      assert.equal(server?.parentSpanId, callerSpan, 'the gateway continued the caller\'s traceparent');
      assert.ok(chain(ours.find((s) => s.name === 'tool web-search/search')).includes('RunWorkflow:runAutomation'));

      // and the customer's API got the trace context with the request
      assert.ok(seenTraceparents.some((tp) => tp.startsWith(`00-${traceId}-`)), JSON.stringify(seenTraceparents));
    });

    it('replays a chaining run recorded with tracing on, without tracing, and with it (derived child run IDs)', async function () {
      this.timeout(120_000);
      const { runId, history } = await chainingRun(fg);
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, runId);
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle({ tracing: true }) }, history, runId);
      // a saved traced history (test/workflows/histories/run-automation-traced-*.json) is recorded here
      const recordTo = recordHistoryPath();
      if (recordTo) await writeFile(recordTo, `${historyToJSON(history)}\n`, { flag: 'wx' });
    });
  });

  it('replays a chaining run recorded with tracing off, with tracing on (derived child run IDs)', async function () {
    this.timeout(120_000);
    const untraced = await startTestFlowgate();
    try {
      const { runId, history } = await chainingRun(untraced);
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle({ tracing: true }) }, history, runId);
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, runId);
    } finally {
      await untraced.stop();
    }
  });
});
