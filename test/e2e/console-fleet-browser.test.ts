/**
 * The console's fleet operations in Debian's Chromium through playwright-core (issue 54): the runs
 * page's filter counted and confirmed as a batch (the browser's own confirmation accepted), whose
 * page follows the batch by reloading itself until it is complete, under the console's CSP; and an
 * alert rule created with a refusal shown beside its field first. FLOWGATE_CONSOLE_SCREENSHOTS=<dir>
 * keeps the screenshots.
 */
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchChromium, shot, waitForText } from '../support/chromium';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';

describe('the console\'s bulk actions and alert rules, in a browser', () => {
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

  it('counts, confirms and follows a batch to its end; creates an alert rule after a refusal beside its field', async function () {
    this.timeout(180_000);
    const p = await publishWorkflow(fg, { name: 'browser-fleet', steps: [{ name: 'Wait', type: 'delay', duration: '10m' }] });
    for (let i = 0; i < 4; i++) {
      const response = await trigger(fg, p, {}, { Prefer: 'wait=0' });
      await response.arrayBuffer();
      assert.ok(response.headers.get('X-Pf-Run-Id'));
    }
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
    page.on('pageerror', (error) => problems.push(error.message));
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    await page.goto(`${fg.url}/console/sign-in`);
    await page.fill('#token', fg.adminToken);
    await Promise.all([page.waitForURL('**/console/runs'), page.click('button[type="submit"]')]);

    await page.goto(`${fg.url}/console/runs?workflowId=${p.workflowId}&since=1h`);
    await page.click('#act-on-matching summary');
    await page.selectOption('#batch-action', 'pause');
    await page.fill('#batch-reason', 'upstream change');
    await Promise.all([page.waitForNavigation(), page.click('#act-on-matching button[type="submit"]')]);
    assert.equal(await page.getAttribute('#batch-count', 'data-count'), '4');
    await shot(page, 'console-batch-count');
    await Promise.all([page.waitForURL('**/console/batches/batch-*'), page.click('#confirm-batch button[type="submit"]')]);
    assert.deepEqual(dialogs, ['Pause at the next step: 4 run(s)?']);
    // the page reloads itself (a meta refresh) until the batch is complete
    await waitForText(page, '#batch-status', /COMPLETE/, 60_000);
    assert.equal(await page.textContent('#batch-succeeded'), '4');
    await shot(page, 'console-batch');
    const batchId = page.url().split('/').pop() ?? '';
    const api = await fg.admin<{ succeeded: number; outcomes: { runId: string }[] }>('GET', `/api/v1/runs/batch/${batchId}`);
    assert.equal(api.body.succeeded, 4);
    for (const { runId } of api.body.outcomes) {
      const status = await fg.admin<{ operatorPause?: { reason?: string } }>('GET', `/api/v1/runs/${runId}`);
      assert.equal(status.body.operatorPause?.reason, 'upstream change');
    }

    await page.goto(`${fg.url}/console/alerts`);
    await Promise.all([page.waitForNavigation(), page.click('#new-alert')]);
    await page.fill('#alert-name', 'failures');
    await page.selectOption('#alert-kind', 'failure_rate');
    await page.fill('#alert-windowSeconds', '60');
    await page.selectOption('#alert-destination', 'webhook');
    await page.fill('#alert-url', 'https://hooks.example/flowgate');
    await Promise.all([page.waitForNavigation(), page.click('#alert-form button[type="submit"]')]);
    assert.match(await page.textContent('#alert-threshold-error') ?? '', /exactly one of threshold and ratio/);
    await page.fill('#alert-threshold', '5');
    await Promise.all([page.waitForNavigation(), page.click('#alert-form button[type="submit"]')]);
    assert.match(await page.textContent('#alert-notice') ?? '', /The alert rule was created/);
    await shot(page, 'console-alert-rule');
    const rules = await fg.admin<{ alerts: { name: string; condition: unknown }[] }>('GET', '/api/v1/alerts');
    assert.deepEqual(rules.body.alerts.map((r) => [r.name, r.condition]), [['failures', { kind: 'failure_rate', windowSeconds: 60, threshold: 5 }]]);
    // the refused form answers 400, as it should; nothing else went wrong in the page
    assert.deepEqual(problems, ['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
    await context.close();
    const cleanup = await fg.admin('POST', '/api/v1/runs/batch', { action: 'cancel', filter: { workflowId: p.workflowId } });
    assert.equal(cleanup.status, 202);
  });
});
