/**
 * Editing an existing schedule's inputs in the console over real HTTP (docs/console.md
 * "Workflows", a schedule's inputs): the form is generated from the input schema and pre-filled
 * from the schedule, a secret never reaches the page and left blank keeps its stored value, inputs
 * the schema refuses come back beside their fields (422) and change nothing, saved inputs reach the
 * Temporal schedule's action (its next runs start with them), every attempt is audited
 * `schedule.set` with the input names only, and a role without triggers.write is refused the page
 * and the save, another organization gets a 404, a POST without the CSRF token a 403.
 */
import assert from 'node:assert/strict';
import { fieldOf } from '../../src/common/narrow';
import { scheduleIdFor } from '../../src/schedules/schedule-service';
import { consoleHttp } from '../support/console-http';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';

describe('console schedule inputs over HTTP: the edit form, validation beside fields, secrets, Temporal, audit, roles', () => {
  let fg: TestFlowgate;
  let p: Published;
  let triggerId: string;
  const first = { topic: 'weekly figures', count: 3, apiToken: 'sk-first-secret', legacy: 'kept as is' };

  const { signIn, get, post } = consoleHttp(() => fg, '/console/workflows');
  const stored = async (): Promise<Record<string, unknown> | undefined> =>
    (await fg.admin<{ schedule?: { inputs?: Record<string, unknown> } }>('GET', `/api/v1/triggers/${triggerId}`)).body.schedule?.inputs;
  /** The inputs the Temporal schedule's action starts its runs with (decoded by the client's data converter). */
  const scheduledInputs = async (): Promise<unknown> => {
    const described = await fg.client.schedule.getHandle(scheduleIdFor(triggerId)).describe();
    const args = described.action.type === 'startWorkflow' ? described.action.args ?? [] : [];
    return fieldOf(args[0], 'inputs');
  };

  before(async () => {
    fg = await startTestFlowgate();
    p = await publishWorkflow(fg, {
      name: 'console-schedule-inputs',
      inputSchema: {
        type: 'object',
        properties: {
          topic: { type: 'string', title: 'Topic', minLength: 1 },
          count: { type: 'integer', title: 'Count', minimum: 1 },
          urgent: { type: 'boolean', title: 'Urgent' },
          apiToken: { type: 'string', title: 'API token', writeOnly: true },
        },
        required: ['topic'],
      },
      steps: [{ name: 'Write', type: 'template', template: '{{inputs.topic}} x{{inputs.count}}' }],
    });
    const created = await fg.admin<{ id: string }>('POST', '/api/v1/triggers', { workflowId: p.workflowId, name: 'weekly', schedule: { interval: { every: '168h' }, inputs: first } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    triggerId = created.body.id;
  });
  after(async () => {
    await fg?.stop();
  });

  it('shows the form pre-filled from the schedule, never the secret; refuses what the schema refuses beside its field; saves through to the Temporal schedule', async () => {
    const admin = await signIn(fg.adminToken);
    const workflowPage = await (await get(admin, `/console/workflows/${p.workflowId}`)).text();
    assert.ok(workflowPage.includes(`href="/console/triggers/${triggerId}/schedule">Edit the inputs</a>`), 'the workflow page links to the edit');

    const opened = await get(admin, `/console/triggers/${triggerId}/schedule`);
    assert.equal(opened.status, 200);
    const form = await opened.text();
    assert.match(form, /name="input:topic" value="weekly figures"/);
    assert.match(form, /type="number" step="1" name="input:count" value="3"/);
    assert.match(form, /type="password" autocomplete="off" name="input:apiToken" value=""/);
    assert.match(form, /A value is stored \(not shown\); left blank, it is kept\./);
    assert.ok(!form.includes('sk-first-secret'), 'the secret is not sent to the browser');
    assert.match(form, /id="kept-inputs">Kept as they are \(the schema has no field for them\): legacy</);
    assert.deepEqual(await scheduledInputs(), first, 'the Temporal schedule starts its runs with the first inputs');

    // refused: each problem beside its field, what was typed kept, nothing stored or sent to Temporal
    const refused = await post(admin, `/console/triggers/${triggerId}/schedule`, { 'input:topic': '', 'input:count': 'three', 'input:apiToken': '' });
    assert.equal(refused.status, 422);
    const page = await refused.text();
    assert.match(page, /2 inputs need a change: see below\. Nothing was saved\./);
    assert.match(page, /name="input:topic" value="" required aria-required="true" aria-describedby="f0-error" aria-invalid="true"><p class="error" id="f0-error">must NOT have fewer than 1 characters<\/p>/);
    assert.match(page, /name="input:count" value="three" aria-describedby="f1-error" aria-invalid="true"><p class="error" id="f1-error">must be integer<\/p>/);
    assert.deepEqual(await stored(), first);
    assert.deepEqual(await scheduledInputs(), first);

    // saved: typed as the schema wants them, the blank secret kept, the box ticked; the Temporal schedule's action too
    const saved = await post(admin, `/console/triggers/${triggerId}/schedule`, { 'input:topic': 'monthly figures', 'input:count': '5', 'input:urgent': 'true', 'input:apiToken': '' });
    assert.equal(saved.status, 303, await saved.text());
    assert.equal(saved.headers.get('location'), `/console/workflows/${p.workflowId}?done=inputs`);
    const second = { topic: 'monthly figures', count: 5, urgent: true, apiToken: 'sk-first-secret', legacy: 'kept as is' };
    assert.deepEqual(await stored(), second);
    assert.deepEqual(await scheduledInputs(), second, 'the next runs start with the new inputs');
    assert.match(await (await get(admin, `/console/workflows/${p.workflowId}?done=inputs`)).text(), /The schedule&#39;s inputs were saved/);

    // a new secret replaces the stored one; an unticked box that was stored is false; an emptied field is left out
    const again = await post(admin, `/console/triggers/${triggerId}/schedule`, { 'input:topic': 'monthly figures', 'input:count': '', 'input:apiToken': 'sk-second-secret' });
    assert.equal(again.status, 303);
    const third = { topic: 'monthly figures', urgent: false, apiToken: 'sk-second-secret', legacy: 'kept as is' };
    assert.deepEqual(await stored(), third);
    assert.deepEqual(await scheduledInputs(), third);
    const state = await fg.admin<{ schedule: { state: { paused: boolean }; interval?: { every: string } } }>('GET', `/api/v1/triggers/${triggerId}`);
    assert.deepEqual([state.body.schedule.state.paused, state.body.schedule.interval?.every], [false, '168h'], 'the timing and the pause state are kept');

    interface Rec { action: string; status: number; target: { id: string | null } | null; details: Record<string, unknown> }
    const audit = await fg.admin<{ records: Rec[] }>('GET', '/api/v1/audit?limit=50');
    const sets = audit.body.records.filter((r) => r.action === 'schedule.set' && r.details.via === 'console' && r.target?.id === triggerId).reverse();
    assert.deepEqual(sets.map((r) => r.status), [422, 303, 303]);
    assert.deepEqual(sets[1]?.details.inputs, ['topic', 'count', 'urgent', 'apiToken', 'legacy']);
    assert.ok(!JSON.stringify(sets).includes('sk-'), 'no input value in the audit trail');
  });

  it('refuses a role without triggers.write, another organization and a POST without the CSRF token, and changes nothing', async () => {
    const before = await stored();
    const member = await fg.admin<{ id: string }>('POST', '/api/v1/members', { email: 'vic@example.com', role: 'viewer' });
    assert.equal(member.status, 201);
    const pat = await fg.admin<{ token: string }>('POST', `/api/v1/members/${member.body.id}/tokens`);
    assert.equal(pat.status, 201);
    const viewer = await signIn(pat.body.token);
    assert.ok(!(await (await get(viewer, `/console/workflows/${p.workflowId}`)).text()).includes('Edit the inputs'), 'not offered to a viewer');
    const page = await get(viewer, `/console/triggers/${triggerId}/schedule`);
    assert.equal(page.status, 403);
    assert.match(await page.text(), /triggers\.write/);
    assert.equal((await post(viewer, `/console/triggers/${triggerId}/schedule`, { 'input:topic': 'viewer was here' })).status, 403);

    const org = await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: 'other-schedules' });
    const other = await signIn(org.body.adminToken);
    assert.equal((await get(other, `/console/triggers/${triggerId}/schedule`)).status, 404);
    assert.equal((await post(other, `/console/triggers/${triggerId}/schedule`, { 'input:topic': 'hijacked' })).status, 404);

    const admin = await signIn(fg.adminToken);
    assert.equal((await post({ cookie: admin.cookie }, `/console/triggers/${triggerId}/schedule`, { 'input:topic': 'forged' })).status, 403);
    // a trigger without a schedule has no inputs to edit
    assert.equal((await get(admin, `/console/triggers/${p.triggerId}/schedule`)).status, 404);
    assert.deepEqual(await stored(), before);
  });
});
