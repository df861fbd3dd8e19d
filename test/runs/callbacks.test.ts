import assert from 'node:assert/strict';
import { defaultPayloadConverter } from '@temporalio/common';
import { callbackWorkflowId } from '../../src/common/workflow-contracts';
import { pollStatus, publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { signedReceiver as receiver } from '../support/signed-receiver';
import { clearHistory } from '../support/histories';

async function waitFor<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface CallbackView { status: string; callback?: { state: string; attempts: number; lastError?: string } }

describe('completion callbacks', () => {
  let fg: TestFlowgate;
  let secret = '';
  before(async () => {
    fg = await startTestFlowgate();
    const read = await fg.admin<{ secret: string }>('GET', '/api/v1/webhook-secret');
    assert.equal(read.status, 200);
    secret = read.body.secret;
    assert.match(secret, /^whsec_[A-Za-z0-9+/=]{40,}$/);
  });
  after(async () => {
    await fg?.stop();
  });

  it('delivers exactly once after two 500s, signed, with the final status, across a worker restart', async function () {
    this.timeout(120_000);
    let restarting: Promise<void> | undefined;
    const rx = await receiver(() => secret, [500, 500], (n) => {
      // After the first failed attempt, the worker goes away and comes back while the retry waits.
      if (n === 1) restarting = (async () => { await fg.stopWorker(); await new Promise((r) => setTimeout(r, 1500)); await fg.startWorker(); })();
    });
    try {
      const p = await publishWorkflow(fg, {
        name: 'callback', steps: [{ name: 'Hello', type: 'template', template: 'hello {{inputs.name}}' }],
      });
      const response = await trigger(fg, p, { name: 'Ada' }, { 'X-Pf-Callback-Url': `${rx.url}/hook?x=1` });
      assert.equal(response.status, 200);
      const runId = response.headers.get('X-Pf-Run-Id') ?? '';
      const final = await pollStatus(fg, p, runId, undefined, 30_000);
      assert.equal(final.status, 'COMPLETE');
      const status = await waitFor(async () => {
        const { body } = await fg.admin<CallbackView>('GET', `/api/v1/runs/${runId}`);
        return body.callback?.state === 'DELIVERED' ? body : undefined;
      }, 60_000);
      await restarting;
      assert.deepEqual(status.callback, { state: 'DELIVERED', attempts: 3 });
      assert.equal(rx.deliveries.length, 3);
      assert.ok(rx.deliveries.every((d) => d.verified), 'every attempt carries a valid signature');
      const accepted = rx.deliveries.filter((d) => d.answered === 200);
      assert.equal(accepted.length, 1, 'exactly one accepted delivery');
      assert.equal(new Set(rx.deliveries.map((d) => d.headers['webhook-id'])).size, 1, 'the same webhook-id on every attempt');
      const event = JSON.parse(accepted[0]!.body) as { type: string; data: { runId: string; status: string; results: { result: string; resultUrls: Record<string, { url: string }> }[] } };
      assert.equal(event.type, 'run.completed');
      assert.equal(event.data.runId, runId);
      assert.equal(event.data.status, 'COMPLETE');
      assert.equal(event.data.results[0]?.result, 'hello Ada');
      assert.equal(await (await fetch(event.data.results[0]!.resultUrls['output.txt']!.url)).text(), 'hello Ada');
      // Nothing more arrives later.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(rx.deliveries.length, 3);
      // What the Temporal Web UI shows of the delivery (level 6): the child's summary names the host only, its activity the run
      const delivery = fg.client.workflow.getHandle(callbackWorkflowId(runId));
      const host = new URL(rx.url).host;
      assert.equal(await (await delivery.describe()).staticSummary(), `callback of run ${runId} (COMPLETE) to ${host}`);
      const labels = ((await clearHistory(fg, delivery)).events ?? []).flatMap((e) => (e.userMetadata?.summary ? [defaultPayloadConverter.fromPayload<string>(e.userMetadata.summary)] : []));
      assert.ok(labels.includes(`POST the callback of run ${runId} (COMPLETE)`), JSON.stringify(labels));
    } finally {
      await rx.close();
    }
  });

  it('sends a failed run\'s callback from the trigger\'s configuration, and shows PENDING while the run is open', async function () {
    this.timeout(60_000);
    const rx = await receiver(() => secret, []);
    try {
      const p = await publishWorkflow(fg, {
        name: 'callback-failing', steps: [{ name: 'Wait', type: 'delay', duration: '2s' }, { name: 'Boom', type: 'code', source: 'throw new Error("boom")' }],
      }, { callbackUrl: `${rx.url}/configured` });
      const runId = (await trigger(fg, p)).headers.get('X-Pf-Run-Id') ?? '';
      const open = await fg.admin<CallbackView>('GET', `/api/v1/runs/${runId}`);
      assert.deepEqual(open.body.callback, { state: 'PENDING', attempts: 0 });
      await waitFor(() => (rx.deliveries.length > 0 ? true : undefined), 30_000);
      const event = JSON.parse(rx.deliveries[0]!.body) as { type: string; data: { status: string; error: string } };
      assert.equal(event.type, 'run.failed');
      assert.equal(event.data.status, 'FAILED');
      assert.match(event.data.error, /boom/);
      assert.equal(rx.deliveries[0]!.headers['webhook-id'], `msg_${runId}`);
    } finally {
      await rx.close();
    }
  });

  it('ends a run over its own time limit as TIMEOUT from inside the workflow and sends its callback', async function () {
    this.timeout(90_000);
    const rx = await receiver(() => secret, []);
    try {
      const p = await publishWorkflow(fg, {
        name: 'callback-timeout', timeoutSeconds: 3,
        steps: [{ name: 'Quick', type: 'template', template: 'q' }, { name: 'Nap', type: 'delay', duration: '1h' }, { name: 'Never', type: 'template', template: 'n' }],
      });
      const response = await trigger(fg, p, {}, { 'X-Pf-Callback-Url': `${rx.url}/late`, 'x-api-wait': 'true' });
      const sync = (await response.json()) as { status: string; error?: string };
      assert.equal(sync.status, 'TIMEOUT');
      const runId = response.headers.get('X-Pf-Run-Id') ?? '';
      type Timed = CallbackView & { error?: string; stepStatus: Record<string, string> };
      const status = await waitFor(async () => {
        const { body } = await fg.admin<Timed>('GET', `/api/v1/runs/${runId}`);
        return body.callback?.state === 'DELIVERED' ? body : undefined;
      }, 60_000);
      assert.equal(status.status, 'TIMEOUT');
      assert.match(status.error ?? '', /exceeded its time limit of 3 seconds/);
      assert.deepEqual(status.stepStatus, { 1: 'COMPLETE', 2: 'TIMEOUT', 3: 'PENDING' });
      assert.deepEqual(status.callback, { state: 'DELIVERED', attempts: 1 });
      assert.equal(rx.deliveries.length, 1);
      assert.ok(rx.deliveries[0]!.verified);
      const event = JSON.parse(rx.deliveries[0]!.body) as { type: string; data: { status: string; error: string; results: { stepIndex: number }[] } };
      assert.equal(event.type, 'run.timeout');
      assert.equal(event.data.status, 'TIMEOUT');
      assert.match(event.data.error, /time limit of 3 seconds/);
      assert.deepEqual(event.data.results.map((r) => r.stepIndex), [1]);
      // Temporal closed it as Failed; the run list still says TIMEOUT (memo endedAs), under either filter.
      const listed = await waitFor(async () => {
        const { body } = await fg.admin<{ runs: { runId: string; status: string }[] }>('GET', `/api/v1/runs?workflowId=${p.workflowId}&status=TIMEOUT`);
        return body.runs.length > 0 ? body.runs : undefined;
      }, 20_000);
      assert.deepEqual(listed.map((r) => [r.runId, r.status]), [[runId, 'TIMEOUT']]);
      const failedList = await fg.admin<{ runs: unknown[] }>('GET', `/api/v1/runs?workflowId=${p.workflowId}&status=FAILED`);
      assert.deepEqual(failedList.body.runs, []);
      const described = await fg.client.workflow.getHandle(runId).describe();
      assert.equal(described.status.name, 'FAILED', 'ended by the workflow, not by Temporal\'s timeout');
    } finally {
      await rx.close();
    }
  });

  it('refuses a private address when private networks are not allowed: FAILED without retries', async function () {
    this.timeout(60_000);
    const strict = await startTestFlowgate({ FLOWGATE_ALLOW_PRIVATE_NETWORK: 'false' });
    const rx = await receiver(() => '', []);
    try {
      const p = await publishWorkflow(strict, { name: 'callback-private', steps: [{ name: 'One', type: 'template', template: 'x' }] });
      const runId = (await trigger(strict, p, {}, { 'X-Pf-Callback-Url': `${rx.url}/hook` })).headers.get('X-Pf-Run-Id') ?? '';
      const status = await waitFor(async () => {
        const { body } = await strict.admin<CallbackView>('GET', `/api/v1/runs/${runId}`);
        return body.callback?.state === 'FAILED' ? body : undefined;
      }, 30_000);
      assert.equal(status.callback?.attempts, 1);
      assert.match(status.callback?.lastError ?? '', /refused/);
      assert.equal(rx.deliveries.length, 0);
    } finally {
      await rx.close();
      await strict.stop();
    }
  });

  it('refuses a malformed callback URL before starting anything, and rotates the secret', async () => {
    const p = await publishWorkflow(fg, { name: 'callback-bad', steps: [{ name: 'One', type: 'template', template: 'x' }] });
    const bad = await trigger(fg, p, {}, { 'X-Pf-Callback-Url': 'ftp://example.com/x' });
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('X-Pf-Run-Id'), null);
    const badTrigger = await fg.admin('POST', '/api/v1/triggers', { workflowId: p.workflowId, callbackUrl: 'not a url' });
    assert.equal(badTrigger.status, 400);
    const rotated = await fg.admin<{ secret: string; previousSignsUntil: string | null }>('POST', '/api/v1/webhook-secret/rotate');
    assert.equal(rotated.status, 201);
    assert.notEqual(rotated.body.secret, secret);
    assert.ok(rotated.body.previousSignsUntil && Date.parse(rotated.body.previousSignsUntil) > Date.now());
    secret = rotated.body.secret;
  });
});
