/**
 * The console an operator can live in (issue 52), in Debian's Chromium through playwright-core:
 * a run's page tells its whole story (inputs with the secret one masked, the file it was started
 * with, the designated output under its own name, who started it and through what); an approver
 * signs in with a personal access token and decides as themselves (no "Decide as" list); a
 * cancelled run reads CANCELLED (the API: FAILED, reasonCode CANCELLED) with no resume offered and
 * the runs filter finds it, and PAUSED runs too; a viewer's console shows no action buttons; an
 * editor refused an action sees why and a link back; an existing schedule's inputs are edited from
 * a form generated from the input schema. FLOWGATE_CONSOLE_SCREENSHOTS=<dir> keeps the
 * screenshots (docs/images/ holds those docs/console.md shows).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, shot, waitForText } from '../support/chromium';
import { fieldOf } from '../../src/common/narrow';
import { scheduleIdFor } from '../../src/schedules/schedule-service';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';

describe('the console an operator can live in, in a browser', () => {
  let fg: TestFlowgate;
  let browser: Browser;
  let p: Published;
  const tokens: Record<string, string> = {};

  /** A run started over the trigger API with a form and a file; answers at once (Prefer: wait=0) with its ID. */
  const start = async (topic: string): Promise<string> => {
    const form = new FormData();
    form.append('topic', topic);
    form.append('apiToken', 'sk-live-do-not-show');
    form.append('file', new Blob(['region,total\nnorth,12\n'], { type: 'text/csv' }), 'figures.csv');
    const res = await fg.request(`/ext/triggers/${p.triggerId}`, { method: 'POST', headers: { 'X-API-KEY': p.apiKey, Prefer: 'wait=0' }, body: form });
    const body = await res.json() as { runId?: string; id?: string };
    assert.ok(res.status === 202 || res.status === 200, `${res.status} ${JSON.stringify(body)}`);
    const runId = body.runId ?? body.id ?? '';
    assert.ok(runId.length > 10, JSON.stringify(body));
    return runId;
  };

  const signIn = async (token: string): Promise<{ context: BrowserContext; page: Page; problems: string[] }> => {
    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${fg.url}/console/sign-in`);
    await page.fill('#token', token);
    await Promise.all([page.waitForURL('**/console/runs'), page.click('button[type="submit"]')]);
    return { context, page, problems };
  };

  before(async () => {
    browser = await launchChromium();
    fg = await startTestFlowgate();
    for (const [who, email, role] of [['viewer', 'vic@example.com', 'viewer'], ['editor', 'eve@example.com', 'editor'], ['ann', 'ann@example.com', 'approver']] as const) {
      const created = await fg.admin<{ id: string }>('POST', '/api/v1/members', { email, role });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const token = await fg.admin<{ token: string }>('POST', `/api/v1/members/${created.body.id}/tokens`);
      assert.equal(token.status, 201);
      tokens[who] = token.body.token;
    }
    p = await publishWorkflow(fg, {
      name: 'Quarterly report', description: 'Write the report, have it signed off.',
      inputSchema: {
        type: 'object',
        properties: { topic: { type: 'string', title: 'Topic' }, apiToken: { type: 'string', title: 'API token', writeOnly: true } },
        required: ['topic'],
      },
      steps: [
        { name: 'Write', type: 'template', template: '# Report on {{inputs.topic}}\n\nAll figures attached.' },
        { name: 'Sign-off', type: 'approval', approvers: ['ann@example.com', 'bob@example.com'], message: 'Publish the {{inputs.topic}} report?', timeout: '10m' },
        { name: 'Publish', type: 'template', template: 'published {{inputs.topic}}' },
      ],
    }, { name: 'report intake', designatedOutput: { stepIndex: 1, fileName: 'report.md' } });
  });
  after(async () => {
    await browser?.close();
    await fg?.stop();
  });

  it('shows a run\'s inputs (the secret one masked), the file it was started with and its designated output under its own name; an approver signs in with a personal access token and decides as themselves', async () => {
    const runId = await start('Q3');
    const admin = await signIn(fg.adminToken);
    await admin.page.goto(`${fg.url}/console/runs/${runId}`);
    await waitForText(admin.page, '#run-status', /PAUSED/);
    const inputs = await admin.page.textContent('#inputs') ?? '';
    assert.match(inputs, /topic\s*Q3/);
    assert.match(inputs, /apiToken\s*•••••• \(secret\)/);
    assert.ok(!(await admin.page.content()).includes('sk-live-do-not-show'), 'the secret input is on no page');
    assert.match(await admin.page.textContent('main dl.facts') ?? '', /through the trigger API \(an API key\), trigger \S+ \(report intake\)/);
    const [file] = await Promise.all([admin.page.waitForEvent('download'), admin.page.click('#started-files a')]);
    assert.equal(file.suggestedFilename(), 'figures.csv');
    assert.equal(readFileSync(await file.path(), 'utf8'), 'region,total\nnorth,12\n');
    const [report] = await Promise.all([admin.page.waitForEvent('download'), admin.page.click('#designated-output')]);
    assert.equal(report.suggestedFilename(), 'report.md');
    assert.equal(readFileSync(await report.path(), 'utf8'), '# Report on Q3\n\nAll figures attached.');
    assert.ok(await admin.page.$('#approver'), 'the admin token\'s session picks the approver it decides for');
    await shot(admin.page, 'console-run-story');
    assert.deepEqual(admin.problems, []);
    await admin.context.close();

    const ann = await signIn(tokens.ann ?? '');
    await ann.page.goto(`${fg.url}/console/runs/${runId}`);
    await waitForText(ann.page, '#run-status', /PAUSED/);
    assert.equal(await ann.page.$('#approver'), null, 'a member sees no "Decide as" list');
    assert.match(await ann.page.textContent('#deciding-as') ?? '', /You decide as ann@example\.com/);
    assert.equal(await ann.page.$('button.danger'), null, 'an approver is not offered Cancel');
    await Promise.all([ann.page.waitForNavigation(), ann.page.click('button[value="approve"]')]);
    await waitForText(ann.page, '#run-status', /COMPLETE/);
    const status = await fg.admin<{ status: string }>('GET', `/api/v1/runs/${runId}`);
    assert.equal(status.body.status, 'COMPLETE');
    const audit = await fg.admin<{ records: { action: string; actor: string; actorName: string | null; details: Record<string, unknown> }[] }>('GET', '/api/v1/audit?action=console.signed_in');
    assert.ok(audit.body.records.some((r) => r.actorName === 'ann@example.com' && r.details.via === 'personal_access_token'), JSON.stringify(audit.body.records));
    assert.deepEqual(ann.problems, []);
    await ann.context.close();
  });

  it('shows a cancelled run as CANCELLED without a resume, and the runs filter finds cancelled and PAUSED runs', async () => {
    const cancelled = await start('Q4');
    const paused = await start('Q1');
    const admin = await signIn(fg.adminToken);
    await admin.page.goto(`${fg.url}/console/runs/${cancelled}`);
    await waitForText(admin.page, '#run-status', /PAUSED/);
    await Promise.all([admin.page.waitForNavigation(), admin.page.click('button.danger')]);
    await waitForText(admin.page, '#run-status', /CANCELLED/);
    await admin.page.reload();
    assert.match(await admin.page.textContent('#run-status') ?? '', /CANCELLED.*FAILED with reason code CANCELLED/s);
    const body = await admin.page.textContent('main') ?? '';
    assert.ok(!body.includes('Resume from the failed step'), 'no resume for a cancelled run');
    assert.match(body, /Re-run/);
    await shot(admin.page, 'console-run-cancelled');
    const api = await fg.admin<{ status: string; reasonCode?: string }>('GET', `/api/v1/runs/${cancelled}`);
    assert.equal(api.body.status, 'FAILED');
    assert.equal(api.body.reasonCode, 'CANCELLED');

    await admin.page.goto(`${fg.url}/console/runs`);
    const choices = await admin.page.$$eval('#f-status option', (options) => options.map((o) => o.getAttribute('value')));
    assert.deepEqual(choices, ['', 'RUNNING', 'PAUSED', 'PENDING', 'COMPLETE', 'FAILED', 'TIMEOUT', 'CANCELLED']);
    await admin.page.selectOption('#f-status', 'CANCELLED');
    await Promise.all([admin.page.waitForNavigation(), admin.page.click('form.filters button[type="submit"]')]);
    assert.ok(await admin.page.$(`a[href="/console/runs/${cancelled}"]`), 'the cancelled run is listed');
    assert.equal(await admin.page.$(`a[href="/console/runs/${paused}"]`), null);
    assert.match(await admin.page.textContent(`[data-run-status="${cancelled}"]`) ?? '', /CANCELLED/);
    await admin.page.goto(`${fg.url}/console/runs?status=PAUSED`);
    assert.ok(await admin.page.$(`a[href="/console/runs/${paused}"]`), 'the paused run is listed');
    assert.equal(await admin.page.$(`a[href="/console/runs/${cancelled}"]`), null);
    // the list follows its open runs live: the paused one, cancelled meanwhile, reads CANCELLED without a reload (not FAILED)
    await admin.page.goto(`${fg.url}/console/runs`);
    await waitForText(admin.page, `[data-run-status="${paused}"]`, /PAUSED/);
    const cancel = await fg.admin('POST', `/api/v1/runs/${paused}/cancel`);
    assert.ok(cancel.status < 300, JSON.stringify(cancel));
    await waitForText(admin.page, `[data-run-status="${paused}"]`, /CANCELLED/);
    assert.equal(await admin.page.getAttribute(`[data-run-status="${paused}"]`, 'class'), 'status status-CANCELLED');
    assert.deepEqual(admin.problems, []);
    await admin.context.close();
  });

  it('offers a viewer no action; shows an editor refused an action why, with a link back', async () => {
    const runId = await start('Q2');
    const viewer = await signIn(tokens.viewer ?? '');
    await viewer.page.goto(`${fg.url}/console/runs/${runId}`);
    await waitForText(viewer.page, '#run-status', /PAUSED/);
    const forms = async (page: Page): Promise<(string | null)[]> => page.$$eval('form[method="post"]', (all) => all.map((f) => f.getAttribute('action')));
    assert.deepEqual(await forms(viewer.page), ['/console/sign-out'], 'a viewer\'s run page has no action');
    assert.match(await viewer.page.textContent('#no-decision') ?? '', /viewer/);
    await viewer.page.goto(`${fg.url}/console/workflows/${p.workflowId}`);
    assert.deepEqual(await forms(viewer.page), ['/console/sign-out'], 'nor its workflow page');
    assert.equal(await viewer.page.$('a[href$="/draft"]'), null);
    await viewer.page.goto(`${fg.url}/console/workflows`);
    assert.equal(await viewer.page.$('a[href="/console/workflows/new"]'), null);
    await viewer.context.close();

    const editor = await signIn(tokens.editor ?? '');
    await editor.page.goto(`${fg.url}/console/runs/${runId}`);
    await waitForText(editor.page, '#run-status', /PAUSED/);
    assert.equal(await editor.page.$('button.danger'), null, 'an editor is not offered Cancel');
    // the refused action as a stale page or a hand-made request would send it: this session's own form
    const submit = `(() => {
      const form = document.createElement('form');
      form.method = 'post';
      form.action = ${JSON.stringify(`/console/runs/${runId}/cancel`)};
      const field = document.createElement('input');
      field.type = 'hidden';
      field.name = 'csrf';
      field.value = document.querySelector('input[name="csrf"]').value;
      form.append(field);
      document.body.append(form);
      form.submit();
    })()`;
    await Promise.all([editor.page.waitForNavigation(), editor.page.evaluate(submit)]);
    assert.equal(await editor.page.textContent('h1'), 'Not allowed for your role');
    assert.match(await editor.page.textContent('#refusal-why') ?? '', /editor role\. This action needs the permission runs\.operate, which the admin, operator roles hold/);
    assert.equal(await editor.page.getAttribute('#refusal-back', 'href'), `/console/runs/${runId}`);
    await shot(editor.page, 'console-refused');
    await editor.page.click('#refusal-back');
    await waitForText(editor.page, '#run-status', /PAUSED/);
    await editor.context.close();
  });

  it('gives a scheduled trigger its inputs from a form generated from the input schema, makes and revokes a hosted-form link, a key with a role, a member\'s personal access token, and deletes an agent', async () => {
    const admin = await signIn(fg.adminToken);
    await admin.page.goto(`${fg.url}/console/workflows/${p.workflowId}`);
    await admin.page.click('details[data-needs="triggers.write"] summary');
    await admin.page.fill('#trigger-name', 'weekly');
    await admin.page.check('input[name="kind"][value="schedule"]');
    await admin.page.fill('#trigger-every', '168h');
    assert.equal(await admin.page.getAttribute('#schedule-inputs #f0', 'name'), 'input:topic');
    await admin.page.fill('#schedule-inputs #f0', 'weekly figures');
    await admin.page.fill('#schedule-inputs #f1', 'sk-weekly');
    await shot(admin.page, 'console-schedule-inputs');
    await Promise.all([admin.page.waitForNavigation(), admin.page.click('details[data-needs="triggers.write"] button[type="submit"]')]);
    assert.match(await admin.page.textContent('main') ?? '', /The trigger was created/);
    const listed = await fg.admin<{ triggers: { id: string; name: string | null }[] }>('GET', `/api/v1/triggers?workflowId=${p.workflowId}`);
    const weekly = listed.body.triggers.find((t) => t.name === 'weekly');
    assert.ok(weekly, JSON.stringify(listed.body));
    const read = await fg.admin<{ schedule?: { inputs?: Record<string, unknown> } }>('GET', `/api/v1/triggers/${weekly.id}`);
    assert.deepEqual(read.body.schedule?.inputs, { topic: 'weekly figures', apiToken: 'sk-weekly' }, JSON.stringify(read.body));
    assert.match(await admin.page.textContent(`#trigger-${weekly.id}`) ?? '', /Its runs get inputs: topic, apiToken/);
    assert.ok(!(await admin.page.content()).includes('sk-weekly'), 'a schedule\'s input values are not shown');

    // a hosted-form link, shown once, then revoked
    await Promise.all([admin.page.waitForNavigation(), admin.page.click(`#trigger-${p.triggerId} form[action$="/forms"] button`)]);
    const url = await admin.page.textContent('#form-url') ?? '';
    assert.match(url, /\/forms\/fgf_/);
    const opened = await fg.request(new URL(url).pathname);
    assert.equal(opened.status, 200);
    await admin.page.goto(`${fg.url}/console/workflows/${p.workflowId}`);
    await Promise.all([admin.page.waitForNavigation(), admin.page.click(`#trigger-${p.triggerId} ul.forms button.danger`)]);
    assert.match(await admin.page.textContent('.notice') ?? '', /hosted form was revoked/);
    assert.equal((await fg.request(new URL(url).pathname)).status, 404);

    // an API key limited to a role
    await admin.page.goto(`${fg.url}/console/api-keys`);
    await admin.page.fill('#key-name', 'dashboard');
    await admin.page.selectOption('#key-role', 'viewer');
    await Promise.all([admin.page.waitForNavigation(), admin.page.click('form[action="/console/api-keys"] button')]);
    assert.match(await admin.page.textContent('#new-key') ?? '', /^fgk_/);
    const keys = await fg.admin<{ apiKeys: { name: string | null; role: string | null }[] }>('GET', '/api/v1/api-keys');
    assert.equal(keys.body.apiKeys.find((k) => k.name === 'dashboard')?.role, 'viewer');

    // a personal access token for a member, which signs in
    await admin.page.goto(`${fg.url}/console/people`);
    const vic = await admin.page.getAttribute('tr:has-text("vic@example.com")', 'id') ?? '';
    await Promise.all([admin.page.waitForNavigation(), admin.page.click(`#${vic} form[action$="/tokens"] button`)]);
    const pat = await admin.page.textContent('#new-token') ?? '';
    assert.match(pat, /^fgp_/);

    // an agent deleted from its page
    const agent = await fg.admin<{ id: string }>('POST', '/api/v1/agents', { name: 'Scratch helper', instructions: 'Answer in one sentence.' });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    await admin.page.goto(`${fg.url}/console/agents/${agent.body.id}`);
    await Promise.all([admin.page.waitForNavigation(), admin.page.click(`form[action="/console/agents/${agent.body.id}/delete"] button`)]);
    assert.match(await admin.page.textContent('.notice') ?? '', /The agent was deleted/);
    assert.equal((await fg.admin('GET', `/api/v1/agents/${agent.body.id}`)).status, 404);
    assert.deepEqual(admin.problems, []);
    await admin.context.close();
    const viewer = await signIn(pat);
    assert.match(new URL(viewer.page.url()).pathname, /\/console\/runs$/);
    await viewer.context.close();
  });

  it('edits an existing schedule\'s inputs: pre-filled without the secret, a refusal beside its field, saved through to the Temporal schedule with the blank secret kept', async () => {
    const digest = await publishWorkflow(fg, {
      name: 'Weekly digest',
      inputSchema: {
        type: 'object',
        properties: {
          topic: { type: 'string', title: 'Topic', minLength: 1 },
          items: { type: 'integer', title: 'Items', description: 'How many stories, at least one.', minimum: 1 },
          apiToken: { type: 'string', title: 'API token', writeOnly: true },
        },
        required: ['topic'],
      },
      steps: [{ name: 'Compile', type: 'template', template: '{{inputs.items}} stories on {{inputs.topic}}' }],
    });
    const created = await fg.admin<{ id: string }>('POST', '/api/v1/triggers', {
      workflowId: digest.workflowId, name: 'monday digest', schedule: { cron: '0 7 * * 1', timeZone: 'Europe/Berlin', inputs: { topic: 'payments', items: 5, apiToken: 'sk-digest-secret' } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const triggerId = created.body.id;
    const admin = await signIn(fg.adminToken);
    const { page } = admin;
    const submit = async (selector: string): Promise<void> => { await Promise.all([page.waitForNavigation(), page.click(selector)]); };
    await page.goto(`${fg.url}/console/workflows/${digest.workflowId}`);
    await submit(`#trigger-${triggerId} a[href$="/schedule"]`);
    assert.equal(await page.textContent('h1'), 'Inputs of the schedule of monday digest');
    assert.equal(await page.inputValue('#schedule-inputs [name="input:topic"]'), 'payments');
    assert.equal(await page.inputValue('#schedule-inputs [name="input:items"]'), '5');
    assert.equal(await page.inputValue('#schedule-inputs [name="input:apiToken"]'), '', 'the secret is not filled in');
    assert.ok(!(await page.content()).includes('sk-digest-secret'), 'nor anywhere on the page');

    // a value the schema refuses: said beside its field, nothing saved
    await page.fill('#schedule-inputs [name="input:items"]', '0');
    await page.fill('#schedule-inputs [name="input:topic"]', 'payments and fraud');
    await submit('form[action$="/schedule"] button[type="submit"]');
    assert.match(await page.textContent('#form-problems') ?? '', /One input needs a change/);
    const items = await page.getAttribute('#schedule-inputs [name="input:items"]', 'aria-describedby') ?? '';
    assert.match(await page.textContent(`#${items.split(' ').find((id) => id.endsWith('-error')) ?? 'none'}`) ?? '', /must be >= 1/);
    assert.equal(await page.inputValue('#schedule-inputs [name="input:topic"]'), 'payments and fraud', 'what was typed is kept');
    await shot(page, 'console-schedule-edit');
    const read = async () => (await fg.admin<{ schedule?: { inputs?: Record<string, unknown> } }>('GET', `/api/v1/triggers/${triggerId}`)).body.schedule?.inputs;
    assert.deepEqual(await read(), { topic: 'payments', items: 5, apiToken: 'sk-digest-secret' });

    await page.fill('#schedule-inputs [name="input:items"]', '8');
    await submit('form[action$="/schedule"] button[type="submit"]');
    assert.match(await page.textContent('main [role="status"]') ?? '', /The schedule's inputs were saved/);
    const saved = { topic: 'payments and fraud', items: 8, apiToken: 'sk-digest-secret' };
    assert.deepEqual(await read(), saved, 'the blank secret kept its value');
    const described = await fg.client.schedule.getHandle(scheduleIdFor(triggerId)).describe();
    assert.deepEqual(fieldOf(described.action.type === 'startWorkflow' ? described.action.args?.[0] : undefined, 'inputs'), saved, 'the Temporal schedule starts its next runs with them');
    assert.deepEqual(admin.problems.filter((p) => !/status of 422/.test(p)), []);
    await admin.context.close();
  });
});
