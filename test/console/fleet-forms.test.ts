/**
 * The console's fleet-operation forms and pages, without a gateway (docs/console.md "Acting on
 * all matching runs", "Alert rules"): the batch form reads into the API's body (the relative time
 * as an instant, refusals per field), the alert form into the API's rule body for each kind and
 * destination (refusals beside their fields), and the templates escape, offer actions only to the
 * roles that may take them, and refresh a batch's page only while it runs.
 */
import assert from 'node:assert/strict';
import { readBatchForm } from '../../src/console/batch-form';
import { alertFormOf, alertRefusalField, readAlertForm } from '../../src/console/alert-form';
import { batchBody, batchCountBody, batchForm, batchInProgress } from '../../src/http/console/batch-views';
import { alertFormBody, alertsBody, deliveriesSection } from '../../src/http/console/alert-views';
import { toText } from '../../src/http/console/html';
import { page, withoutActionsBeyond } from '../../src/http/console/layout';
import { runsBody } from '../../src/http/console/run-views';
import type { AlertRuleView } from '../../src/contracts/alert-bodies';
import type { BatchReport } from '../../src/runs/run-batch';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');

describe('console fleet operations: batch and alert forms, their pages', () => {
  it('reads the batch form into the API body: the runs filter, the error text, the relative time as an instant, confirm only when posted', () => {
    const read = readBatchForm({ action: 'resume', workflowId: 'wf_1', triggerId: 'trg_1', status: 'FAILED', since: '1h', errorContains: ' upstream 500 ', csrf: 'x' }, { dryRun: true, now: NOW });
    assert.ok(read.ok, JSON.stringify(read));
    assert.deepEqual(read.request, {
      action: 'resume', dryRun: true,
      filter: { workflowId: 'wf_1', triggerId: 'trg_1', status: 'FAILED', startedAfter: '2026-03-01T11:00:00.000Z', errorContains: 'upstream 500' },
    });
    // the confirmation carries the instant that was counted, not the window
    assert.equal(read.values.since, undefined);
    assert.equal(read.values.startedAfter, '2026-03-01T11:00:00.000Z');
    const confirmed = readBatchForm({ ...read.values, confirm: 'true' }, { dryRun: false, now: NOW + 3600_000 });
    assert.ok(confirmed.ok);
    assert.deepEqual(confirmed.request.filter, read.request.filter, 'the same window an hour later');
    assert.equal(confirmed.request.confirm, true);
    assert.equal(confirmed.request.dryRun, undefined);
    // a datetime-local value (no zone) is UTC
    const before = readBatchForm({ action: 'cancel', startedBefore: '2026-02-28T09:30' }, { dryRun: true });
    assert.ok(before.ok);
    assert.equal(before.request.filter.startedBefore, '2026-02-28T09:30:00.000Z');
  });

  it('reads the batch form\'s input fields, one path = value a line, JSON when it reads as JSON, and refuses a line it cannot read', () => {
    const read = readBatchForm({ action: 'cancel', input: 'customer.id = c-42\r\n\n tier = 2 \nflags.vip = true\nnote = "42"' }, { dryRun: true });
    assert.ok(read.ok, JSON.stringify(read));
    assert.deepEqual(read.request.filter.input, { 'customer.id': 'c-42', tier: 2, 'flags.vip': true, note: '42' });
    assert.equal(read.values.input, 'customer.id = c-42\r\n\n tier = 2 \nflags.vip = true\nnote = "42"', 'the confirmation carries the lines as typed');
    const noEquals = readBatchForm({ action: 'cancel', input: 'a = 1\nb 2' }, { dryRun: true });
    assert.ok(!noEquals.ok);
    assert.match(noEquals.errors.input ?? '', /^Line 2: write an input field's dotted path/);
    const inherited = readBatchForm({ action: 'cancel', input: 'constructor = 1\ntoString = 2' }, { dryRun: true });
    assert.ok(inherited.ok, JSON.stringify(inherited));
    assert.deepEqual(inherited.request.filter.input, { constructor: 1, toString: 2 }, 'names an object inherits are fields like any other (not "named twice")');
    const twice = readBatchForm({ action: 'cancel', input: 'a = 1\na = 2' }, { dryRun: true });
    assert.ok(!twice.ok);
    assert.match(twice.errors.input ?? '', /a is named twice/);
    const badPath = readBatchForm({ action: 'cancel', input: 'no spaces here = 1' }, { dryRun: true });
    assert.ok(!badPath.ok);
    assert.match(badPath.errors.input ?? '', /dotted path of input field names/);
    assert.deepEqual(Object.keys(badPath.errors), ['input']);
  });

  it('refuses a batch form field by field, with the API schema\'s reasons', () => {
    const bad = readBatchForm({ action: 'explode', status: 'CANCELLED', since: '2y', workflowId: 'no spaces', startedBefore: 'yesterday', errorContains: 'x'.repeat(201) }, { dryRun: true, now: NOW });
    assert.equal(bad.ok, false);
    assert.ok(!bad.ok);
    assert.deepEqual(Object.keys(bad.errors).sort(), ['action', 'errorContains', 'since', 'startedBefore', 'status', 'workflowId']);
    assert.match(bad.errors.action ?? '', /cancel, rerun, resume, pause, unpause/);
    assert.match(bad.errors.status ?? '', /FAILED/);
    assert.match(bad.errors.workflowId ?? '', /must be a workflow ID/);
    assert.match(bad.errors.startedBefore ?? '', /ISO 8601/);
    assert.equal(readBatchForm({ action: 'pause', reason: 'r'.repeat(501) }, { dryRun: true }).ok, false);
  });

  it('renders the act-on-matching form with the filter carried, and leaves it out for roles without runs.operate', () => {
    const body = toText(runsBody({ filter: { workflowId: 'wf_"1', status: 'FAILED', since: '24h' }, workflows: [], triggers: [], runs: [], liveIds: [], csrf: 'tok' }));
    assert.match(body, /<details class="panel" id="act-on-matching" data-needs="runs\.operate">/);
    assert.match(body, /<input type="hidden" name="workflowId" value="wf_&quot;1">/);
    assert.match(body, /<input type="hidden" name="since" value="24h">/);
    assert.match(body, /action="\/console\/batches\/count"/);
    for (const role of ['viewer', 'editor', 'approver'] as const) assert.doesNotMatch(withoutActionsBeyond(role, body), /act-on-matching|batches\/count/, role);
    for (const role of ['operator', 'admin'] as const) assert.match(withoutActionsBeyond(role, body), /batches\/count/, role);
    const refused = toText(batchForm({ csrf: 't', values: { action: 'cancel' }, errors: { errorContains: 'Too long <b>' }, open: true }));
    assert.match(refused, /<input id="batch-error" name="errorContains" maxlength="200" value="" aria-invalid="true" aria-describedby="batch-errorContains-error">/);
    assert.match(refused, /<p class="error" id="batch-errorContains-error">Too long &lt;b&gt;<\/p>/);
    assert.match(refused, / open>/);
  });

  it('shows the count with a confirmation that posts the counted filter and confirm=true; none for zero runs', () => {
    const read = readBatchForm({ action: 'cancel', workflowId: 'wf_1', since: '1h' }, { dryRun: true, now: NOW });
    assert.ok(read.ok);
    const counted = toText(batchCountBody({ request: read.request, values: read.values, count: 42, limit: 100, scanned: 0, capped: false, csrf: 'tok' }));
    assert.match(counted, /data-count="42"/);
    assert.match(counted, /<form method="post" data-needs="runs\.operate" action="\/console\/batches" id="confirm-batch"/);
    assert.match(counted, /<input type="hidden" name="startedAfter" value="2026-03-01T11:00:00\.000Z">/);
    assert.match(counted, /<input type="hidden" name="confirm" value="true">/);
    assert.match(counted, /More than 20 runs/);
    assert.doesNotMatch(counted, /name="since"/);
    const none = toText(batchCountBody({ request: read.request, values: read.values, count: 0, limit: 100, scanned: 0, capped: true, csrf: 'tok' }));
    assert.match(none, /nothing to act on/);
    assert.doesNotMatch(none, /confirm-batch/);
    assert.match(none, /The scan stopped at its cap/);
  });

  it('renders a batch\'s progress and outcomes, and refreshes its page only while it runs', () => {
    const report: BatchReport = {
      batchId: 'batch-00000000-0000-4000-8000-000000000000', action: 'resume', filter: { status: 'FAILED', errorContains: '<500>' }, limit: 100, by: 'member:ann@example.com',
      requested: '2026-03-01T12:00:00.000Z', status: 'RUNNING', total: 3, succeeded: 1, refused: 1, failed: 0,
      outcomes: [{ runId: 'run-a', outcome: 'succeeded', newRunId: 'run-a2' }, { runId: 'run-b', outcome: 'refused', code: 'not_resumable', message: 'no step failed <x>' }],
    };
    const body = toText(batchBody(report, 2));
    assert.match(body, /id="batch-status">RUNNING</);
    assert.match(body, /<dd id="batch-total">3<\/dd>/);
    assert.match(body, /<dd id="batch-succeeded">1<\/dd>/);
    assert.match(body, /<dd id="batch-refused">1<\/dd>/);
    assert.match(body, /<progress max="3" value="2"/);
    assert.match(body, /href="\/console\/runs\/run-a2"/);
    assert.match(body, /<code>not_resumable<\/code> no step failed &lt;x&gt;/);
    assert.match(body, /<code>&lt;500&gt;<\/code>/);
    assert.ok(batchInProgress(report));
    assert.ok(!batchInProgress({ status: 'COMPLETE' }));
    assert.match(toText(page({ title: 'Batch', csrf: 't', reloadSeconds: 2 }, batchBody(report, 2))), /<meta http-equiv="refresh" content="2">/);
    assert.doesNotMatch(toText(page({ title: 'Batch', csrf: 't' }, batchBody(report, 2))), /http-equiv="refresh"/);
  });

  it('reads every alert kind and destination into the API body, and only the chosen kind\'s fields', () => {
    const base = { name: 'Ops', destination: 'webhook', url: 'https://hooks.example/alert', enabled: 'true' };
    const ok = (values: Record<string, string>) => {
      const read = readAlertForm(values);
      assert.ok(read.ok, JSON.stringify(read));
      return read.body;
    };
    assert.deepEqual(ok({ ...base, kind: 'run_failed', workflowId: 'wf_1', windowSeconds: '60', cooldownSeconds: '' }).condition, { kind: 'run_failed', workflowId: 'wf_1' });
    assert.deepEqual(ok({ ...base, kind: 'failure_rate', windowSeconds: '60', threshold: '5', cooldownSeconds: '120' }).condition,
      { kind: 'failure_rate', windowSeconds: 60, threshold: 5, cooldownSeconds: 120 });
    assert.deepEqual(ok({ ...base, kind: 'failure_rate', windowSeconds: '600', ratio: '0.5', minRuns: '20' }).condition, { kind: 'failure_rate', windowSeconds: 600, ratio: 0.5, minRuns: 20 });
    assert.deepEqual(ok({ ...base, kind: 'approval_waiting', afterSeconds: '3600', percent: '50' }).condition, { kind: 'approval_waiting', afterSeconds: 3600 });
    assert.deepEqual(ok({ ...base, kind: 'budget', percent: '80', workflowId: 'wf_1' }).condition, { kind: 'budget', percent: 80 });
    const mail = ok({ name: 'Mail', kind: 'run_failed', destination: 'email', connectionId: 'con_mail', to: 'a@example.com,\n b@example.com\n', url: 'ignored' });
    assert.deepEqual(mail.destination, { type: 'email', connectionId: 'con_mail', to: ['a@example.com', 'b@example.com'] });
    assert.equal(mail.enabled, false, 'an unchecked box');
    assert.deepEqual(ok({ name: 'Handler', kind: 'run_failed', destination: 'workflow', triggerId: 'trg_h', enabled: 'true' }).destination, { type: 'workflow', triggerId: 'trg_h' });
  });

  it('refuses alert fields beside their fields, as the API schema words them', () => {
    const bad = readAlertForm({ name: '', kind: 'failure_rate', windowSeconds: 'soon', destination: 'webhook', url: 'ftp://x' });
    assert.ok(!bad.ok);
    assert.deepEqual(Object.keys(bad.errors).sort(), ['name', 'url', 'windowSeconds']);
    const neither = readAlertForm({ name: 'x', kind: 'failure_rate', windowSeconds: '60', destination: 'webhook', url: 'https://hooks.example/' });
    assert.ok(!neither.ok);
    assert.deepEqual(Object.keys(neither.errors), ['threshold']);
    assert.match(neither.errors.threshold ?? '', /exactly one of threshold and ratio/);
    const kind = readAlertForm({ name: 'x', kind: 'nope', destination: 'carrier-pigeon' });
    assert.ok(!kind.ok);
    assert.match(kind.errors.kind ?? '', /run_failed, failure_rate, approval_waiting, budget/);
    assert.match(kind.errors.destination ?? '', /webhook, email, workflow/);
    const mail = readAlertForm({ name: 'x', kind: 'budget', percent: '120', destination: 'email', connectionId: '', to: '' });
    assert.ok(!mail.ok);
    assert.deepEqual(Object.keys(mail.errors).sort(), ['connectionId', 'percent', 'to']);
    assert.equal(alertRefusalField('UNKNOWN_WORKFLOW', 'no workflow wf_x'), 'workflowId');
    assert.equal(alertRefusalField('UNKNOWN_TRIGGER', 'no trigger t'), 'triggerId');
    assert.equal(alertRefusalField('INVALID_ALERT_RULE', 'no mail connection c'), 'connectionId');
    assert.equal(alertRefusalField('INVALID_ALERT_RULE', 'a rule\'s kind cannot change (it is budget)'), 'kind');
  });

  const rule: AlertRuleView = {
    id: 'alr_1', name: 'Fail <fast>', kind: 'failure_rate', condition: { kind: 'failure_rate', windowSeconds: 60, threshold: 5 },
    destination: { type: 'email', connectionId: 'con_m', to: ['a@example.com', 'b@example.com'] }, enabled: true, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
  };

  it('pre-fills the edit form from a rule, shows refusals beside their fields, and lists rules with enable/disable and delete for admins only', () => {
    const values = alertFormOf(rule);
    assert.deepEqual(values, { name: 'Fail <fast>', kind: 'failure_rate', destination: 'email', enabled: 'true', windowSeconds: '60', threshold: '5', connectionId: 'con_m', to: 'a@example.com\nb@example.com' });
    const read = readAlertForm(values);
    assert.ok(read.ok);
    assert.deepEqual(read.body, { name: rule.name, condition: rule.condition, destination: rule.destination, enabled: true }, 'the form reads back the same rule');
    const form = toText(alertFormBody({
      csrf: 'tok', values, errors: { windowSeconds: 'Too small' }, rule: { id: rule.id, name: rule.name }, workflows: [{ id: 'wf_1', name: 'One' }], mailConnections: [{ id: 'con_m', name: 'Mail' }], triggers: [],
    }));
    assert.match(form, /<h1>Edit Fail &lt;fast&gt;<\/h1>/);
    assert.match(form, /action="\/console\/alerts\/alr_1"/);
    assert.match(form, /<input id="alert-windowSeconds" name="windowSeconds" type="number" value="60" aria-describedby="alert-windowSeconds-error" aria-invalid="true">/);
    assert.match(form, /<p class="error" id="alert-windowSeconds-error">Too small<\/p>/);
    assert.match(form, /<option value="con_m" selected>Mail<\/option>/);
    assert.match(form, /<option value="failure_rate" selected>/);
    assert.match(form, /One field needs a change/);
    const list = toText(alertsBody({ rules: [rule, { ...rule, id: 'alr_2', enabled: false }], csrf: 'tok' }));
    assert.match(list, /action="\/console\/alerts\/alr_1\/disable"/);
    assert.match(list, /action="\/console\/alerts\/alr_2\/enable"/);
    assert.match(list, /action="\/console\/alerts\/alr_1\/delete"/);
    assert.match(list, /5 failures within 60s/);
    assert.match(list, /e-mail to a@example\.com, b@example\.com through con_m/);
    assert.doesNotMatch(withoutActionsBeyond('editor', list), /<form|new-alert/);
    assert.match(withoutActionsBeyond('admin', list), /new-alert/);
    // the navigation's Alerts link is the admins'
    const frame = toText(page({ title: 't', csrf: 'c' }, alertsBody({ rules: [], csrf: 'c' })));
    assert.match(withoutActionsBeyond('admin', frame), /href="\/console\/alerts"/);
    assert.doesNotMatch(withoutActionsBeyond('operator', frame), /href="\/console\/alerts"/);
  });

  it('lists a rule\'s deliveries: delivered and failed, with the run and the handler run', () => {
    const out = toText(deliveriesSection([
      { at: '2026-03-01T12:00:00.000Z', action: 'alert.delivered', details: { destination: 'workflow', count: 50, runId: 'run-x', handlerRunId: 'run-h' } },
      { at: '2026-03-01T11:00:00.000Z', action: 'alert.delivery_failed', details: { destination: 'webhook', count: 1, runId: null, error: 'the receiver answered 500 <x>' } },
    ]));
    assert.match(out, /href="\/console\/runs\/run-x"/);
    assert.match(out, /handler run <a href="\/console\/runs\/run-h"/);
    assert.match(out, /the receiver answered 500 &lt;x&gt;/);
    assert.match(toText(deliveriesSection([])), /No delivery yet/);
  });
});
