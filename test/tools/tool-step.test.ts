import assert from 'node:assert/strict';
import { runToolStep } from '../../activities/steps/tool/tool-step';
import { ToolStepSchema } from '../../activities/steps/tool/schema';
import { buildContext } from '../../src/common/interpolate';
import type { CallOptions, ToolCaller } from '../../src/tools/dispatcher';
import { ToolCallError } from '../../src/tools/server';
import type { ToolResult } from '../../src/tools/server';
import { pollStatus, publishWorkflow, trigger, type TestFlowgate } from '../support/flowgate';
import { createOrg, startFakeSearch, startToolFlowgate, type FakeSearch } from './support';

const run = { runId: 'run-1', orgId: 'org_x', automationId: 'wf_1', automationVersion: 1, triggerId: 'trg_1', started: '2030-01-01T00:00:00Z', inputs: { q: 'otters', n: 2 } };

function fakeCaller(answer: (args: Record<string, unknown>, options: CallOptions) => Promise<ToolResult>) {
  const calls: { orgId: string; server: string; tool: string; args: Record<string, unknown>; options: CallOptions }[] = [];
  const caller: ToolCaller = {
    async call(orgId, server, tool, args, options = {}) {
      calls.push({ orgId, server, tool, args, options });
      return answer(args, options);
    },
  };
  return { caller, calls };
}

describe('tool step executor', () => {
  const step = ToolStepSchema.parse({ name: 'Search', type: 'tool', server: '/web-search', tool: 'search', arguments: { query: 'about {{inputs.q}}', limit: '{{inputs.n}}' } });
  const context = buildContext(run, []);

  it('calls the dispatcher as the run\'s org with interpolated arguments and the key <runId>:<stepIndex>', async () => {
    const { caller, calls } = fakeCaller(async (args) => ({ isError: false, value: { got: args } }));
    const execution = await runToolStep(step, context, { orgId: run.orgId, runId: run.runId, stepIndex: 3, tools: caller });
    assert.equal(calls.length, 1);
    assert.deepEqual({ ...calls[0], options: { idempotencyKey: calls[0]?.options.idempotencyKey } }, {
      orgId: 'org_x', server: 'web-search', tool: 'search', args: { query: 'about otters', limit: 2 }, options: { idempotencyKey: 'run-1:3' },
    });
    assert.equal(execution.status, 'COMPLETE');
    assert.equal(execution.resultType, 'json');
    assert.deepEqual(JSON.parse(execution.result), { got: { query: 'about otters', limit: 2 } });
  });

  it('fails the step with the reason when the tool fails, and with exit 124 when it times out', async () => {
    const failing = fakeCaller(async () => ({ isError: true, message: 'quota exceeded', value: { error: 'quota exceeded' } }));
    const failed = await runToolStep(step, context, { orgId: 'o', runId: 'r', stepIndex: 1, tools: failing.caller });
    assert.deepEqual([failed.status, failed.exitCode, failed.error], ['FAILED', 1, 'web-search/search failed: quota exceeded']);
    const refused = fakeCaller(async () => {
      throw new ToolCallError('INVALID_ARGUMENTS', 'invalid arguments for search: arguments must have required property \'query\'');
    });
    const invalid = await runToolStep(step, context, { orgId: 'o', runId: 'r', stepIndex: 1, tools: refused.caller });
    assert.equal(invalid.status, 'FAILED');
    assert.match(invalid.error ?? '', /required property 'query'/);
    const hanging = fakeCaller(() => new Promise(() => undefined));
    const slow = ToolStepSchema.parse({ ...step, timeoutMs: 150 });
    const timedOut = await runToolStep(slow, context, { orgId: 'o', runId: 'r', stepIndex: 1, tools: hanging.caller });
    assert.deepEqual([timedOut.status, timedOut.exitCode], ['TIMEOUT', 124]);
  });

  it('throws the cancellation on when the activity is cancelled, instead of reporting a timeout', async () => {
    const hanging = fakeCaller((_args, options) => new Promise((_, reject) => {
      options.signal?.addEventListener('abort', () => reject(new Error('handler aborted')), { once: true });
    }));
    const cancelled = new AbortController();
    const execution = runToolStep(step, context, { orgId: 'o', runId: 'r', stepIndex: 1, tools: hanging.caller, signal: cancelled.signal });
    const reason = new Error('activity cancelled');
    setTimeout(() => cancelled.abort(reason), 20);
    await assert.rejects(execution, (err) => err === reason);
    assert.equal(hanging.calls[0]?.options.signal?.aborted, true, 'the tool was told to stop');
  });

  it('throws unexpected errors so that Temporal retries the activity', async () => {
    const broken = fakeCaller(async () => {
      throw new Error('database is down');
    });
    await assert.rejects(runToolStep(step, context, { orgId: 'o', runId: 'r', stepIndex: 1, tools: broken.caller }), /database is down/);
  });
});

describe('workflows with tool steps', () => {
  let fg: TestFlowgate;
  let search: FakeSearch;
  before(async () => {
    search = await startFakeSearch();
    fg = await startToolFlowgate({ FLOWGATE_SEARCH_URL: search.url });
  });
  after(async () => {
    await fg?.stop();
    await search?.close();
  });

  it('runs a tool step calling web-search, then a template step over its JSON, to COMPLETE', async () => {
    const p = await publishWorkflow(fg, {
      name: 'research',
      steps: [
        { name: 'Search', type: 'tool', server: 'web-search', tool: 'search', arguments: { query: '{{inputs.topic}}', limit: '{{inputs.limit}}' } },
        { name: 'Report', type: 'template', format: 'markdown', template: '# {{inputs.topic}}\n\nTop hit: [{{steps.1.json.results.0.title}}]({{steps.1.json.results.0.url}})' },
      ],
    });
    const response = await trigger(fg, p, { topic: 'sea otters', limit: 2 }, { 'x-api-wait': 'true' });
    const body = (await response.json()) as { status: string; results: { stepIndex: number; result: { resultType: string; result: string } }[] };
    assert.equal(body.status, 'COMPLETE', JSON.stringify(body));
    assert.equal(body.results[0]?.result.resultType, 'json');
    const searched = JSON.parse(body.results[0]?.result.result ?? '') as { results: unknown[] };
    assert.equal(searched.results.length, 2);
    assert.equal(body.results[1]?.result.result, '# sea otters\n\nTop hit: [Result 1 for sea otters](https://example.org/sea%20otters/1)');
    assert.equal(search.requests[search.requests.length - 1]?.searchParams.get('q'), 'sea otters');
  });

  it('fails the run with the reason when the tool call cannot be made (another organization\'s connection)', async () => {
    const other = await createOrg(fg);
    const theirs = await fetch(`${fg.url}/api/v1/connections`, {
      method: 'POST', headers: { Authorization: `Bearer ${other.adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ application: 'mail', credentials: { from: 'x@other.test', imap: { host: '127.0.0.1', port: 1, security: 'none' } } }),
    });
    const pcid = ((await theirs.json()) as { PCID: string }).PCID;
    const p = await publishWorkflow(fg, {
      name: 'steal',
      steps: [{ name: 'Read their mail', type: 'tool', server: 'mail', tool: 'mail_list_messages', arguments: { PCID: pcid } }],
    });
    const response = await trigger(fg, p, {});
    const runId = response.headers.get('X-Pf-Run-Id') ?? '';
    const status = await pollStatus(fg, p, runId);
    assert.equal(status.status, 'FAILED');
    assert.match(status.error ?? '', new RegExp(`no connection ${pcid} in this organization`));
  });
});
