/**
 * A verified trigger's console page in a real browser (Debian's Chromium via playwright-core;
 * docs/webhooks.md#in-the-console): from the workflow's page to the trigger's, the preset and the
 * last deliveries (verified, and refused with the check), then a rotation through the form: both
 * secrets verify, then the new one alone; no secret is ever on the page, and the page raises no
 * browser error (the console's CSP allows no inline script).
 * FLOWGATE_CONSOLE_SCREENSHOTS=<dir> keeps a screenshot (console-trigger.png).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { createTrigger, opensslHmac, post } from '../triggers/webhook-support';

const SHOTS = process.env.FLOWGATE_CONSOLE_SCREENSHOTS;

describe('console: a verified trigger\'s page in a browser', () => {
  let fg: TestFlowgate;
  let p: Published;
  let browser: Browser;

  before(async () => {
    browser = await launchChromium();
    fg = await startTestFlowgate();
    p = await publishWorkflow(fg, { name: 'Push hook', steps: [{ name: 'Echo', type: 'template', format: 'plaintext', template: 'ok' }] });
  });
  after(async () => {
    await browser?.close();
    await fg?.stop();
  });

  const push = (triggerId: string, secret: string) => {
    const body = JSON.stringify({ ref: 'refs/heads/main', n: randomUUID() });
    return post(fg, triggerId, body, { 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': randomUUID(), 'X-Hub-Signature-256': `sha256=${opensslHmac(secret, body)}` });
  };

  it('shows the preset and the deliveries, and rotates the secrets through its form', async () => {
    const first = `first-${randomUUID()}`;
    const second = `second-${randomUUID()}`;
    const triggerId = await createTrigger(fg, p.workflowId, { name: 'GitHub pushes', verify: { preset: 'github', secrets: [first], events: ['push'] } });
    assert.equal((await push(triggerId, first)).status, 202);
    assert.equal((await push(triggerId, 'not-the-secret')).status, 401);

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
    page.on('pageerror', (error) => problems.push(error.message));
    const submit = async (selector: string): Promise<void> => { await Promise.all([page.waitForNavigation(), page.click(selector)]); };

    await page.goto(`${fg.url}/console/sign-in`);
    await page.fill('#token', fg.adminToken);
    await submit('button[type="submit"]');
    await page.goto(`${fg.url}/console/workflows/${p.workflowId}`);
    await submit(`a[href="/console/triggers/${triggerId}"]`);

    assert.match(await page.textContent('h1') ?? '', /GitHub pushes/);
    assert.match(await page.textContent('#preset') ?? '', /Preset github/);
    assert.match(await page.textContent('#secrets') ?? '', /Holds one secret/);
    const rows = await page.$$eval('#deliveries tbody tr', (trs) => trs.map((tr) => ({ outcome: tr.getAttribute('data-outcome'), text: tr.textContent ?? '' })));
    assert.deepEqual(rows.map((r) => r.outcome), ['refused', 'verified']);
    assert.match(rows[0]?.text ?? '', /signature_mismatch/);
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, 'console-trigger.png'), fullPage: true });

    await page.fill('#secret-new', second);
    await page.fill('#secret-old', first);
    await submit('#rotate button[type="submit"]');
    assert.match(await page.textContent('main [role="status"]') ?? '', /replaced/);
    assert.match(await page.textContent('#secrets') ?? '', /Holds 2 secrets/);
    assert.deepEqual([(await push(triggerId, first)).status, (await push(triggerId, second)).status], [202, 202]);

    await page.fill('#secret-new', second);
    await submit('#rotate button[type="submit"]');
    assert.match(await page.textContent('#secrets') ?? '', /Holds one secret/);
    assert.deepEqual([(await push(triggerId, first)).status, (await push(triggerId, second)).status], [401, 202]);

    const html = await page.content();
    assert.ok(!html.includes(first) && !html.includes(second), 'no secret is on the page');
    assert.equal(await page.inputValue('#secret-new'), '', 'the form comes back empty');
    assert.deepEqual(problems, []);
  });
});
