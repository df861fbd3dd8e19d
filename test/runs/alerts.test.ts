/**
 * Alerts on run outcomes (issue 54), end to end on the suite's Temporal and real HTTP on loopback:
 * a burst of failed runs with a failure_rate rule makes exactly one webhook delivery, signed and
 * verified by the receiver; a run_failed rule starts the error-handler workflow with the failed
 * run's ID, workflow and error; an e-mail goes through a mail connection to a real SMTP server on
 * loopback; a private address is refused by the outbound guard; a viewer cannot create or read rules.
 *
 * FLOWGATE_TEST_ALERT_FAILURES sets the burst (20 by default, to keep the suite short on 2 cores;
 * the figure is 50: `FLOWGATE_TEST_ALERT_FAILURES=50`).
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { alertWorkflowId } from '../../src/common/alerts';
import { alertStateQuery } from '../../src/common/workflow-contracts';
import { eventually } from '../support/eventually';
import { pollStatus, publishWorkflow, trigger, startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { signedReceiver as receiver } from '../support/signed-receiver';
import { randomUUID } from 'node:crypto';
import { SEARCH_ATTRIBUTES } from '../../src/common/search-attributes';
import { WORKFLOW_TYPES } from '../../src/common/workflow-contracts';
import { hashSecret } from '../../src/crypto/secrets';

const FAILURES = Number(process.env.FLOWGATE_TEST_ALERT_FAILURES ?? 20);
const THRESHOLD = 5;

/** A real SMTP server (the smtp-server library) on loopback, without auth, keeping what it receives. */
async function startSmtp(): Promise<{ port: number; received: { to: string[]; raw: string }[]; close(): Promise<void> }> {
  const received: { to: string[]; raw: string }[] = [];
  const server = new SMTPServer({
    secure: false, disabledCommands: ['STARTTLS', 'AUTH'], logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.server.address() as AddressInfo).port, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

interface AuditList { records: { action: string; target: { type: string; id: string | null } | null; outcome: string; details: Record<string, unknown> }[] }

describe('alerts on run outcomes', () => {
  let fg: TestFlowgate;
  let secret = '';
  before(async () => {
    fg = await startTestFlowgate();
    const read = await fg.admin<{ secret: string }>('GET', '/api/v1/webhook-secret');
    assert.equal(read.status, 200);
    secret = read.body.secret;
  });
  after(async () => {
    await fg?.stop();
  });

  it(`${FAILURES} failures within a minute with a failure_rate rule make exactly one delivery, signed and verified`, async function () {
    this.timeout(300_000);
    const rx = await receiver(() => secret);
    try {
      const failing = await publishWorkflow(fg, { name: 'alerts-burst', steps: [{ name: 'Boom', type: 'code', source: 'throw new Error("upstream down")' }] });
      const created = await fg.admin<{ id: string; kind: string }>('POST', '/api/v1/alerts', {
        name: 'burst', condition: { kind: 'failure_rate', workflowId: failing.workflowId, windowSeconds: 60, threshold: THRESHOLD, cooldownSeconds: 3600 },
        destination: { type: 'webhook', url: `${rx.url}/alerts` },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.kind, 'failure_rate');
      const ruleId = created.body.id;
      const listed = await fg.admin<{ alerts: { id: string }[] }>('GET', '/api/v1/alerts');
      assert.deepEqual(listed.body.alerts.map((a) => a.id), [ruleId]);

      const runIds: string[] = [];
      for (let i = 0; i < FAILURES; i += 10) {
        const batch = await Promise.all(Array.from({ length: Math.min(10, FAILURES - i) }, () => trigger(fg, failing)));
        for (const response of batch) runIds.push(response.headers.get('X-Pf-Run-Id') ?? '');
      }
      for (const runId of runIds) assert.equal((await pollStatus(fg, failing, runId, undefined, 120_000)).status, 'FAILED');

      // the evaluator has taken every failure in
      const handle = fg.client.workflow.getHandle(alertWorkflowId(ruleId));
      const state = await eventually(async () => {
        const s = await handle.query(alertStateQuery).catch(() => undefined);
        return s && s.failures === FAILURES && s.delivered + s.failed >= 1 ? s : undefined;
      }, 'the evaluator saw every failure', 120_000, 250);
      assert.equal(state.delivered, 1);
      assert.equal(state.failed, 0);
      assert.equal(state.suppressed, FAILURES - THRESHOLD);

      assert.equal(rx.deliveries.length, 1, 'one delivery for the whole outage');
      const [delivery] = rx.deliveries;
      assert.ok(delivery!.verified, 'the receiver verified the signature with the organization\'s secret');
      const alert = JSON.parse(delivery!.body) as { type: string; data: { alertId: string; rule: { id: string; kind: string }; count: number; windowSeconds: number; run: { runId: string; workflowId: string; error: string } } };
      assert.equal(alert.type, 'alert.fired');
      assert.equal(alert.data.rule.id, ruleId);
      assert.equal(alert.data.count, THRESHOLD);
      assert.equal(alert.data.windowSeconds, 60);
      assert.equal(alert.data.run.workflowId, failing.workflowId);
      assert.ok(runIds.includes(alert.data.run.runId));
      assert.match(alert.data.run.error, /upstream down/);
      assert.equal(delivery!.headers['webhook-id'], alert.data.alertId);

      const audit = await eventually(async () => {
        const { body } = await fg.admin<AuditList>('GET', '/api/v1/audit?action=alert.');
        return body.records.length > 0 ? body.records : undefined;
      }, 'the delivery is audited');
      assert.deepEqual(audit.map((r) => [r.action, r.target?.id, r.outcome]), [['alert.delivered', ruleId, 'success']]);
      assert.equal(audit[0]!.details.alertId, alert.data.alertId);

      const deleted = await fg.admin('DELETE', `/api/v1/alerts/${ruleId}`);
      assert.equal(deleted.status, 204);
      assert.equal((await fg.admin('GET', `/api/v1/alerts/${ruleId}`)).status, 404);
    } finally {
      await rx.close();
    }
  });

  it('a run_failed rule starts the error-handler workflow with the failed run\'s ID, workflow and error', async function () {
    this.timeout(120_000);
    const failing = await publishWorkflow(fg, { name: 'alerts-fails-once', steps: [{ name: 'Boom', type: 'code', source: 'throw new Error("card declined")' }] });
    const handler = await publishWorkflow(fg, {
      name: 'alerts-error-handler', steps: [{ name: 'Report', type: 'template', template: 'failed {{inputs.runId}} of {{inputs.workflowId}} ({{inputs.workflowName}}): {{inputs.error}}' }],
    });
    const created = await fg.admin<{ id: string }>('POST', '/api/v1/alerts', {
      name: 'handler', condition: { kind: 'run_failed', workflowId: failing.workflowId }, destination: { type: 'workflow', triggerId: handler.triggerId },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const runId = (await trigger(fg, failing)).headers.get('X-Pf-Run-Id') ?? '';
    assert.equal((await pollStatus(fg, failing, runId)).status, 'FAILED');

    const record = await eventually(async () => {
      const { body } = await fg.admin<AuditList>('GET', '/api/v1/audit?action=alert.delivered');
      return body.records.find((r) => r.target?.id === created.body.id);
    }, 'the error handler was started', 60_000, 250);
    const handlerRunId = String(record.details.handlerRunId);
    assert.equal(record.details.runId, runId);
    const done = await pollStatus(fg, handler, handlerRunId);
    assert.equal(done.status, 'COMPLETE');
    const { body } = await fg.admin<{ results: { resultUrls: Record<string, { url: string }> }[] }>('GET', `/api/v1/runs/${handlerRunId}/results`);
    const text = await (await fetch(body.results[0]!.resultUrls['output.txt']!.url)).text();
    assert.ok(text.includes(`failed ${runId} of ${failing.workflowId} (alerts-fails-once)`), text);
    assert.match(text, /card declined/);
  });

  it('a webhook on a private address is refused when the instance does not allow private networks: no request, one alert.delivery_failed', async function () {
    this.timeout(120_000);
    const closed = await startTestFlowgate({ FLOWGATE_ALLOW_PRIVATE_NETWORK: 'false' });
    const rx = await receiver(() => '');
    try {
      const failing = await publishWorkflow(closed, { name: 'alerts-private', steps: [{ name: 'Boom', type: 'code', source: 'throw new Error("nope")' }] });
      const created = await closed.admin<{ id: string }>('POST', '/api/v1/alerts', {
        name: 'private', condition: { kind: 'run_failed' }, destination: { type: 'webhook', url: `${rx.url}/alerts` },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const runId = (await trigger(closed, failing)).headers.get('X-Pf-Run-Id') ?? '';
      assert.equal((await pollStatus(closed, failing, runId)).status, 'FAILED');
      const record = await eventually(async () => {
        const { body } = await closed.admin<AuditList>('GET', '/api/v1/audit?action=alert.');
        return body.records.find((r) => r.target?.id === created.body.id);
      }, 'the refused delivery is audited', 60_000, 250);
      assert.deepEqual([record.action, record.outcome, record.details.destination, record.details.runId], ['alert.delivery_failed', 'failed', 'webhook', runId]);
      assert.match(String(record.details.error), /refused/);
      assert.equal(rx.deliveries.length, 0);
    } finally {
      await rx.close();
      await closed.stop();
    }
  });

  it('an e-mail destination sends the alert through the organization\'s mail connection', async function () {
    this.timeout(120_000);
    const smtp = await startSmtp();
    try {
      const connection = await fg.admin<{ PCID: string }>('POST', '/api/v1/connections', {
        application: 'mail', name: 'alerts', credentials: { from: 'flowgate <alerts@example.test>', smtp: { host: '127.0.0.1', port: smtp.port, security: 'none' } },
      });
      assert.equal(connection.status, 201, JSON.stringify(connection.body));
      const failing = await publishWorkflow(fg, { name: 'alerts-mailed', steps: [{ name: 'Boom', type: 'code', source: 'throw new Error("disk full")' }] });
      const created = await fg.admin<{ id: string }>('POST', '/api/v1/alerts', {
        name: 'mailed', condition: { kind: 'run_failed', workflowId: failing.workflowId }, destination: { type: 'email', connectionId: connection.body.PCID, to: ['oncall@example.test'] },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const runId = (await trigger(fg, failing)).headers.get('X-Pf-Run-Id') ?? '';
      assert.equal((await pollStatus(fg, failing, runId)).status, 'FAILED');
      const mail = await eventually(async () => smtp.received[0], 'the alert e-mail arrived', 60_000, 250);
      assert.deepEqual(mail.to, ['oncall@example.test']);
      assert.match(mail.raw, /Subject: \[flowgate\] mailed: 1 failed run\(s\) of alerts-mailed/);
      assert.ok(mail.raw.includes(runId), 'the e-mail names the failed run');
      assert.match(mail.raw, /disk full/);
    } finally {
      await smtp.close();
    }
  });

  it('an approval_waiting rule alerts once for a run waiting past afterSeconds, never for one decided in time', async function () {
    this.timeout(180_000);
    const rx = await receiver(() => secret);
    try {
      const AFTER = 8;
      const gated = await publishWorkflow(fg, {
        name: 'alerts-approval', steps: [{ name: 'Sign-off', type: 'approval', approvers: ['ann@example.com'], message: 'ship it?', timeout: '10m' }],
      });
      const created = await fg.admin<{ id: string; kind: string }>('POST', '/api/v1/alerts', {
        name: 'stuck approvals', condition: { kind: 'approval_waiting', workflowId: gated.workflowId, afterSeconds: AFTER, cooldownSeconds: 1 },
        destination: { type: 'webhook', url: `${rx.url}/approvals` },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.kind, 'approval_waiting');
      const ruleId = created.body.id;
      const waitingAt = (s: { status: string; waitingOn?: { kind: string } }) => s.waitingOn?.kind === 'approval' || ['COMPLETE', 'FAILED'].includes(s.status);
      const decide = (runId: string) => fg.request(`/ext/webhook/${gated.apiKey}/runs/${gated.workflowId}/${runId}/approval`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decision: 'approve', approver: 'ann@example.com' }),
      });
      const slow = (await trigger(fg, gated)).headers.get('X-Pf-Run-Id') ?? '';
      const quick = (await trigger(fg, gated)).headers.get('X-Pf-Run-Id') ?? '';
      await pollStatus(fg, gated, slow, waitingAt);
      await pollStatus(fg, gated, quick, waitingAt);
      const decided = await decide(quick);
      assert.equal(decided.status, 200, await decided.text());
      assert.equal((await pollStatus(fg, gated, quick)).status, 'COMPLETE');

      const delivery = await eventually(async () => rx.deliveries[0], 'the waiting run was alerted', 90_000, 250);
      assert.ok(delivery.verified, 'signed with the organization\'s secret');
      const alert = JSON.parse(delivery.body) as { data: { rule: { id: string; kind: string }; afterSeconds: number; count: number; run: { runId: string; status: string; stepIndex: number; waitingSince: string } } };
      assert.deepEqual([alert.data.rule.id, alert.data.rule.kind, alert.data.afterSeconds, alert.data.count], [ruleId, 'approval_waiting', AFTER, 1]);
      assert.deepEqual([alert.data.run.runId, alert.data.run.status, alert.data.run.stepIndex], [slow, 'PAUSED', 1]);
      const handle = fg.client.workflow.getHandle(alertWorkflowId(ruleId));
      // the quick run's deadline has passed as well: the evaluator holds no wait, and alerted only the slow run
      const state = await eventually(async () => {
        const s = await handle.query(alertStateQuery).catch(() => undefined);
        return s && (s.waits ?? []).length === 0 ? s : undefined;
      }, 'the evaluator holds no wait', 60_000, 250);
      assert.deepEqual([state.delivered, state.alerted], [1, [slow]]);
      assert.equal(rx.deliveries.length, 1, 'once per run, and none for the run decided in time');
      const audit = await eventually(async () => {
        const { body } = await fg.admin<AuditList>('GET', '/api/v1/audit?action=alert.delivered');
        return body.records.find((r) => r.target?.id === ruleId);
      }, 'the delivery is audited');
      assert.deepEqual([audit.details.kind, audit.details.runId, audit.details.destination], ['approval_waiting', slow, 'webhook']);
      assert.equal((await decide(slow)).status, 200);
      assert.equal((await pollStatus(fg, gated, slow)).status, 'COMPLETE');
      assert.equal((await fg.admin('DELETE', `/api/v1/alerts/${ruleId}`)).status, 204);
    } finally {
      await rx.close();
    }
  });

  it('a run terminated through Temporal (no flowgate code runs) is alerted as a failure, found by the worker\'s visibility sweep', async function () {
    this.timeout(180_000);
    const rx = await receiver(() => secret);
    try {
      const slow = await publishWorkflow(fg, { name: 'alerts-terminated', steps: [{ name: 'Wait', type: 'delay', duration: '1h' }] });
      const created = await fg.admin<{ id: string }>('POST', '/api/v1/alerts', {
        name: 'terminated', condition: { kind: 'run_failed', workflowId: slow.workflowId }, destination: { type: 'webhook', url: `${rx.url}/terminated` },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const runId = (await trigger(fg, slow)).headers.get('X-Pf-Run-Id') ?? '';
      await pollStatus(fg, slow, runId, (s) => s.status === 'PAUSED' || s.status === 'RUNNING');
      const terminatedAt = Date.now();
      await fg.client.workflow.getHandle(runId).terminate('operator pulled the plug');
      const delivery = await eventually(async () => rx.deliveries[0], 'the terminated run was alerted', 120_000, 250);
      const alert = JSON.parse(delivery.body) as { data: { rule: { id: string }; run: { runId: string; status: string; error: string } } };
      assert.ok(delivery.verified);
      assert.deepEqual([alert.data.rule.id, alert.data.run.runId, alert.data.run.status], [created.body.id, runId, 'FAILED']);
      assert.match(alert.data.run.error, /terminated through Temporal/);
      console.log(`    terminated run alerted after ${Date.now() - terminatedAt} ms`);
      assert.equal((await fg.admin('DELETE', `/api/v1/alerts/${created.body.id}`)).status, 204);
    } finally {
      await rx.close();
    }
  });

  /**
   * The API gives every run an execution timeout well past its own limit (the run ends itself
   * TIMEOUT first, src/common/run-time-limit.ts), so no API call makes Temporal time a run out: the
   * run is started here through the Temporal client, as the gateway starts one (its type, task
   * queue and search attributes) but with a 3-second execution timeout and an input the worker
   * cannot run, so that no flowgate code ends it and Temporal closes it TimedOut.
   */
  it('a run Temporal closes TimedOut (past its execution timeout, no flowgate code ends it) is alerted as a TIMEOUT, found by the sweep', async function () {
    this.timeout(180_000);
    const rx = await receiver(() => secret);
    try {
      const slow = await publishWorkflow(fg, { name: 'alerts-timed-out', steps: [{ name: 'Wait', type: 'delay', duration: '1h' }] });
      const created = await fg.admin<{ id: string }>('POST', '/api/v1/alerts', {
        name: 'timed out', condition: { kind: 'run_failed', workflowId: slow.workflowId }, destination: { type: 'webhook', url: `${rx.url}/timed-out` },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const grant = await fg.registry.orgs.findAdminToken(hashSecret(fg.adminToken));
      assert.ok(grant, 'the test admin token\'s organization');
      const runId = `run-${randomUUID()}`;
      const handle = await fg.client.workflow.start(WORKFLOW_TYPES.runAutomation, {
        workflowId: runId, taskQueue: fg.taskQueue, args: [{ unreadable: true }], workflowExecutionTimeout: '3s',
        typedSearchAttributes: [{ key: SEARCH_ATTRIBUTES.orgId, value: grant.orgId }, { key: SEARCH_ATTRIBUTES.automationId, value: slow.workflowId }],
      });
      await eventually(async () => ((await handle.describe()).status.name === 'TIMED_OUT' ? true : undefined), 'Temporal timed the run out', 60_000, 250);
      const timedOutAt = Date.now();
      const delivery = await eventually(async () => rx.deliveries[0], 'the timed-out run was alerted', 120_000, 250);
      const alert = JSON.parse(delivery.body) as { data: { rule: { id: string }; run: { runId: string; workflowId: string; status: string; error: string } } };
      assert.ok(delivery.verified);
      assert.deepEqual([alert.data.rule.id, alert.data.run.runId, alert.data.run.workflowId, alert.data.run.status], [created.body.id, runId, slow.workflowId, 'TIMEOUT']);
      assert.match(alert.data.run.error, /execution timeout/);
      console.log(`    timed-out run alerted ${Date.now() - timedOutAt} ms after it closed`);
      const audit = await fg.admin<AuditList>('GET', `/api/v1/audit?action=alert.delivered&target=alert_rule:${created.body.id}`);
      assert.equal(audit.body.records.length, 1, JSON.stringify(audit.body));
      assert.equal(audit.body.records[0]?.details.runId, runId);
      assert.equal((await fg.admin('DELETE', `/api/v1/alerts/${created.body.id}`)).status, 204);
    } finally {
      await rx.close();
    }
  });

  it('a viewer can neither create nor read alert rules; a rule naming another organization\'s trigger is refused', async () => {
    const member = await fg.admin<{ id: string }>('POST', '/api/v1/members', { email: 'viewer-alerts@example.com', role: 'viewer' });
    assert.equal(member.status, 201);
    const pat = await fg.admin<{ token: string }>('POST', `/api/v1/members/${member.body.id}/tokens`);
    assert.equal(pat.status, 201);
    const asViewer = (method: string, path: string, body?: unknown) => fg.request(path, {
      method, headers: { Authorization: `Bearer ${pat.body.token}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const rule = { name: 'nope', condition: { kind: 'run_failed' }, destination: { type: 'webhook', url: 'http://127.0.0.1:9/x' } };
    assert.equal((await asViewer('POST', '/api/v1/alerts', rule)).status, 403);
    assert.equal((await asViewer('GET', '/api/v1/alerts')).status, 403);
    assert.equal((await fg.admin('GET', '/api/v1/alerts')).status, 200);
    const refused = await fg.admin<{ error: string }>('POST', '/api/v1/alerts', { ...rule, destination: { type: 'workflow', triggerId: 'trg_nobody' } });
    assert.equal(refused.status, 404);
    const invalid = await fg.admin('POST', '/api/v1/alerts', { ...rule, condition: { kind: 'failure_rate', windowSeconds: 60 } });
    assert.equal(invalid.status, 400);
    for (const condition of [{ kind: 'approval_waiting' }, { kind: 'approval_waiting', afterSeconds: 0 }, { kind: 'budget', percent: 120 }, { kind: 'budget', percent: 80, workflowId: 'wf_x' }]) {
      const bad = await fg.admin<{ error: string; message?: string }>('POST', '/api/v1/alerts', { ...rule, condition });
      assert.equal(bad.status, 400, `${JSON.stringify(condition)}: ${JSON.stringify(bad.body)}`);
    }
    const kept = await fg.admin<{ id: string }>('POST', '/api/v1/alerts', { ...rule, condition: { kind: 'budget', percent: 80 } });
    assert.equal(kept.status, 201, JSON.stringify(kept.body));
    const changed = await fg.admin<{ error: string }>('PUT', `/api/v1/alerts/${kept.body.id}`, { ...rule, condition: { kind: 'run_failed' } });
    assert.deepEqual([changed.status, changed.body.error], [400, 'invalid_alert_rule']);
    assert.equal((await fg.admin('DELETE', `/api/v1/alerts/${kept.body.id}`)).status, 204);
  });
});
