/**
 * The approval page in a real browser: Debian's Chromium driven by playwright-core (`.ci/run`
 * installs the `chromium` package; CHROMIUM_PATH overrides where it is).
 */
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { getJson, pollStatus, publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';


describe('approval page in a browser', () => {
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

  it('opens an approver\'s link, shows the request, and approves with a click', async () => {
    const p = await publishWorkflow(fg, {
      name: 'browser-approval',
      steps: [
        { name: 'Sign-off', type: 'approval', approvers: ['carol@example.com'], message: 'Release {{inputs.version}} to production?', timeout: '2m' },
        { name: 'Release', type: 'template', template: 'released {{inputs.version}}' },
      ],
    });
    const runId = (await trigger(fg, p, { version: 'v2.3' })).headers.get('X-Pf-Run-Id') ?? '';
    await pollStatus(fg, p, runId, (s) => s.status === 'PAUSED', 20_000);
    const { body } = await fg.admin<{ approvals: { approvers: { link?: string }[] }[] }>('GET', `/api/v1/runs/${runId}/approvals`);
    const link = body.approvals[0]?.approvers[0]?.link ?? '';

    const page = await browser.newPage();
    await page.goto(link);
    assert.match(await page.textContent('blockquote') ?? '', /Release v2\.3 to production\?/);
    await page.fill('#comment', 'ship it');
    await Promise.all([page.waitForNavigation(), page.click('button[value="approve"]')]);
    assert.equal(await page.textContent('h1'), 'Approved');
    await page.close();

    assert.equal((await pollStatus(fg, p, runId)).status, 'COMPLETE');
    const results = await getJson<{ results: { resultUrls: Record<string, { url: string }> }[] }>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
    const decisions = JSON.parse(await (await fetch(results.body.results[0]?.resultUrls['output.txt']?.url ?? '')).text()) as { decisions: { approver: string; comment: string; via: string }[] };
    assert.deepEqual(decisions.decisions.map((d) => [d.approver, d.comment, d.via]), [['carol@example.com', 'ship it', 'link']]);
  });
});
