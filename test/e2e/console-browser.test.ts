/**
 * The console and a hosted form in a real browser: Debian's Chromium driven by playwright-core
 * (`.ci/run` installs the `chromium` package; CHROMIUM_PATH overrides where it is). Signs in,
 * starts a published workflow through its hosted form, watches the run reach PAUSED at its approval
 * live, approves it, sees COMPLETE and downloads the result; then fills a waiting form with a file
 * and reads the result. Visits the workflows page on the way (console-workflows-browser.test.ts shoots it). FLOWGATE_CONSOLE_SCREENSHOTS=<dir> keeps a screenshot of each page there
 * (docs/images/ holds the ones docs/console.md shows).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { launchChromium, shot, waitForText } from '../support/chromium';
import { publishWorkflow, startTestFlowgate, type TestFlowgate } from '../support/flowgate';

describe('console and hosted forms in a browser', () => {
  let fg: TestFlowgate;
  let browser: Browser;

  before(async function () {
    browser = await launchChromium();
    fg = await startTestFlowgate();
  });
  after(async () => {
    await browser?.close();
    await fg?.stop();
  });

  it('signs in, starts a run from its form, approves it when it pauses, sees it complete and downloads the result', async () => {
    const p = await publishWorkflow(fg, {
      name: 'Release', description: 'Ship a version after sign-off.',
      inputSchema: { type: 'object', properties: { version: { type: 'string', title: 'Version', description: 'the tag to release' } }, required: ['version'] },
      steps: [
        { name: 'Prepare', type: 'template', template: 'preparing {{inputs.version}}' },
        { name: 'Sign-off', type: 'approval', approvers: ['carol@example.com'], message: 'Release {{inputs.version}} to production?', timeout: '5m' },
        { name: 'Release', type: 'template', template: 'released {{inputs.version}}' },
      ],
    }, { name: 'release form' });
    const form = await fg.admin<{ url: string }>('POST', `/api/v1/triggers/${p.triggerId}/forms`, {});
    assert.equal(form.status, 201);

    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
    page.on('pageerror', (error) => problems.push(error.message));

    await page.goto(`${fg.url}/console`);
    assert.equal(new URL(page.url()).pathname, '/console/sign-in', 'signed out: the sign-in page');
    await shot(page, 'console-sign-in');
    await page.fill('#token', fg.adminToken);
    await Promise.all([page.waitForURL('**/console/runs'), page.click('button[type="submit"]')]);

    // start it through its hosted form (the same browser, no header needed)
    await page.goto(form.body.url);
    await page.fill('#f0', 'v2.3');
    await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
    assert.match(await page.textContent('h1') ?? '', /Thank you/);
    const runId = (await page.textContent('main code')) ?? '';
    assert.ok(runId.length > 10);

    await page.goto(`${fg.url}/console/runs?workflowId=${p.workflowId}`);
    await page.click(`a[href="/console/runs/${runId}"]`);
    await waitForText(page, '#run-status', /PAUSED/);
    assert.match(await page.textContent('blockquote') ?? '', /Release v2\.3 to production\?/);
    await shot(page, 'console-run-paused');
    await page.fill('#comment', 'ship it');
    // keyboard: the Approve button takes focus and Enter presses it
    await page.focus('button[value="approve"]');
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    await waitForText(page, '#run-status', /COMPLETE/);
    await waitForText(page, 'ol.timeline', /released v2\.3/);
    await shot(page, 'console-run-complete');

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('a[download="step-3-output.txt"]')]);
    assert.equal(readFileSync(await download.path(), 'utf8'), 'released v2.3');

    await page.goto(`${fg.url}/console/runs`);
    await waitForText(page, `[data-run-status="${runId}"]`, /COMPLETE/);
    await shot(page, 'console-runs');
    await page.click('nav a[href="/console/workflows"]');
    await page.click(`a[href="/console/workflows/${p.workflowId}"]`);
    assert.match(await page.textContent('h1') ?? '', /Release/);
    assert.deepEqual(problems, [], 'no script or CSP errors');
    await context.close();
  });

  it('fills a waiting hosted form with a file and shows the result', async () => {
    const p = await publishWorkflow(fg, {
      name: 'Intake', description: 'Send a report for review.',
      inputSchema: {
        type: 'object',
        properties: { name: { type: 'string', title: 'Your name' }, pages: { type: 'integer', title: 'Pages' }, urgent: { type: 'boolean', title: 'Urgent' } },
        required: ['name'],
      },
      steps: [{ name: 'Receive', type: 'code', source: 'return `received ${inputs.attachments.map((a) => `${a.filename} (${a.size} bytes)`).join(", ")} from ${inputs.name}, ${inputs.pages} pages, urgent: ${inputs.urgent}`' }],
    });
    const form = await fg.admin<{ url: string }>('POST', `/api/v1/triggers/${p.triggerId}/forms`, { wait: true });
    const page = await browser.newPage();
    await page.goto(form.body.url);
    await page.fill('#f0', 'Ada');
    await page.fill('#f1', '12');
    await page.check('#f2');
    await page.setInputFiles('#files', { name: 'report.csv', mimeType: 'text/csv', buffer: Buffer.from('a,b\n1,2\n') });
    await shot(page, 'hosted-form');
    await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
    assert.equal(await page.textContent('h1'), 'Done');
    assert.equal(await page.textContent('pre'), 'received report.csv (8 bytes) from Ada, 12 pages, urgent: true');
    await shot(page, 'hosted-form-result');
    await page.close();
  });
});
