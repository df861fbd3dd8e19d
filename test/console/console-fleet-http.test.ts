/**
 * The console's fleet operations over real HTTP on a real gateway and Temporal (docs/console.md
 * "Acting on all matching runs", "Alert rules"): the runs page's filter counted (a dry run) and
 * then confirmed as a batch, whose page shows its progress and each run's outcome, and the recent
 * batches; alert rules created for each kind, refused beside their fields, edited, disabled,
 * enabled and deleted, with a rule's deliveries on its page. Forms are posted with the session's
 * CSRF token; without it nothing happens. A viewer is offered no batch form, an editor is refused
 * with the reason, and only admins reach the alert rules. Everything is audited as the API's.
 */
import assert from 'node:assert/strict';
import { ConsoleSessions } from '../../src/console/sessions';
import { hashSecret } from '../../src/crypto/secrets';
import { consoleHttp, type ConsoleSession } from '../support/console-http';
import { eventually } from '../support/eventually';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { signedReceiver } from '../support/signed-receiver';

interface AuditList { records: { action: string; outcome: string; target: { type: string; id: string | null } | null; details: Record<string, unknown> }[] }
interface Rule { id: string; name: string; kind: string; enabled: boolean; condition: Record<string, unknown>; destination: Record<string, unknown> }

/** The hidden fields of the form with this id (the confirmation carries the counted filter). */
function hiddenFields(page: string, formId: string): Record<string, string> {
  const form = new RegExp(`<form[^>]*id="${formId}"[^>]*>([\\s\\S]*?)</form>`).exec(page)?.[1] ?? '';
  return Object.fromEntries([...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!.replace(/&quot;/g, '"').replace(/&amp;/g, '&')]));
}

describe('console fleet operations over HTTP: act on all matching runs, batch progress, alert rules', () => {
  let fg: TestFlowgate;
  let orgId = '';
  const { signIn, get, post } = consoleHttp(() => fg, '/console/runs');
  const asMember = async (email: string, role: string): Promise<ConsoleSession> => {
    const created = await fg.admin<{ id: string }>('POST', '/api/v1/members', { email, role });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const record = await fg.registry.members.get(orgId, created.body.id);
    assert.ok(record);
    const opened = await new ConsoleSessions({ registry: fg.registry, lifetimeMinutes: 10 }).signInMember(record);
    return { cookie: `fg_console=${opened.id}`, csrf: opened.session.csrfToken };
  };

  before(async () => {
    fg = await startTestFlowgate();
    const grant = await fg.registry.orgs.findAdminToken(hashSecret(fg.adminToken));
    assert.ok(grant);
    orgId = grant.orgId;
  });
  after(async () => {
    await fg?.stop();
  });

  it('counts the runs the filter selects, starts the batch on confirmation, and shows its progress and outcomes; a viewer sees no form, an editor is told why', async function () {
    this.timeout(180_000);
    const p = await publishWorkflow(fg, { name: 'console-fleet', steps: [{ name: 'Wait', type: 'delay', duration: '10m' }] });
    const other = await publishWorkflow(fg, { name: 'console-fleet-other', steps: [{ name: 'Wait', type: 'delay', duration: '10m' }] });
    const start = async (on: typeof p): Promise<string> => {
      const response = await trigger(fg, on, {}, { Prefer: 'wait=0' });
      await response.arrayBuffer();
      return response.headers.get('X-Pf-Run-Id') ?? '';
    };
    const runIds = [await start(p), await start(p), await start(p)];
    const untouched = await start(other);
    const admin = await signIn(fg.adminToken);

    const runsPage = await (await get(admin, `/console/runs?workflowId=${p.workflowId}&status=RUNNING&since=1h`)).text();
    assert.match(runsPage, /id="act-on-matching"/);
    assert.match(runsPage, new RegExp(`<input type="hidden" name="workflowId" value="${p.workflowId}">`));
    const filter = { workflowId: p.workflowId, status: 'RUNNING', since: '1h' };

    assert.equal((await post({ cookie: admin.cookie }, '/console/batches/count', { ...filter, action: 'cancel' })).status, 403, 'no CSRF token');
    const invalid = await post(admin, '/console/batches/count', { ...filter, action: 'cancel', startedBefore: 'whenever' });
    assert.equal(invalid.status, 400);
    assert.match(await invalid.text(), /<p class="error" id="batch-startedBefore-error">must be an ISO 8601 instant<\/p>/);

    const counted = await post(admin, '/console/batches/count', { ...filter, action: 'cancel' });
    assert.equal(counted.status, 200);
    const countPage = await counted.text();
    assert.match(countPage, /data-count="3"/);
    const none = await (await post(admin, '/console/batches/count', { ...filter, action: 'cancel', errorContains: 'no such error' })).text();
    assert.match(none, /data-count="0"/);
    assert.doesNotMatch(none, /confirm-batch/);

    // a viewer is offered no batch form; an editor's hand-made post is refused with the reason; neither starts anything
    const viewer = await asMember('vi@example.com', 'viewer');
    assert.doesNotMatch(await (await get(viewer, `/console/runs?workflowId=${p.workflowId}`)).text(), /act-on-matching|batches\/count/);
    const editor = await asMember('ed@example.com', 'editor');
    const refused = await post(editor, '/console/batches', { ...hiddenFields(countPage, 'confirm-batch'), csrf: editor.csrf });
    assert.equal(refused.status, 403);
    const why = await refused.text();
    assert.match(why, /id="refusal-why">You are signed in with the editor role\. This action needs the permission runs\.operate, which the admin, operator roles hold/);

    const confirmation = hiddenFields(countPage, 'confirm-batch');
    assert.equal(confirmation.confirm, 'true');
    assert.equal(confirmation.since, undefined, 'the counted instant, not the window');
    assert.ok(confirmation.startedAfter);
    const started = await post(admin, '/console/batches', { ...confirmation, csrf: admin.csrf });
    assert.equal(started.status, 303, await started.text());
    const location = started.headers.get('location') ?? '';
    assert.match(location, /^\/console\/batches\/batch-[0-9a-f-]{36}$/);
    const batchId = location.split('/').pop() ?? '';

    const done = await eventually(async () => {
      const text = await (await get(admin, location)).text();
      return /id="batch-status">COMPLETE</.test(text) ? text : undefined;
    }, 'the batch page shows it complete', 120_000, 250);
    assert.match(done, /<dd id="batch-total">3<\/dd>/);
    assert.match(done, /<dd id="batch-succeeded">3<\/dd>/);
    assert.doesNotMatch(done, /http-equiv="refresh"/, 'a complete batch\'s page stays still');
    for (const runId of runIds) assert.match(done, new RegExp(`href="/console/runs/${runId}"`));
    assert.doesNotMatch(done, new RegExp(untouched));
    const api = await fg.admin<{ status: string; succeeded: number; by: string }>('GET', `/api/v1/runs/batch/${batchId}`);
    assert.deepEqual([api.body.status, api.body.succeeded, api.body.by], ['COMPLETE', 3, 'instance-admin']);
    assert.equal((await fg.admin<{ status: string }>('GET', `/api/v1/runs/${untouched}`)).body.status === 'FAILED', false, 'the other workflow\'s run is left alone');
    // a viewer reads the batch (as GET /api/v1/runs/batch/{id}), and the recent batches list it
    assert.equal((await get(viewer, location)).status, 200);
    assert.match(await (await get(admin, '/console/batches')).text(), new RegExp(`href="/console/batches/${batchId}"`));
    assert.equal((await get(admin, '/console/batches/batch-00000000-0000-4000-8000-000000000000')).status, 404);

    const trail = (await fg.admin<AuditList>('GET', '/api/v1/audit?action=run_batch.started')).body.records.filter((r) => r.details.via === 'console');
    const started1 = trail.find((r) => r.details.batchId === batchId);
    assert.deepEqual(started1 && [started1.outcome, started1.details.action, started1.details.matched], ['success', 'cancel', 3]);
    assert.ok(trail.some((r) => r.details.dryRun === true && r.details.count === 3), 'the count is audited as the API\'s dry run');
    assert.ok(trail.some((r) => r.outcome !== 'success' && r.details.via === 'console'), 'the editor\'s refusal is audited');
    const rest = await fg.admin('POST', '/api/v1/runs/batch', { action: 'cancel', filter: { workflowId: other.workflowId } });
    assert.equal(rest.status, 202);
  });

  it('selects by input fields (path = value a line): counts and acts on the matching runs only, and refuses a line it cannot read beside the field', async function () {
    this.timeout(180_000);
    const p = await publishWorkflow(fg, { name: 'console-fleet-input', steps: [{ name: 'Wait', type: 'delay', duration: '10m' }] });
    const start = async (inputs: unknown): Promise<string> => {
      const response = await trigger(fg, p, inputs, { Prefer: 'wait=0' });
      await response.arrayBuffer();
      return response.headers.get('X-Pf-Run-Id') ?? '';
    };
    const matching = [await start({ customer: { id: 'c-1' }, tier: 2 }), await start({ customer: { id: 'c-1' }, tier: 2 })];
    const others = [await start({ customer: { id: 'c-2' }, tier: 2 }), await start({ customer: { id: 'c-1' }, tier: '2' })];
    const admin = await signIn(fg.adminToken);
    const filter = { workflowId: p.workflowId, status: 'RUNNING', since: '1h', action: 'cancel' };

    const bad = await post(admin, '/console/batches/count', { ...filter, input: 'customer.id c-1' });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /<p class="error" id="batch-input-error">Line 1: write an input field&#39;s dotted path|<p class="error" id="batch-input-error">Line 1: write an input field's dotted path/);

    // tier = 2 is the number 2 (JSON), so the run whose tier is the text "2" is left out
    const counted = await post(admin, '/console/batches/count', { ...filter, input: 'customer.id = c-1\r\ntier = 2' });
    assert.equal(counted.status, 200);
    const countPage = await counted.text();
    assert.match(countPage, /data-count="2"/);
    assert.match(countPage, /<dt>Input customer\.id<\/dt><dd><code>&quot;c-1&quot;<\/code><\/dd>/);
    const confirmation = hiddenFields(countPage, 'confirm-batch');
    assert.equal(confirmation.input, 'customer.id = c-1\r\ntier = 2');
    const started = await post(admin, '/console/batches', { ...confirmation, csrf: admin.csrf });
    assert.equal(started.status, 303, await started.text());
    const done = await eventually(async () => {
      const text = await (await get(admin, started.headers.get('location') ?? '')).text();
      return /id="batch-status">COMPLETE</.test(text) ? text : undefined;
    }, 'the batch page shows it complete', 120_000, 250);
    assert.match(done, /<dd id="batch-succeeded">2<\/dd>/);
    for (const runId of matching) assert.match(done, new RegExp(`href="/console/runs/${runId}"`));
    for (const runId of others) {
      assert.doesNotMatch(done, new RegExp(runId));
      assert.equal((await fg.admin<{ status: string }>('GET', `/api/v1/runs/${runId}`)).body.status, 'PAUSED', 'a run whose inputs differ is left alone');
    }
    assert.equal((await fg.admin('POST', '/api/v1/runs/batch', { action: 'cancel', filter: { workflowId: p.workflowId } })).status, 202);
  });

  it('creates, refuses, edits, disables, enables and deletes alert rules as the API does, admins only, and shows a rule\'s deliveries', async function () {
    this.timeout(180_000);
    const admin = await signIn(fg.adminToken);
    const rules = async (): Promise<Rule[]> => (await fg.admin<{ alerts: Rule[] }>('GET', '/api/v1/alerts')).body.alerts;
    const failing = await publishWorkflow(fg, { name: 'console-alerts', steps: [{ name: 'Boom', type: 'code', source: 'throw new Error("upstream down")' }] });
    const secret = (await fg.admin<{ secret: string }>('GET', '/api/v1/webhook-secret')).body.secret;
    const rx = await signedReceiver(() => secret);
    try {
      const listPage = await (await get(admin, '/console/alerts')).text();
      assert.match(listPage, /<h1>Alert rules<\/h1>/);
      assert.match(listPage, /aria-current="page">Alerts</);

      assert.equal((await post({ cookie: admin.cookie }, '/console/alerts/new', { name: 'x', kind: 'run_failed', destination: 'webhook', url: `${rx.url}/a` })).status, 403);
      const invalid = await post(admin, '/console/alerts/new', { name: '', kind: 'failure_rate', windowSeconds: '0', threshold: '5', destination: 'webhook', url: 'not a url' });
      assert.equal(invalid.status, 400);
      const invalidText = await invalid.text();
      assert.match(invalidText, /id="alert-name-error">Give the rule a name/);
      assert.match(invalidText, /id="alert-windowSeconds-error">/);
      assert.match(invalidText, /id="alert-url-error">/);
      assert.match(invalidText, /name="threshold" type="number" value="5"/, 'what was typed is kept');
      const noMail = await post(admin, '/console/alerts/new', { name: 'mail', kind: 'run_failed', destination: 'email', connectionId: 'con_nowhere', to: 'ops@example.com' });
      assert.equal(noMail.status, 400);
      assert.match(await noMail.text(), /id="alert-connectionId-error">no mail connection con_nowhere/);
      assert.deepEqual(await rules(), [], 'nothing was saved');

      const handler = await publishWorkflow(fg, { name: 'console-alert-handler', steps: [{ name: 'Note', type: 'template', template: 'handled' }] });
      const creations: Record<string, string>[] = [
        { name: 'every failure', kind: 'run_failed', workflowId: failing.workflowId, destination: 'webhook', url: `${rx.url}/failed`, enabled: 'true' },
        { name: 'rate', kind: 'failure_rate', windowSeconds: '60', ratio: '0.5', minRuns: '4', destination: 'workflow', triggerId: handler.triggerId, enabled: 'true' },
        { name: 'waiting', kind: 'approval_waiting', afterSeconds: '3600', destination: 'webhook', url: `${rx.url}/waiting` },
        { name: 'budget', kind: 'budget', percent: '80', destination: 'webhook', url: `${rx.url}/budget`, enabled: 'true' },
      ];
      for (const form of creations) {
        const created = await post(admin, '/console/alerts/new', form);
        assert.equal(created.status, 303, `${form.kind}: ${await created.text()}`);
        assert.match(created.headers.get('location') ?? '', /^\/console\/alerts\/[^/?]+\?done=created$/);
      }
      const saved = await rules();
      assert.deepEqual(saved.map((r) => [r.name, r.kind, r.enabled]), [['every failure', 'run_failed', true], ['rate', 'failure_rate', true], ['waiting', 'approval_waiting', false], ['budget', 'budget', true]]);
      assert.deepEqual(saved[1]?.condition, { kind: 'failure_rate', windowSeconds: 60, ratio: 0.5, minRuns: 4 });
      assert.deepEqual(saved[1]?.destination, { type: 'workflow', triggerId: handler.triggerId });
      const [failed, rate, waiting, budget] = saved.map((r) => r.id);

      // edit: a new name saved; a kind change refused beside the kind
      const edit = await (await get(admin, `/console/alerts/${rate}`)).text();
      assert.match(edit, /name="windowSeconds" type="number" value="60"/);
      assert.equal((await post(admin, `/console/alerts/${rate}`, { name: 'rate 2', kind: 'failure_rate', windowSeconds: '120', threshold: '3', destination: 'workflow', triggerId: handler.triggerId, enabled: 'true' })).status, 303);
      assert.deepEqual((await rules()).find((r) => r.id === rate)?.condition, { kind: 'failure_rate', windowSeconds: 120, threshold: 3 });
      const kindChange = await post(admin, `/console/alerts/${rate}`, { name: 'rate 2', kind: 'run_failed', destination: 'workflow', triggerId: handler.triggerId });
      assert.equal(kindChange.status, 400);
      assert.match(await kindChange.text(), /id="alert-kind-error">a rule&#39;s kind cannot change/);

      assert.equal((await post(admin, `/console/alerts/${waiting}/enable`, {})).status, 303);
      assert.equal((await rules()).find((r) => r.id === waiting)?.enabled, true);
      assert.equal((await post(admin, `/console/alerts/${budget}/disable`, {})).status, 303);
      assert.equal((await rules()).find((r) => r.id === budget)?.enabled, false);
      assert.equal((await post(admin, `/console/alerts/${budget}/delete`, {})).status, 303);
      assert.equal((await post(admin, '/console/alerts/alr_nosuchrule/delete', {})).status, 404);
      assert.deepEqual((await rules()).map((r) => r.id), [failed, rate, waiting]);

      // an operator (not an admin) has no Alerts link and is refused the pages and actions, with the reason
      const operator = await asMember('op@example.com', 'operator');
      assert.doesNotMatch(await (await get(operator, '/console/runs')).text(), /href="\/console\/alerts"/);
      const opPage = await get(operator, '/console/alerts');
      assert.equal(opPage.status, 403);
      assert.match(await opPage.text(), /org\.manage/);
      assert.equal((await post(operator, `/console/alerts/${failed}/disable`, {})).status, 403);
      assert.equal((await rules()).find((r) => r.id === failed)?.enabled, true);

      // a failed run is delivered, and the rule's page lists the delivery
      const runId = (await trigger(fg, failing)).headers.get('X-Pf-Run-Id') ?? '';
      await eventually(async () => rx.deliveries.find((d) => d.verified), 'the failure was delivered', 120_000, 250);
      const withDelivery = await eventually(async () => {
        const text = await (await get(admin, `/console/alerts/${failed}`)).text();
        return text.includes('id="alert-deliveries"') ? text : undefined;
      }, 'the delivery is on the rule\'s page', 30_000, 250);
      assert.match(withDelivery, new RegExp(`run <a href="/console/runs/${runId}">`));
      assert.match(withDelivery, /<td>delivered<\/td><td>webhook<\/td>/);

      const trail = (await fg.admin<AuditList>('GET', '/api/v1/audit?action=alert_rule.*')).body.records.filter((r) => r.details.via === 'console');
      const actions = trail.map((r) => `${r.action} ${r.outcome}`);
      for (const expected of ['alert_rule.created success', 'alert_rule.updated success', 'alert_rule.deleted success', 'alert_rule.created refused', 'alert_rule.updated refused']) {
        assert.ok(actions.includes(expected), `${expected} in ${JSON.stringify(actions)}`);
      }
    } finally {
      await rx.close();
    }
  });
});
