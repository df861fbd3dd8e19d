/**
 * The console's workflow pages in a real browser (Debian's Chromium via playwright-core): creates a
 * workflow, saves an invalid draft and sees the problem with its path and line, fixes it, publishes
 * two versions and reads their diff, creates a scheduled trigger and pauses and resumes its
 * schedule, and creates an API key that is shown once (a reload does not show it again).
 * FLOWGATE_CONSOLE_SCREENSHOTS=<dir> keeps screenshots (docs/images/console-workflow*.png).
 */
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchChromium, shot } from '../support/chromium';
import { startTestFlowgate, type TestFlowgate } from '../support/flowgate';

const definition = (second: object) => JSON.stringify({
  name: 'Nightly report',
  inputSchema: { type: 'object', properties: { day: { type: 'string' } } },
  steps: [{ name: 'Collect', type: 'template', template: 'collecting {{inputs.day}}' }, second],
}, null, 2);

describe('console workflows in a browser', () => {
  let fg: TestFlowgate;
  let browser: Browser;

  before(async () => {
    browser = await launchChromium();
    fg = await startTestFlowgate();
  });
  after(async () => {
    await browser?.close();
    await fg?.stop();
  });

  it('creates a workflow, shows a draft\'s problem in place, publishes, diffs versions, manages a trigger, its schedule and an API key', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    // (the refused draft's page is answered 400 on purpose: Chromium logs that status, which is no problem)
    page.on('console', (message) => { if (message.type() === 'error' && !/status of 400/.test(message.text())) problems.push(message.text()); });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('dialog', (dialog) => { void dialog.accept(); });
    const submit = async (selector: string): Promise<void> => { await Promise.all([page.waitForNavigation(), page.click(selector)]); };

    await page.goto(`${fg.url}/console/sign-in`);
    await page.fill('#token', fg.adminToken);
    await submit('button[type="submit"]');

    // a new workflow
    await page.goto(`${fg.url}/console/workflows`);
    await submit('a[href="/console/workflows/new"]');
    await page.fill('#definition', definition({ name: 'Write', type: 'template', template: 'report 1' }));
    await submit('main button[type="submit"]');
    assert.match(await page.textContent('h1') ?? '', /Nightly report/);
    assert.match(await page.textContent('main [role="status"]') ?? '', /created/);
    const workflowId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop() ?? '');
    await submit('form[action$="/publish"] button');
    assert.match(await page.textContent('main [role="status"]') ?? '', /Published/);

    // an invalid draft: the problem with its path, linked to its line
    await submit('a[href$="/draft"]');
    const invalid = definition({ name: 'Send', type: 'http', url: 42 });
    await page.fill('#definition', invalid);
    await submit('main button[type="submit"]');
    const alert = await page.textContent('main [role="alert"]') ?? '';
    assert.match(alert, /steps\[1\]\.url/);
    const urlLine = invalid.split('\n').findIndex((l) => l.includes('"url": 42')) + 1;
    assert.match(alert, new RegExp(`line ${urlLine}\\b`));
    assert.equal(await page.getAttribute(`ol.problems a, ul.problems a`, 'href'), `#line-${urlLine}`);
    assert.equal(await page.getAttribute(`#line-${urlLine}`, 'class'), 'bad');
    assert.match(await page.textContent(`#line-${urlLine}`) ?? '', /"url": 42/);
    assert.equal(await page.inputValue('#definition'), invalid, 'the submitted text is kept to fix');
    await shot(page, 'console-workflow-draft-error');
    const api = await fg.admin<{ draft: { steps: { type: string }[] } }>('GET', `/api/v1/workflows/${workflowId}`);
    assert.equal(api.body.draft.steps[1]?.type, 'template', 'an invalid draft is not saved');

    // fixed, saved, published as version 2
    await page.fill('#definition', definition({ name: 'Send', type: 'http', method: 'POST', url: 'https://example.com/report' }));
    await submit('main button[type="submit"]');
    assert.match(await page.textContent('main [role="status"]') ?? '', /saved/);
    await submit('form[action$="/publish"] button');
    assert.match(await page.textContent('dl.facts') ?? '', /version 2/);

    // the diff between versions 1 and 2
    await submit('a[href$="/diff"]');
    await page.selectOption('#from', '1');
    await page.selectOption('#to', '2');
    await submit('form.filters button');
    assert.match(await page.textContent('#diff-summary') ?? '', /version 1 → version 2: \d+ lines? added, \d+ removed/);
    const added = await page.$$eval('tr.d-added code', (cells) => cells.map((c) => c.textContent ?? ''));
    const removed = await page.$$eval('tr.d-removed code', (cells) => cells.map((c) => c.textContent ?? ''));
    assert.ok(added.some((l) => l.includes('"url": "https://example.com/report"')), `added: ${added.join(' | ')}`);
    assert.ok(removed.some((l) => l.includes('"template": "report 1"')), `removed: ${removed.join(' | ')}`);
    await shot(page, 'console-workflow-diff');

    // a scheduled trigger, paused and resumed
    await page.goto(`${fg.url}/console/workflows/${workflowId}`);
    await page.click('details.panel summary');
    await page.fill('#trigger-name', 'nightly');
    await page.check('input[name="kind"][value="schedule"]');
    await page.fill('#trigger-every', '1h');
    await submit('form[action$="/triggers"] button[type="submit"]');
    assert.match(await page.textContent('main [role="status"]') ?? '', /trigger was created/);
    const triggerId = (await page.getAttribute('ul.triggers li', 'id') ?? '').replace(/^trigger-/, '');
    assert.ok(triggerId.length > 4);
    assert.match(await page.textContent(`#trigger-${triggerId}`) ?? '', new RegExp(`POST http://[^ ]+/ext/triggers/${triggerId}`));
    assert.equal(await page.textContent(`[data-schedule-state="${triggerId}"]`), 'active');
    await shot(page, 'console-workflow');
    await submit(`#trigger-${triggerId} form[action$="/schedule/pause"] button`);
    assert.equal(await page.textContent(`[data-schedule-state="${triggerId}"]`), 'paused');
    const paused = await fg.admin<{ schedule: { state: { paused: boolean } } }>('GET', `/api/v1/triggers/${triggerId}`);
    assert.equal(paused.body.schedule.state.paused, true, 'Temporal\'s schedule is paused');
    await submit(`#trigger-${triggerId} form[action$="/schedule/resume"] button`);
    assert.equal(await page.textContent(`[data-schedule-state="${triggerId}"]`), 'active');
    const resumed = await fg.admin<{ schedule: { state: { paused: boolean } } }>('GET', `/api/v1/triggers/${triggerId}`);
    assert.equal(resumed.body.schedule.state.paused, false);

    // an API key: shown once
    await page.click('nav a[href="/console/api-keys"]');
    await page.fill('#key-name', 'reporting');
    await submit('form[action="/console/api-keys"] button');
    const key = (await page.textContent('#new-key')) ?? '';
    assert.match(key, /^fgk_[A-Za-z0-9_-]{20,}$/);
    assert.match(await page.textContent('table') ?? '', /reporting/);
    await page.reload();
    assert.equal(await page.$('#new-key'), null, 'a reload does not show the key again');
    assert.doesNotMatch(await page.content(), new RegExp(key));
    const keys = await fg.admin<{ apiKeys: { name: string | null; revokedAt: string | null }[] }>('GET', '/api/v1/api-keys');
    assert.ok(keys.body.apiKeys.some((k) => k.name === 'reporting' && k.revokedAt === null));
    // revoked from the page
    await submit('table form[action$="/revoke"] button');
    assert.match(await page.textContent('table') ?? '', /revoked/);
    const after = await fg.admin<{ apiKeys: { name: string | null; revokedAt: string | null }[] }>('GET', '/api/v1/api-keys');
    assert.ok(after.body.apiKeys.some((k) => k.name === 'reporting' && k.revokedAt !== null));

    // the trigger deleted from the workflow page
    await page.goto(`${fg.url}/console/workflows/${workflowId}`);
    await submit(`#trigger-${triggerId} form[action$="/delete"] button`);
    assert.match(await page.textContent('main [role="status"]') ?? '', /deleted/);
    assert.equal((await fg.admin('GET', `/api/v1/triggers/${triggerId}`)).status, 404);
    assert.deepEqual(problems, [], 'no script or CSP errors');
    await page.close();
  });
});
