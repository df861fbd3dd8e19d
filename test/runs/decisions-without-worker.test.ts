/**
 * Answers that signal or update a run tell the truth while no worker answers (issue 46): with the
 * worker stopped, an approval decision through the API, the admin API, a link and the console
 * answers within 5 s that it is recorded (202, naming the decision and where to read what became
 * of it), the run applies it once a worker is back, and an approver the step does not name gets
 * 403 all the same. A decision whose update the run admitted and whose signal it also got counts
 * once (that run's history replays; FLOWGATE_RECORD_HISTORY records it for the saved histories); a
 * recorded decision the run refuses when it reads it says why; a cancellation is taken.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../../temporal/worker';
import { recordHistoryPath } from '../support/ci';
import { clearHistory } from '../support/histories';
import type { DecisionOutcome } from '../../src/common/run-types';
import { decideUpdate, recordedDecisionSignal, type RunAutomationWorkflow } from '../../src/common/workflow-contracts';
import { eventually } from '../support/eventually';
import { getJson, pollStatus, publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';

/** What the brief asks of every decision's answer with the worker stopped. */
const ANSWER_WITHIN_MS = 5000;

const workflow = (required = 1) => ({
  name: `needs-approval-${randomUUID().slice(0, 8)}`,
  steps: [
    { name: 'Prepare', type: 'template', template: 'invoice {{inputs.invoice}}' },
    { name: 'Sign-off', type: 'approval', approvers: ['ann@example.com', 'bob@example.com'], required, message: 'Pay {{steps.1.result}}?', timeout: '10m' },
    { name: 'Pay', type: 'template', template: 'paid after {{steps.2.json.outcome}}' },
  ],
});

interface Answer { status: number; ms: number; body: Record<string, unknown>; location: string | null }

async function timed(send: () => Promise<Response>): Promise<Answer> {
  const began = Date.now();
  const response = await send();
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { html: text };
  }
  return { status: response.status, ms: Date.now() - began, body, location: response.headers.get('location') };
}

interface Session { cookie: string; csrf: string }

describe('runs: decisions and cancellations while no worker answers', () => {
  let fg: TestFlowgate;

  before(async () => {
    fg = await startTestFlowgate();
  });
  after(async () => {
    await fg?.startWorker();
    await fg?.stop();
  });
  afterEach(async () => {
    await fg.startWorker();
  });

  async function pausedRun(p: Published, invoice: string): Promise<string> {
    const response = await trigger(fg, p, { invoice });
    assert.equal(response.status, 200);
    const runId = response.headers.get('X-Pf-Run-Id') ?? '';
    await pollStatus(fg, p, runId, (s) => s.status === 'PAUSED' && s.stepStatus['2'] === 'PAUSED', 30_000);
    return runId;
  }

  const decideByKey = (p: Published, runId: string, body: Record<string, unknown>, apiKey = p.apiKey) => timed(() => fg.request(`/ext/webhook/${apiKey}/runs/${p.workflowId}/${runId}/approval`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  }));

  async function stepResult(p: Published, runId: string): Promise<{ outcome: string; decisions: { approver: string; actor: string; via: string }[] }> {
    const { body } = await getJson<{ results: { stepIndex: number; resultUrls: Record<string, { url: string }> }[] }>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
    const url = body.results.find((r) => r.stepIndex === 2)?.resultUrls['output.txt']?.url ?? '';
    return JSON.parse(await (await fetch(url)).text()) as { outcome: string; decisions: { approver: string; actor: string; via: string }[] };
  }

  async function outcomes(runId: string): Promise<(Omit<DecisionOutcome, 'outcome'> & { status: string })[]> {
    const { status, body } = await fg.admin<{ decisionOutcomes: (Omit<DecisionOutcome, 'outcome'> & { status: string })[] }>('GET', `/api/v1/runs/${runId}/approvals`);
    assert.equal(status, 200);
    return body.decisionOutcomes;
  }

  it('API: 202 within 5 s naming the decision, 403 for an approver the step does not name; applied once the worker is back, counted once', async () => {
    const p = await publishWorkflow(fg, workflow());
    const runId = await pausedRun(p, 'INV-1');
    await fg.stopWorker();
    const recorded = await decideByKey(p, runId, { decision: 'approve', approver: 'Ann@example.com', comment: 'while away' });
    assert.equal(recorded.status, 202, JSON.stringify(recorded.body));
    assert.ok(recorded.ms < ANSWER_WITHIN_MS, `answered in ${recorded.ms} ms`);
    const decisionId = String(recorded.body.decisionId);
    assert.match(decisionId, /^[0-9a-f-]{36}$/);
    assert.equal(recorded.body.applied, false);
    assert.match(String(recorded.body.message), /recorded/);
    const outcomeUrl = `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/approval/${decisionId}`;
    assert.equal(recorded.body.outcomeUrl, outcomeUrl);
    assert.equal(recorded.location, outcomeUrl);

    const refused = await decideByKey(p, runId, { decision: 'approve', approver: 'mallory@example.com' });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.error, 'not_an_approver');
    assert.ok(refused.ms < ANSWER_WITHIN_MS, `answered in ${refused.ms} ms`);

    const pending = await getJson<{ status: string }>(fg, outcomeUrl);
    assert.deepEqual([pending.status, pending.body.status], [200, 'recorded'], 'in the history, not applied yet');
    assert.equal((await getJson(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/approval/${randomUUID()}`)).status, 404, 'no such decision');

    await fg.startWorker();
    assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');
    const result = await stepResult(p, runId);
    assert.equal(result.outcome, 'approved');
    assert.deepEqual(result.decisions.map((d) => [d.approver, d.actor, d.via]), [['Ann@example.com', `api-key:${p.apiKeyId}`, 'api']], 'its own via and actor, once');
    const applied = await getJson<{ status: string; approver: string; via: string }>(fg, outcomeUrl);
    assert.deepEqual([applied.body.status, applied.body.approver, applied.body.via], ['applied', 'Ann@example.com', 'api']);
    // both its update (admitted while no worker ran) and its signal reached the run: one decision
    assert.deepEqual((await outcomes(runId)).map((o) => [o.decisionId, o.status]), [[decisionId, 'applied']]);

    const audit = await fg.admin<{ records: { action: string; status: number; target: { id: string }; details: Record<string, unknown> }[] }>('GET', '/api/v1/audit?limit=50');
    const mine = audit.body.records.filter((r) => r.action === 'approval.decided' && r.target.id === runId).reverse();
    assert.deepEqual(mine.map((r) => [r.status, r.details.applied, r.details.decisionId, r.details.refusal]), [
      [202, false, decisionId, undefined], [403, undefined, undefined, 'NOT_AN_APPROVER'],
    ], 'the audit trail says recorded, not applied');
  });

  it('admin API: 202 within 5 s, 403 for an approver the step does not name; the decision is applied once the worker is back', async () => {
    const p = await publishWorkflow(fg, workflow());
    const runId = await pausedRun(p, 'INV-2');
    await fg.stopWorker();
    const decide = (body: Record<string, unknown>) => timed(() => fg.request(`/api/v1/runs/${runId}/approval`, {
      method: 'POST', headers: { Authorization: `Bearer ${fg.adminToken}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body),
    }));
    const refused = await decide({ decision: 'approve', approver: 'mallory@example.com' });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.ok(refused.ms < ANSWER_WITHIN_MS, `answered in ${refused.ms} ms`);
    const recorded = await decide({ decision: 'reject', approver: 'bob@example.com', comment: 'no' });
    assert.equal(recorded.status, 202, JSON.stringify(recorded.body));
    assert.ok(recorded.ms < ANSWER_WITHIN_MS, `answered in ${recorded.ms} ms`);
    assert.equal(recorded.body.outcomeUrl, `/api/v1/runs/${runId}/approval/${String(recorded.body.decisionId)}`);
    await fg.startWorker();
    const done = await pollStatus(fg, p, runId);
    assert.equal(done.status, 'FAILED');
    assert.match(done.error ?? '', /rejected by bob@example\.com: no/);
    const report = await fg.admin<{ status: string; decision: string }>('GET', String(recorded.body.outcomeUrl));
    assert.deepEqual([report.status, report.body.status, report.body.decision], [200, 'applied', 'reject']);
  });

  it('link: 202 with a page naming the decision within 5 s, and the page says what became of it', async () => {
    const p = await publishWorkflow(fg, workflow());
    const runId = await pausedRun(p, 'INV-3');
    const { body } = await fg.admin<{ approvals: { approvers: { approver: string; link?: string }[] }[] }>('GET', `/api/v1/runs/${runId}/approvals`);
    const link = body.approvals[0]?.approvers.find((a) => a.approver === 'bob@example.com')?.link ?? '';
    assert.ok(link);
    await fg.stopWorker();
    const away = await fetch(link);
    assert.equal(away.status, 200, 'the page does not claim there is nothing to decide');
    assert.match(await away.text(), /cannot show its approval right now[\s\S]*value="approve"/);
    const began = Date.now();
    const submitted = await fetch(link, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'decision=approve&comment=later' });
    const ms = Date.now() - began;
    const page = await submitted.text();
    assert.equal(submitted.status, 202, page);
    assert.ok(ms < ANSWER_WITHIN_MS, `answered in ${ms} ms`);
    const decisionId = /decision <code>([0-9a-f-]{36})<\/code>/.exec(page)?.[1] ?? '';
    assert.ok(decisionId, page);
    assert.match(page, /applied when it resumes/);
    await fg.startWorker();
    assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');
    const result = await stepResult(p, runId);
    assert.deepEqual(result.decisions.map((d) => [d.approver, d.actor, d.via]), [['bob@example.com', 'bob@example.com', 'link']]);
    const again = await fetch(link);
    assert.equal(again.status, 409);
    assert.match(await again.text(), new RegExp(`${decisionId}</code> \\(<strong>approve</strong>\\) was applied`));
  });

  it('console: 202 with a page naming the decision within 5 s, 403 for an approver the step does not name', async () => {
    const p = await publishWorkflow(fg, workflow());
    const runId = await pausedRun(p, 'INV-4');
    const signIn = await fg.request('/console/sign-in', {
      method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: fg.url }, body: new URLSearchParams({ token: fg.adminToken }),
    });
    assert.equal(signIn.status, 303);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const runPage = await (await fg.request(`/console/runs/${runId}`, { headers: { Cookie: cookie } })).text();
    const session: Session = { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(runPage)?.[1] ?? '' };
    const stepIndex = /name="stepIndex" value="(\d+)"/.exec(runPage)?.[1];
    assert.equal(stepIndex, '2', 'the page decides for the step it shows');
    await fg.stopWorker();
    const post = (form: Record<string, string>) => timed(() => fg.request(`/console/runs/${runId}/decision`, {
      method: 'POST', redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: session.cookie, Origin: fg.url },
      body: new URLSearchParams({ csrf: session.csrf, stepIndex: '2', ...form }),
    }));
    const refused = await post({ decision: 'approve', approver: 'mallory@example.com' });
    assert.equal(refused.status, 403);
    assert.ok(refused.ms < ANSWER_WITHIN_MS, `answered in ${refused.ms} ms`);
    const recorded = await post({ decision: 'approve', approver: 'ann@example.com' });
    assert.equal(recorded.status, 202, String(recorded.body.html));
    assert.ok(recorded.ms < ANSWER_WITHIN_MS, `answered in ${recorded.ms} ms`);
    assert.match(String(recorded.body.html), /Decision recorded[\s\S]*recorded as decision [0-9a-f-]{36}/);
    await fg.startWorker();
    assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');
    const [decided] = (await stepResult(p, runId)).decisions;
    assert.equal(decided?.approver, 'ann@example.com');
    assert.match(decided?.actor ?? '', /^console:/, 'the console\'s own actor');
  });

  it('counts a decision whose update the run admitted and whose signal it also got as one', async () => {
    const p = await publishWorkflow(fg, workflow(2));
    const runId = await pausedRun(p, 'INV-5');
    await fg.stopWorker();
    const handle = fg.client.workflow.getHandle<RunAutomationWorkflow>(runId);
    const decisionId = randomUUID();
    const request = { decision: 'approve' as const, approver: 'ann@example.com', actor: `api-key:${p.apiKeyId}`, via: 'api' as const, decisionId };
    // the update is admitted; no worker answers it within the second
    await assert.rejects(fg.client.connection.withDeadline(Date.now() + 1000, () => handle.executeUpdate(decideUpdate, { args: [request], updateId: decisionId })));
    await handle.signal(recordedDecisionSignal, request);
    // and another decision of ann's, recorded too: the run refuses it when it reads it
    const again = randomUUID();
    await handle.signal(recordedDecisionSignal, { ...request, decisionId: again });
    await fg.startWorker();
    const seen = await eventually(async () => {
      const listed = await outcomes(runId);
      return listed.length > 1 ? listed : undefined;
    }, 'the decisions read');
    assert.deepEqual(seen.map((o) => [o.decisionId, o.status, o.approver, o.refusal]), [
      [decisionId, 'applied', 'ann@example.com', undefined], [again, 'refused', 'ann@example.com', 'ALREADY_DECIDED'],
    ]);
    const events = (await handle.fetchHistory()).events ?? [];
    assert.equal(events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'recordedDecision').length, 2, 'both signals reached the run');
    assert.equal(events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta?.updateId === decisionId).length, 1, 'and so did the update');
    const still = await pollStatus(fg, p, runId, () => true);
    assert.equal(still.status, 'PAUSED', 'one approval of the two needed: the duplicate was not counted, nor refused');
    const bobsKey = await fg.admin<{ key: string }>('POST', '/api/v1/api-keys', { name: 'bob\'s integration' });
    const bob = await decideByKey(p, runId, { decision: 'approve', approver: 'bob@example.com' }, bobsKey.body.key);
    assert.equal(bob.status, 200, JSON.stringify(bob.body));
    assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');
    assert.deepEqual((await stepResult(p, runId)).decisions.map((d) => d.approver), ['ann@example.com', 'bob@example.com']);
    assert.deepEqual((await outcomes(runId)).map((o) => o.status), ['applied', 'refused', 'applied']);

    // the run's history (an admitted update and its signal, a refused recorded decision) replays
    const history = await clearHistory(fg, runId);
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, runId);
    const recordTo = recordHistoryPath();
    if (recordTo) await writeFile(recordTo, `${historyToJSON(history)}\n`, { flag: 'wx' });
  });

  it('says why a recorded decision was refused when the run read it', async () => {
    const p = await publishWorkflow(fg, workflow(2));
    const runId = await pausedRun(p, 'INV-6');
    const other = await fg.admin<{ id: string; key: string }>('POST', '/api/v1/api-keys', { name: 'another integration' });
    await fg.stopWorker();
    const first = await decideByKey(p, runId, { decision: 'approve', approver: 'ann@example.com' });
    const second = await decideByKey(p, runId, { decision: 'approve', approver: 'ann@example.com' }, other.body.key);
    assert.deepEqual([first.status, second.status], [202, 202], 'neither can be judged while the run does not answer');
    await fg.startWorker();
    const report = await eventually(async () => {
      const read = await getJson<{ status: string; refusal?: string; message?: string }>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/approval/${String(second.body.decisionId)}`);
      return read.body.status === 'recorded' ? undefined : read.body;
    }, 'the second decision read by the run');
    assert.equal(report.status, 'refused');
    assert.equal(report.refusal, 'ALREADY_DECIDED');
    assert.match(report.message ?? '', /ann@example\.com has already decided/);
    assert.deepEqual((await outcomes(runId)).map((o) => [o.decisionId, o.status]), [[first.body.decisionId, 'applied'], [second.body.decisionId, 'refused']]);
  });

  it('cancels a run within 5 s while no worker answers; the run ends cancelled once one is back, and a second request is a 409', async () => {
    const p = await publishWorkflow(fg, workflow());
    const runId = await pausedRun(p, 'INV-7');
    await fg.stopWorker();
    const cancelled = await timed(() => fg.request(`/api/v1/runs/${runId}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${fg.adminToken}` } }));
    assert.equal(cancelled.status, 202, JSON.stringify(cancelled.body));
    assert.ok(cancelled.ms < ANSWER_WITHIN_MS, `answered in ${cancelled.ms} ms`);
    await fg.startWorker();
    const done = await pollStatus(fg, p, runId);
    assert.deepEqual([done.status, done.error], ['FAILED', 'the run was cancelled']);
    const again = await fg.admin<{ error: string }>('POST', `/api/v1/runs/${runId}/cancel`);
    assert.deepEqual([again.status, again.body.error], [409, 'run_closed']);
  });
});
