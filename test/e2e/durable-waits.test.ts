import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { RUN_TIME_LIMIT_MARGIN_SECONDS } from '../../src/common/run-time-limit';
import { temporalAddress, temporalCliPath } from '../setup/root-hooks';
import { getJson, pollStatus, publishWorkflow, startTestFlowgate, trigger, type Published, type StatusBody, type TestFlowgate } from '../support/flowgate';
import { clearHistory } from '../support/histories';

const run = promisify(execFile);

interface WaitingStatus extends StatusBody {
  waitingOn?: { kind: string; stepIndex: number; resumeAt?: string; deadline?: string; required?: number; approvals?: number; approvers?: string[] };
}

interface ApprovalsBody {
  runId: string;
  approvals: { stepIndex: number; message: string; deadline: string; required: number; approvers: { approver: string; decided: boolean; link?: string }[] }[];
}

const approvalWorkflow = (approval: Record<string, unknown>) => ({
  name: 'needs-approval',
  steps: [
    { name: 'Prepare', type: 'template', template: 'invoice {{inputs.invoice}}' },
    { name: 'Sign-off', type: 'approval', approvers: ['ann@example.com', 'bob@example.com'], message: 'Pay {{steps.1.result}}?', timeout: '1m', ...approval },
    { name: 'Pay', type: 'template', template: 'paid after {{steps.2.json.outcome}}' },
  ],
});

async function startRun(fg: TestFlowgate, p: Published, inputs: Record<string, unknown> = {}): Promise<string> {
  const response = await trigger(fg, p, inputs);
  assert.equal(response.status, 200);
  return response.headers.get('X-Pf-Run-Id') ?? '';
}

const statusOf = async (fg: TestFlowgate, p: Published, runId: string) => (await getJson<WaitingStatus>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/status`)).body;
const paused = (stepIndex: number) => (s: StatusBody) => s.status === 'PAUSED' && s.stepStatus[String(stepIndex)] === 'PAUSED';

/** The run ID of the (single) run of an automation, once visibility shows it. */
async function chainedRunOf(fg: TestFlowgate, automationId: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    for await (const w of fg.client.workflow.list({ query: `FlowgateAutomationId = '${automationId}'` })) return w.workflowId;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no run of automation ${automationId} appeared`);
}

async function decideByApi(fg: TestFlowgate, p: Published, runId: string, body: Record<string, unknown>) {
  const response = await fg.request(`/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/approval`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function stepFile(fg: TestFlowgate, p: Published, runId: string, stepIndex: number, name: 'output.txt' | 'stdout.txt'): Promise<string> {
  const { body } = await getJson<{ results: { stepIndex: number; resultUrls: Record<string, { url: string }> }[] }>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
  const result = body.results.find((r) => r.stepIndex === stepIndex);
  return (await fetch(result?.resultUrls[name]?.url ?? '')).text();
}

describe('durable waits, approvals and chained workflows', () => {
  let fg: TestFlowgate;
  before(async () => {
    fg = await startTestFlowgate({ FLOWGATE_MAX_CHAIN_DEPTH: '3' });
  });
  after(async () => {
    await fg?.stop();
  });

  describe('delay and waitUntil', () => {
    it('shows a delay as PAUSED with the instant it resumes, then COMPLETE', async () => {
      const p = await publishWorkflow(fg, { name: 'naps', steps: [{ name: 'Nap', type: 'delay', duration: '6s' }, { name: 'After', type: 'template', template: 'awake' }] });
      const runId = await startRun(fg, p);
      const during = await pollStatus(fg, p, runId, paused(1), 20_000) as WaitingStatus;
      assert.equal(during.waitingOn?.kind, 'timer');
      assert.equal(during.waitingOn?.stepIndex, 1);
      assert.ok(Date.parse(during.waitingOn?.resumeAt ?? '') > Date.now() - 1000);
      const done = await pollStatus(fg, p, runId);
      assert.equal(done.status, 'COMPLETE');
      assert.equal((done as WaitingStatus).waitingOn, undefined);
    });

    it('completes a waitUntil in the past at once, and waits for one in the future taken from the inputs', async () => {
      const p = await publishWorkflow(fg, { name: 'until', steps: [{ name: 'Until', type: 'waitUntil', until: '{{inputs.at}}' }] });
      const past = await (await trigger(fg, p, { at: '2020-01-01T00:00:00Z' }, { 'x-api-wait': 'true' })).json() as { status: string };
      assert.equal(past.status, 'COMPLETE');
      const runId = await startRun(fg, p, { at: new Date(Date.now() + 8000).toISOString() }); // room for a slow first task
      const during = await pollStatus(fg, p, runId, paused(1), 20_000) as WaitingStatus;
      assert.equal(during.waitingOn?.kind, 'timer');
      assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');
      const bad = await (await trigger(fg, p, { at: 'tomorrow' }, { 'x-api-wait': 'true' })).json() as { status: string; error: string };
      assert.equal(bad.status, 'FAILED');
      assert.match(bad.error, /not an ISO 8601 instant/);
    });

    it('resumes a paused run on its own after the worker and the gateway were restarted', async () => {
      const first = await startTestFlowgate();
      const p = await publishWorkflow(first, { name: 'restart', steps: [{ name: 'Nap', type: 'delay', duration: '10s' }, { name: 'After', type: 'template', template: 'still here' }] });
      const runId = await startRun(first, p);
      await pollStatus(first, p, runId, paused(1), 20_000);
      await first.stop(true);
      const second = await startTestFlowgate({}, { restartOf: first });
      try {
        const done = await pollStatus(second, p, runId, undefined, 60_000);
        assert.equal(done.status, 'COMPLETE');
        assert.equal(await stepFile(second, p, runId, 2, 'output.txt'), 'still here');
      } finally {
        await second.stop();
      }
    });
  });

  describe('approval', () => {
    it('pauses for approval, names the approvers still expected, and continues when approved through the API', async () => {
      const p = await publishWorkflow(fg, approvalWorkflow({}));
      const runId = await startRun(fg, p, { invoice: 'INV-7' });
      const during = await pollStatus(fg, p, runId, paused(2), 20_000) as WaitingStatus;
      assert.deepEqual({ ...during.waitingOn, deadline: undefined }, {
        kind: 'approval', stepIndex: 2, deadline: undefined, required: 1, approvals: 0, approvers: ['ann@example.com', 'bob@example.com'],
      });
      assert.doesNotMatch(JSON.stringify(during), /approvals\/|sig=/, 'no links or secrets in the status');

      const decided = await decideByApi(fg, p, runId, { decision: 'approve', approver: 'Ann@example.com', comment: 'looks right' });
      assert.equal(decided.status, 200);
      const done = await pollStatus(fg, p, runId);
      assert.equal(done.status, 'COMPLETE');
      assert.equal(await stepFile(fg, p, runId, 3, 'output.txt'), 'paid after approved');
      const result = JSON.parse(await stepFile(fg, p, runId, 2, 'output.txt')) as { outcome: string; decisions: { approver: string; actor: string; decision: string; comment: string; via: string; at: string }[] };
      assert.equal(result.outcome, 'approved');
      assert.deepEqual(result.decisions.map((d) => [d.approver, d.actor, d.decision, d.comment, d.via]), [['Ann@example.com', `api-key:${p.apiKeyId}`, 'approve', 'looks right', 'api']]);
      assert.ok(!Number.isNaN(Date.parse(result.decisions[0]?.at ?? '')));
      assert.equal((await stepFile(fg, p, runId, 2, 'stdout.txt')).includes(`approve by Ann@example.com via api (actor api-key:${p.apiKeyId}): looks right`), true);

      const late = await decideByApi(fg, p, runId, { decision: 'approve', approver: 'bob@example.com' });
      assert.equal(late.status, 409);
      assert.equal(late.body.error, 'not_waiting');
    });

    it('refuses a decision by someone who is not an approver, and a second decision by the same approver', async () => {
      const p = await publishWorkflow(fg, approvalWorkflow({ required: 2 }));
      const runId = await startRun(fg, p, { invoice: 'INV-8' });
      await pollStatus(fg, p, runId, paused(2), 20_000);
      assert.equal((await decideByApi(fg, p, runId, { decision: 'approve', approver: 'mallory@example.com' })).status, 403);
      assert.equal((await decideByApi(fg, p, runId, { decision: 'approve', approver: 'ann@example.com' })).status, 200);
      const again = await decideByApi(fg, p, runId, { decision: 'approve', approver: 'ann@example.com' });
      assert.equal(again.status, 409);
      assert.equal(again.body.error, 'already_decided');
      const still = await statusOf(fg, p, runId);
      assert.equal(still.status, 'PAUSED');
      assert.deepEqual(still.waitingOn?.approvers, ['bob@example.com']);
      assert.equal(still.waitingOn?.approvals, 1);
      const other = await fg.admin<{ id: string; key: string }>('POST', '/api/v1/api-keys', { name: 'bob\'s integration' });
      assert.equal(other.status, 201);
      assert.equal((await decideByApi(fg, { ...p, apiKey: other.body.key }, runId, { decision: 'approve', approver: 'bob@example.com' })).status, 200);
      assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');
      const result = JSON.parse(await stepFile(fg, p, runId, 2, 'output.txt')) as { decisions: { approver: string; actor: string }[] };
      assert.deepEqual(result.decisions.map((d) => [d.approver, d.actor]), [['ann@example.com', `api-key:${p.apiKeyId}`], ['bob@example.com', `api-key:${other.body.id}`]]);
    });

    it('counts one API key as one approval, whatever approvers it names; a link of another approver completes the step', async () => {
      const p = await publishWorkflow(fg, approvalWorkflow({ required: 2 }));
      const runId = await startRun(fg, p, { invoice: 'INV-13' });
      await pollStatus(fg, p, runId, paused(2), 20_000);
      assert.equal((await decideByApi(fg, p, runId, { decision: 'approve', approver: 'ann@example.com' })).status, 200);
      const second = await decideByApi(fg, p, runId, { decision: 'approve', approver: 'bob@example.com' });
      assert.equal(second.status, 409);
      assert.equal(second.body.error, 'already_decided');
      assert.match(String(second.body.message), new RegExp(`api-key:${p.apiKeyId} has already approved step 2 \\(as ann@example\\.com\\)`));
      const unnamed = await decideByApi(fg, p, runId, { decision: 'approve' });
      assert.equal(unnamed.status, 409, 'nor can it approve again in its own name');
      const still = await statusOf(fg, p, runId);
      assert.equal(still.status, 'PAUSED');
      assert.equal(still.waitingOn?.approvals, 1);
      assert.deepEqual(still.waitingOn?.approvers, ['bob@example.com']);

      const { body } = await fg.admin<ApprovalsBody>('GET', `/api/v1/runs/${runId}/approvals`);
      const link = body.approvals[0]?.approvers.find((a) => a.approver === 'bob@example.com')?.link ?? '';
      const submitted = await fetch(link, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'decision=approve' });
      assert.equal(submitted.status, 200);
      assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');

      const output = await stepFile(fg, p, runId, 2, 'output.txt');
      assert.ok(!output.includes(p.apiKey), 'the key itself is never recorded');
      const result = JSON.parse(output) as { outcome: string; decisions: { approver: string; actor: string; via: string }[] };
      assert.equal(result.outcome, 'approved');
      assert.deepEqual(result.decisions.map((d) => [d.approver, d.actor, d.via]), [
        ['ann@example.com', `api-key:${p.apiKeyId}`, 'api'], ['bob@example.com', 'bob@example.com', 'link'],
      ]);
      const stdout = await stepFile(fg, p, runId, 2, 'stdout.txt');
      assert.ok(stdout.includes(`approve by ann@example.com via api (actor api-key:${p.apiKeyId})`), stdout);
      assert.ok(stdout.includes('approve by bob@example.com via link (actor bob@example.com)'), stdout);
      assert.match(stdout, /approved \(2 of 2\)/);
    });

    it('decides through a signed single-use link whose page shows what is being approved', async () => {
      const p = await publishWorkflow(fg, approvalWorkflow({}));
      const runId = await startRun(fg, p, { invoice: 'INV-<9>' });
      await pollStatus(fg, p, runId, paused(2), 20_000);
      const { status, body } = await fg.admin<ApprovalsBody>('GET', `/api/v1/runs/${runId}/approvals`);
      assert.equal(status, 200);
      assert.equal(body.approvals.length, 1);
      const bob = body.approvals[0]?.approvers.find((a) => a.approver === 'bob@example.com');
      const link = bob?.link ?? '';
      assert.ok(link.startsWith(`${fg.url}/approvals/`), link);
      assert.equal(bob?.decided, false);

      const pageResponse = await fetch(link);
      assert.equal(pageResponse.status, 200);
      const html = await pageResponse.text();
      assert.match(html, /Pay invoice INV-&lt;9&gt;\?/, 'the message is shown, escaped');
      assert.match(html, /bob@example\.com/);
      assert.match(html, /value="approve"/);

      const submitted = await fetch(link, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'decision=approve&comment=ok+by+me' });
      assert.equal(submitted.status, 200);
      assert.match(await submitted.text(), /Approved/);
      assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');
      const result = JSON.parse(await stepFile(fg, p, runId, 2, 'output.txt')) as { decisions: { approver: string; actor: string; via: string; comment: string }[] };
      assert.deepEqual(result.decisions.map((d) => [d.approver, d.actor, d.via, d.comment]), [['bob@example.com', 'bob@example.com', 'link', 'ok by me']]);

      const reused = await fetch(link, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'decision=reject' });
      assert.equal(reused.status, 409);
      assert.equal((await fetch(link)).status, 409);
      const tampered = link.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
      assert.equal((await fetch(tampered)).status, 403);
    });

    it('takes a decision from an operator\'s `temporal workflow signal`', async () => {
      const p = await publishWorkflow(fg, approvalWorkflow({}));
      const runId = await startRun(fg, p, { invoice: 'INV-10' });
      await pollStatus(fg, p, runId, paused(2), 20_000);
      await run(temporalCliPath(), ['workflow', 'signal', '--address', temporalAddress(), '--workflow-id', runId,
        '--name', 'approvalDecision', '--input', JSON.stringify({ decision: 'approve', approver: 'bob@example.com', comment: 'from the CLI' })]);
      assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');
      const result = JSON.parse(await stepFile(fg, p, runId, 2, 'output.txt')) as { decisions: { approver: string; actor: string; via: string; comment: string }[] };
      assert.deepEqual(result.decisions.map((d) => [d.approver, d.actor, d.via, d.comment]), [['bob@example.com', 'operator-signal', 'signal', 'from the CLI']]);
    });

    it('fails the run with the reason when rejected, or continues when the step says so', async () => {
      const p = await publishWorkflow(fg, approvalWorkflow({}));
      const runId = await startRun(fg, p, { invoice: 'INV-11' });
      await pollStatus(fg, p, runId, paused(2), 20_000);
      assert.equal((await decideByApi(fg, p, runId, { decision: 'reject', approver: 'ann@example.com', comment: 'wrong amount' })).status, 200);
      const done = await pollStatus(fg, p, runId);
      assert.equal(done.status, 'FAILED');
      assert.match(done.error ?? '', /rejected by ann@example\.com: wrong amount/);
      assert.deepEqual(done.stepStatus, { 1: 'COMPLETE', 2: 'FAILED', 3: 'PENDING' });

      const lenient = await publishWorkflow(fg, approvalWorkflow({ onReject: 'continue' }));
      const other = await startRun(fg, lenient, { invoice: 'INV-12' });
      await pollStatus(fg, lenient, other, paused(2), 20_000);
      await decideByApi(fg, lenient, other, { decision: 'reject' });
      assert.equal((await pollStatus(fg, lenient, other)).status, 'COMPLETE');
      assert.equal(await stepFile(fg, lenient, other, 3, 'output.txt'), 'paid after rejected');
    });

    // The default decisions on timeout run in the fast layer (test/fast/interpreter.test.ts).
  });

  // A chained run that fails and the chain depth limit also run in the fast layer.
  describe('trigger steps (chained workflows)', () => {
    it('waits for a chained run, takes its results as the step result, and the child is pollable through its own automation', async () => {
      const child = await publishWorkflow(fg, { name: 'child', steps: [{ name: 'Echo', type: 'template', template: 'child got {{inputs.value}}' }] });
      const parent = await publishWorkflow(fg, {
        name: 'parent',
        steps: [{ name: 'Call child', type: 'trigger', triggerId: child.triggerId, inputs: { value: '{{inputs.n}}' } },
          { name: 'Use', type: 'template', template: 'parent saw {{steps.1.json.results[0].result}}' }],
      });
      const body = await (await trigger(fg, parent, { n: 42 }, { 'x-api-wait': 'true' })).json() as { status: string; results: { result: { result: string } }[] };
      assert.equal(body.status, 'COMPLETE');
      const stepResult = JSON.parse(body.results[0]?.result.result ?? '{}') as { runId: string; automationId: string; status: string };
      assert.equal(stepResult.automationId, child.workflowId);
      assert.equal(stepResult.status, 'COMPLETE');
      assert.equal(body.results[1]?.result.result, 'parent saw child got 42');

      const childStatus = await getJson<StatusBody>(fg, `/ext/webhook/${child.apiKey}/runs/${child.workflowId}/${stepResult.runId}/status`);
      assert.equal(childStatus.status, 200);
      assert.equal(childStatus.body.status, 'COMPLETE');
      const described = await fg.client.workflow.getHandle(stepResult.runId).describe();
      assert.equal((described.memo as { parentRunId?: string }).parentRunId, (body as unknown as { id: string }).id);
    });

    it('fires and forgets: the step result is the chained run ID, which completes on its own', async () => {
      const child = await publishWorkflow(fg, { name: 'slow-child', steps: [{ name: 'Nap', type: 'delay', duration: '1s' }] });
      const parent = await publishWorkflow(fg, { name: 'fire', steps: [{ name: 'Fire', type: 'trigger', triggerId: child.triggerId, wait: false }] });
      const body = await (await trigger(fg, parent, {}, { 'x-api-wait': 'true' })).json() as { status: string; results: { result: { result: string } }[] };
      assert.equal(body.status, 'COMPLETE');
      const childRunId = body.results[0]?.result.result ?? '';
      assert.match(childRunId, /^[0-9a-f-]{36}$/);
      assert.equal((await pollStatus(fg, child, childRunId)).status, 'COMPLETE');
    });

    it('refuses a trigger of another organization like a missing one', async () => {
      const org = await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: `other-${Date.now()}` });
      const otherAdmin = async <T>(method: string, pathname: string, body?: unknown): Promise<T> => {
        const res = await fg.request(pathname, { method, headers: { Authorization: `Bearer ${org.body.adminToken}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
        return (await res.json()) as T;
      };
      const wf = await otherAdmin<{ id: string }>('POST', '/api/v1/workflows', { name: 'theirs', steps: [{ name: 'x', type: 'template', template: 'x' }] });
      await otherAdmin('POST', `/api/v1/workflows/${wf.id}/publish`);
      const theirTrigger = await otherAdmin<{ id: string }>('POST', '/api/v1/triggers', { workflowId: wf.id });
      const parent = await publishWorkflow(fg, { name: 'nosy', steps: [{ name: 'Call', type: 'trigger', triggerId: theirTrigger.id }] });
      const body = await (await trigger(fg, parent, {}, { 'x-api-wait': 'true' })).json() as { status: string; error: string };
      assert.equal(body.status, 'FAILED');
      assert.match(body.error, new RegExp(`no trigger ${theirTrigger.id} in this organization`));
    });

    it('stops a cycle at the configured depth with a clear reason', async () => {
      const p = await publishWorkflow(fg, { name: 'ouroboros', steps: [{ name: 'x', type: 'template', template: 'x' }] });
      const looping = { name: 'ouroboros', steps: [{ name: 'Again', type: 'trigger', triggerId: p.triggerId }] };
      assert.equal((await fg.admin('PUT', `/api/v1/workflows/${p.workflowId}`, looping)).status, 200);
      assert.equal((await fg.admin('POST', `/api/v1/workflows/${p.workflowId}/publish`)).status, 201);
      const body = await (await trigger(fg, p, {}, { 'x-api-wait': 'true' })).json() as { status: string; error: string };
      assert.equal(body.status, 'FAILED');
      assert.match(body.error, /would be 4 deep; the limit is 3 .*cycle/);
    });

    it('refuses chained inputs that do not fit the chained workflow\'s input schema, naming the field', async () => {
      const child = await publishWorkflow(fg, {
        name: 'strict-child', inputSchema: { type: 'object', required: ['amount'], properties: { amount: { type: 'number' } } },
        steps: [{ name: 'x', type: 'template', template: '{{inputs.amount}}' }],
      });
      const parent = await publishWorkflow(fg, { name: 'sloppy-parent', steps: [{ name: 'Call', type: 'trigger', triggerId: child.triggerId, inputs: { amount: 'lots' } }] });
      const body = await (await trigger(fg, parent, {}, { 'x-api-wait': 'true' })).json() as { status: string; error: string };
      assert.equal(body.status, 'FAILED');
      assert.match(body.error, /amount must be number/);
    });

    it('gives workflow-side steps the whole inputs when they travel by reference, and passes large inputs on by reference', async () => {
      const big = 'x'.repeat(300_000);
      const child = await publishWorkflow(fg, { name: 'big-child', steps: [{ name: 'Measure', type: 'code', source: 'return String(inputs.payload.length)' }] });
      const parent = await publishWorkflow(fg, {
        name: 'big-parent',
        steps: [
          { name: 'Until', type: 'waitUntil', until: '{{inputs.at}}' },
          { name: 'Call', type: 'trigger', triggerId: child.triggerId, inputs: { payload: '{{inputs.big}}' } },
        ],
      });
      const body = await (await trigger(fg, parent, { at: '2020-01-01T00:00:00Z', big }, { 'x-api-wait': 'true' })).json() as { status: string; error?: string; results: { result: { result: string } }[] };
      assert.equal(body.status, 'COMPLETE', body.error);
      const chained = JSON.parse(body.results[1]?.result.result ?? '{}') as { runId: string; results: { result: string }[] };
      assert.equal(chained.results[0]?.result, '300000');
      const history = await clearHistory(fg, chained.runId);
      const startPayloadBytes = JSON.stringify(history.events?.[0] ?? {}).length;
      assert.ok(startPayloadBytes < 64 * 1024, `the chained run started with its inputs by reference (${startPayloadBytes} bytes)`);
    });

    it('gives workflow-side steps the whole result of an earlier step that was cut in workflow state', async () => {
      const p = await publishWorkflow(fg, {
        name: 'long-result',
        steps: [
          { name: 'Long', type: 'code', source: "return { padding: 'p'.repeat(10000), at: '2020-01-01T00:00:00Z' }" },
          { name: 'Until', type: 'waitUntil', until: '{{steps.1.json.at}}' },
        ],
      });
      const body = await (await trigger(fg, p, {}, { 'x-api-wait': 'true' })).json() as { status: string; error?: string };
      assert.equal(body.status, 'COMPLETE', body.error);
    });

    it('bounds a waited-for chained run by the parent\'s remaining time', async () => {
      const child = await publishWorkflow(fg, { name: 'patient-child', timeoutSeconds: 3600, steps: [{ name: 'Nap', type: 'delay', duration: '1m' }] });
      const parent = await publishWorkflow(fg, { name: 'hasty-parent', timeoutSeconds: 20, steps: [{ name: 'Call', type: 'trigger', triggerId: child.triggerId }] });
      const runId = await startRun(fg, parent);
      const childRunId = await chainedRunOf(fg, child.workflowId);
      const described = await fg.client.workflow.getHandle(childRunId).describe();
      // The child keeps the parent's deadline itself (it ends TIMEOUT by then, callback sent);
      // Temporal's execution timeout is only the backstop RUN_TIME_LIMIT_MARGIN_SECONDS later.
      const seconds = Number(described.raw.executionConfig?.workflowExecutionTimeout?.seconds ?? 0);
      assert.ok(seconds > 0 && seconds <= 20 + RUN_TIME_LIMIT_MARGIN_SECONDS, `the child's execution timeout (${seconds}s) is within the parent's 20s plus the backstop margin`);
      const started = (await clearHistory(fg, childRunId)).events?.[0]?.workflowExecutionStartedEventAttributes;
      const childInput = JSON.parse(Buffer.from(started?.input?.payloads?.[0]?.data ?? []).toString('utf8')) as { deadline?: string };
      const parentStart = (await fg.client.workflow.getHandle(runId).describe()).startTime.getTime();
      assert.ok(childInput.deadline && Date.parse(childInput.deadline) <= parentStart + 20_000 + 1000, `the child's deadline ${childInput.deadline} is the parent's`);
      await fg.client.workflow.getHandle(runId).cancel();
    });

    it('cancels a waited-for chained run when its parent is cancelled', async () => {
      const child = await publishWorkflow(fg, { name: 'long-child', steps: [{ name: 'Nap', type: 'delay', duration: '1m' }] });
      const parent = await publishWorkflow(fg, { name: 'cancelled-parent', steps: [{ name: 'Call', type: 'trigger', triggerId: child.triggerId }] });
      const runId = await startRun(fg, parent);
      await pollStatus(fg, parent, runId, (s) => s.stepStatus['1'] === 'RUNNING', 20_000);
      const childRunId = await chainedRunOf(fg, child.workflowId);
      await pollStatus(fg, child, childRunId, paused(1), 20_000);
      await fg.client.workflow.getHandle(runId).cancel();
      const parentDone = await pollStatus(fg, parent, runId);
      assert.equal(parentDone.status, 'FAILED');
      const childDone = await pollStatus(fg, child, childRunId);
      assert.equal(childDone.status, 'FAILED');
      assert.match((childDone as WaitingStatus & { error?: string }).error ?? '', /cancel/);
    });
  });

  describe('PENDING', () => {
    it('shows PENDING while no worker runs, then COMPLETE once one starts', async () => {
      const idle = await startTestFlowgate({}, { worker: false });
      try {
        const p = await publishWorkflow(idle, { name: 'queued', steps: [{ name: 'x', type: 'template', template: 'ran' }] });
        const runId = await startRun(idle, p);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const pending = await statusOf(idle, p, runId);
        assert.equal(pending.status, 'PENDING');
        assert.deepEqual(pending.stepStatus, { 1: 'PENDING' });
        await idle.startWorker();
        assert.equal((await pollStatus(idle, p, runId)).status, 'COMPLETE');
      } finally {
        await idle.stop();
      }
    });
  });
});
