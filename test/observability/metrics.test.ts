import assert from 'node:assert/strict';
import http from 'node:http';
import { publishWorkflow, pollStatus, trigger, type TestFlowgate } from '../support/flowgate';
import { listenOnLoopback, type LoopbackServer } from '../support/loopback';
import { callTool, runtimeToken, startFakeSearch, startToolFlowgate, type FakeSearch } from '../tools/support';
import { parsePrometheus, valueOf, type Sample } from './prometheus-text';

describe('metrics', () => {
  let fg: TestFlowgate;
  let search: FakeSearch;
  let failing: LoopbackServer;

  before(async () => {
    search = await startFakeSearch();
    failing = await listenOnLoopback(http.createServer((_req, res) => res.writeHead(500).end('down')));
    fg = await startToolFlowgate({ FLOWGATE_SEARCH_URL: search.url, FLOWGATE_METRICS_PORT: '0' });
  });
  after(async () => {
    await fg?.stop();
    await search?.close();
    await failing?.close();
  });

  async function scrape(): Promise<Sample[]> {
    const response = await fg.request('/metrics', { headers: { Authorization: `Bearer ${fg.adminToken}` } });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return parsePrometheus(await response.text());
  }

  /** Worker-side counts arrive through a sink once the workflow task completes: look until they are there. */
  async function eventually(check: (samples: Sample[]) => boolean, what: string): Promise<Sample[]> {
    const deadline = Date.now() + 30_000;
    let samples = await scrape();
    while (!check(samples)) {
      if (Date.now() > deadline) throw new Error(`metrics never showed ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      samples = await scrape();
    }
    return samples;
  }

  it('refuses /metrics without the instance administrator\'s token', async () => {
    assert.equal((await fg.request('/metrics')).status, 401);
    assert.equal((await fg.request('/metrics', { headers: { Authorization: 'Bearer fga_not_a_real_token_at_all' } })).status, 401);
    const org = await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: 'tenant' });
    const response = await fg.request('/metrics', { headers: { Authorization: `Bearer ${org.body.adminToken}` } });
    assert.equal(response.status, 403);
    assert.equal(((await response.json()) as { error: string }).error, 'forbidden');
  });

  it('counts the runs, sync answers, HTTP requests and tool calls a few calls caused', async () => {
    const before = await scrape();
    const quick = await publishWorkflow(fg, { name: 'quick', steps: [{ name: 'Hi', type: 'template', template: 'hi {{inputs.who}}' }] });
    const slow = await publishWorkflow(fg, { name: 'slow', steps: [{ name: 'Nap', type: 'delay', duration: '2s' }] });
    const broken = await publishWorkflow(fg, { name: 'broken', steps: [{ name: 'Call', type: 'http', url: `${failing.url}/x`, timeoutMs: 5000 }] });

    for (const who of ['ann', 'bob']) {
      const answer = await trigger(fg, quick, { who }, { 'x-api-wait': 'true' });
      assert.equal(answer.status, 200);
    }
    const pending = await trigger(fg, slow, {}, { Prefer: 'wait=1' });
    assert.equal(pending.status, 202);
    const failed = await trigger(fg, broken, {});
    assert.equal(failed.status, 200);
    await pollStatus(fg, broken, failed.headers.get('X-Pf-Run-Id') ?? '');
    await pollStatus(fg, slow, pending.headers.get('X-Pf-Run-Id') ?? '');

    const { token } = await runtimeToken(fg);
    assert.equal((await callTool(fg, 'web-search', token, 'search', { query: 'otters' })).body?.result?.isError, false);
    assert.equal((await callTool(fg, 'web-search', token, 'search', { query: 'seals' })).body?.result?.isError, false);
    assert.ok((await callTool(fg, 'web-search', token, 'no_such_tool', {})).body?.error);

    const after = await eventually((s) => valueOf(s, 'flowgate_runs_ended_total', { workflow: slow.workflowId, status: 'COMPLETE' }) === 1
      && valueOf(s, 'flowgate_runs_ended_total', { workflow: broken.workflowId, status: 'FAILED' }) === 1
      && valueOf(s, 'flowgate_runs_ended_total', { workflow: quick.workflowId, status: 'COMPLETE' }) === 2, 'the four runs ended');
    const delta = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels);

    assert.equal(valueOf(after, 'flowgate_runs_started_total', { workflow: quick.workflowId }), 2);
    assert.equal(valueOf(after, 'flowgate_runs_started_total', { workflow: slow.workflowId }), 1);
    assert.equal(valueOf(after, 'flowgate_runs_started_total', { workflow: broken.workflowId }), 1);
    assert.equal(delta('flowgate_sync_calls_total', { status: '200' }), 2);
    assert.equal(delta('flowgate_sync_calls_total', { status: '202' }), 1);

    // by the route's template, never the path with its IDs
    const route = '/ext/triggers/:triggerId';
    assert.equal(delta('flowgate_http_requests_total', { route, method: 'POST', status: '200' }), 3);
    assert.equal(delta('flowgate_http_requests_total', { route, method: 'POST', status: '202' }), 1);
    assert.equal(delta('flowgate_http_request_duration_seconds_count', { route, method: 'POST', status: '200' }), 3);
    assert.ok(delta('flowgate_http_request_duration_seconds_sum', { route, method: 'POST', status: '202' }) >= 1, 'the 202 waited its second');
    assert.ok(!after.some((s) => s.labels.route?.includes(quick.triggerId)), 'no raw path is a label');
    assert.ok(delta('flowgate_http_requests_total', { route: '/ext/webhook/:apiKey/runs/:automationId/:runId/status', method: 'GET', status: '200' }) >= 2);

    assert.equal(delta('flowgate_tool_calls_total', { server: 'web-search', tool: 'search', outcome: 'ok' }), 2);
    assert.equal(delta('flowgate_tool_call_duration_seconds_count', { server: 'web-search', tool: 'search', outcome: 'ok' }), 2);
    assert.equal(delta('flowgate_tool_calls_total', { server: 'web-search', tool: '(unknown)', outcome: 'unknown_tool' }), 1);
    assert.ok(!after.some((s) => s.labels.tool === 'no_such_tool'), 'a made-up tool name is no label');
  });

  it('shows an approval as pending while it waits, and not once it is decided', async () => {
    const p = await publishWorkflow(fg, { name: 'sign-off', steps: [{ name: 'Ask', type: 'approval', approvers: ['ann'], timeout: '5m' }] });
    const base = valueOf(await scrape(), 'flowgate_approvals_pending');
    const runId = (await trigger(fg, p, {})).headers.get('X-Pf-Run-Id') ?? '';
    await pollStatus(fg, p, runId, (s) => s.status === 'PAUSED');
    await eventually((s) => valueOf(s, 'flowgate_approvals_pending') === base + 1, 'the approval waiting');
    const decided = await fg.request(`/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/approval`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decision: 'reject', approver: 'ann' }),
    });
    assert.equal(decided.status, 200);
    await pollStatus(fg, p, runId);
    const after = await eventually((s) => valueOf(s, 'flowgate_approvals_pending') === base, 'the approval decided');
    assert.equal(valueOf(after, 'flowgate_runs_ended_total', { workflow: p.workflowId, status: 'FAILED' }), 1);
  });

  it('serves the same metrics without credentials on FLOWGATE_METRICS_PORT, and nothing else there', async () => {
    assert.ok(fg.metricsUrl);
    const response = await fetch(`${fg.metricsUrl}/metrics`);
    assert.equal(response.status, 200);
    const samples = parsePrometheus(await response.text());
    assert.ok(valueOf(samples, 'flowgate_sync_calls_total', { status: '200' }) >= 2);
    assert.ok(samples.some((s) => s.name === 'flowgate_process_resident_memory_bytes'), 'the process metrics are there too');
    assert.equal((await fetch(`${fg.metricsUrl}/api/v1/workflows`)).status, 404);
  });
});
