/**
 * The Temporal Web UI of flowgate's embedded Temporal (the Web UI server v2.58), in a real browser
 * (Debian's Chromium through playwright-core): a run paused on an approval reads as flowgate's
 * workflow, its steps by name, and why it waits; a run's input and result, and a failed run's
 * message, encrypted in Temporal, show decrypted. The embedded UI is configured with flowgate's
 * codec endpoint and sends the browser's credentials to it, so the operator's one step is "Open in
 * the Temporal Web UI" on the run's console page, signed in as the instance administrator (or, without
 * the console, signing in to `/codec/sign-in`); no setting in the UI. The Workflows list shows each
 * run's name in the FlowgateWorkflowName column, added as docs/console.md says. FLOWGATE_SCREENSHOT=<file>
 * keeps a screenshot of the run's page (docs/images/temporal-ui-paused-run.png was made so);
 * FLOWGATE_CONSOLE_SCREENSHOTS=<dir> those docs/console.md shows (temporal-ui-*.png).
 */
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import path from 'node:path';
import { freePort } from '../../temporal/ports';
import { freeTemporalFrontendPort, temporalBinaries } from '../setup/root-hooks';
import { launchChromium } from '../support/chromium';
import { pollStatus, publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';


/** Waits until the page's text matches, reloading now and then (the UI polls on its own, but slowly). */
async function untilText(page: Page, pattern: RegExp, timeoutMs = 60_000, afterReload?: () => Promise<void>): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let text: string;
  for (let round = 1; ; round++) {
    // the UI renders summaries and details (Markdown) in frames of their own
    text = (await Promise.all(page.frames().map((f) => f.locator('body').innerText().catch(() => '')))).join('\n');
    if (pattern.test(text)) return text;
    if (Date.now() > deadline) {
      if (process.env.FLOWGATE_SCREENSHOT) await page.screenshot({ path: `${process.env.FLOWGATE_SCREENSHOT}.failed.png`, fullPage: true });
      throw new Error(`${pattern} not on the page; it shows:\n${text.slice(0, 8000)}`);
    }
    await page.waitForTimeout(1000);
    if (round % 10 === 0) {
      await page.reload();
      await afterReload?.();
    }
  }
}

describe('a paused run in the Temporal Web UI, in a browser', () => {
  let fg: TestFlowgate;
  let browser: Browser;

  before(async function () {
    this.timeout(180_000);
    browser = await launchChromium();
    // No TEMPORAL_ADDRESS: flowgate starts its own dev server, with the Web UI on a port of its own.
    // The gateway's port is fixed before the start: the dev server's UI is given its codec endpoint before the gateway listens.
    fg = await startTestFlowgate({
      TEMPORAL_ADDRESS: undefined as unknown as string, TEMPORAL_SERVER_PATH: temporalBinaries().binaries.server, TEMPORAL_UI_SERVER_PATH: temporalBinaries().uiServer,
      PORT: String(await freePort()), TEMPORAL_DEV_PORT: String(await freeTemporalFrontendPort()), TEMPORAL_UI_PORT: String(await freePort()),
    });
  });
  after(async () => {
    await browser?.close();
    await fg?.stop();
  });

  /** What an operator does once per browser session: sign in at the codec endpoint with the administrator token. */
  async function signedInPage(signIn = true): Promise<Page> {
    // each page is a browser context of its own: cookies and local storage are not shared
    const page = await browser.newPage({ viewport: { width: 1440, height: 1100 } });
    if (signIn) {
      await page.goto(`${fg.url}/codec/sign-in`);
      await page.fill('#token', fg.adminToken);
      await page.click('button[type=submit]');
      await page.waitForSelector('#signed-in');
    }
    assert.equal(fg.codecEndpoint, `${fg.url}/codec`, 'the embedded UI was started with the codec endpoint');
    return page;
  }

  it('shows the workflow\'s name and version, its steps by name and what the paused run waits for', async function () {
    this.timeout(180_000);
    assert.ok(fg.temporalUiUrl, 'the embedded dev server has a Web UI');
    const p = await publishWorkflow(fg, {
      name: 'Release train',
      steps: [
        { name: 'Build notes', type: 'code', source: 'return "notes for " + inputs.version' },
        { name: 'Cool-off', type: 'delay', duration: '1s' },
        { name: 'Sign-off', type: 'approval', approvers: ['ops@example.com'], message: 'Release {{inputs.version}} to production?', timeout: '2h' },
        { name: 'Release', type: 'template', template: 'released {{inputs.version}}' },
      ],
    });
    const runId = (await trigger(fg, p, { version: 'v2.3' })).headers.get('X-Pf-Run-Id') ?? '';
    await pollStatus(fg, p, runId, (s) => (s as { waitingOn?: { kind: string } }).waitingOn?.kind === 'approval', 60_000);

    const page = await signedInPage();
    await page.goto(`${fg.temporalUiUrl}/namespaces/default/workflows/${runId}`);
    // the run's summary, details and current details: the "User Metadata" tab
    const openMetadata = () => page.getByText('User Metadata', { exact: true }).click();
    await openMetadata();
    await untilText(page, /Release train v1 · trigger/, 60_000, openMetadata);
    await untilText(page, /Paused: step 3 · Sign-off waits for approval by ops@example\.com/, 60_000, openMetadata);
    await untilText(page, /Release train\*?\*? version 1/, 60_000, openMetadata);
    // each event's summary names its step: the "Event History" tab
    const openEvents = () => page.getByText(/^Event History/).first().click();
    await openEvents();
    await untilText(page, /1 · Build notes \(code\)/, 60_000, openEvents);
    await untilText(page, /2 · Cool-off: delay 1s/, 60_000, openEvents);
    await untilText(page, /3 · Sign-off: approval by ops@example\.com/, 60_000, openEvents);
    const screenshot = process.env.FLOWGATE_SCREENSHOT;
    if (screenshot) await page.screenshot({ path: screenshot, fullPage: false });
    await page.close();
  });

  it('shows a run\'s input and result, encrypted in Temporal, decrypted through the codec endpoint', async function () {
    this.timeout(180_000);
    const marker = `uimark${Date.now().toString(36)}`;
    const reversed = [...marker].reverse().join('');
    const p = await publishWorkflow(fg, { name: 'Sealed in the UI', steps: [{ name: 'Reverse', type: 'code', source: 'return inputs.secret.split("").reverse().join("")' }] });
    const response = await trigger(fg, p, { secret: marker }, { 'x-api-wait': 'true' });
    assert.equal(response.status, 200, await response.clone().text());
    const runId = response.headers.get('X-Pf-Run-Id') ?? '';
    const raw = JSON.stringify(await fg.client.workflow.getHandle(runId).fetchHistory());
    assert.ok(!raw.includes(marker), 'Temporal holds the input sealed');

    const decodeCall = (status: number) => (r: { url(): string; status(): number }) => r.url().split('?')[0] === `${fg.url}/codec/decode` && r.status() === status;
    // not signed in: the UI's codec calls are refused, and the input stays sealed on the page
    const stranger = await signedInPage(false);
    const refused = stranger.waitForResponse(decodeCall(401), { timeout: 60_000 });
    await stranger.goto(`${fg.temporalUiUrl}/namespaces/default/workflows/${runId}`);
    await refused;
    await untilText(stranger, new RegExp(runId));
    assert.doesNotMatch(await stranger.locator('body').innerText(), new RegExp(marker));
    await stranger.close();

    const page = await signedInPage();
    const decoded = page.waitForResponse(decodeCall(200), { timeout: 60_000 });
    await page.goto(`${fg.temporalUiUrl}/namespaces/default/workflows/${runId}`);
    await decoded;
    await untilText(page, new RegExp(marker));
    await untilText(page, new RegExp(reversed));
    await page.close();
  });

  it('opens a run from the console decoded in one step, and lists runs by name', async function () {
    this.timeout(240_000);
    const shots = process.env.FLOWGATE_CONSOLE_SCREENSHOTS;
    const marker = `uicon${Date.now().toString(36)}`;
    const p = await publishWorkflow(fg, { name: 'Invoice check', steps: [{ name: 'Echo', type: 'code', source: 'return "checked " + inputs.invoice' }] });
    const response = await trigger(fg, p, { invoice: marker }, { 'x-api-wait': 'true' });
    assert.equal(response.status, 200, await response.clone().text());
    const runId = response.headers.get('X-Pf-Run-Id') ?? '';

    // docs/console.md "The Temporal Web UI": sign in to the console as the instance administrator, click the link
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await page.goto(`${fg.url}/console/sign-in`);
    await page.fill('#token', fg.adminToken);
    await Promise.all([page.waitForURL('**/console/runs'), page.click('button[type="submit"]')]);
    await page.goto(`${fg.url}/console/runs/${runId}`);
    const decoded = page.waitForResponse((r) => r.url().split('?')[0] === `${fg.url}/codec/decode` && r.status() === 200, { timeout: 60_000 });
    // the UI's own script replaces its first load: wait for the navigation to be committed, not loaded
    await Promise.all([page.waitForURL(`${fg.temporalUiUrl}/**`, { waitUntil: 'commit' }), page.click('#open-temporal-ui')]);
    assert.ok(page.url().endsWith(`/workflows/${runId}`), page.url());
    await decoded;
    await untilText(page, new RegExp(`checked ${marker}`));
    if (shots) await page.screenshot({ path: path.join(shots, 'temporal-ui-from-console.png') });
    const audit = await fg.admin<{ records: { actor: string; credential: { kind: string }; target: { type: string; id: string }; details: { via?: string } }[] }>('GET', '/api/v1/audit?action=codec.signed_in');
    const record = audit.body.records.find((r) => r.target.id === runId);
    assert.deepEqual([record?.actor, record?.credential.kind, record?.target.type, record?.details.via], ['instance-admin', 'console_session', 'run', 'console'], JSON.stringify(audit.body));

    // the Workflows list: Configure Columns, add FlowgateWorkflowName (once per browser)
    await page.goto(`${fg.temporalUiUrl}/namespaces/default/workflows`);
    await page.click('[data-testid="workflows-summary-table-configuration-button"]');
    await page.getByLabel('Add FlowgateWorkflowName column').click();
    await page.keyboard.press('Escape');
    // the drawer closes on a click beside it; the list is wide: a wide window shows the name column whole
    await page.setViewportSize({ width: 2200, height: 900 });
    await page.mouse.click(300, 700);
    await untilText(page, /FlowgateWorkflowName[\s\S]*Invoice check/);
    await page.locator('table').getByText('Invoice check').first().waitFor({ state: 'visible', timeout: 30_000 });
    if (shots) await page.screenshot({ path: path.join(shots, 'temporal-ui-list-names.png') });

    // signing out of the console ends the codec sign-in: the UI's calls are refused again
    await page.goto(`${fg.url}/console/runs`);
    await Promise.all([page.waitForURL('**/console/sign-in'), page.click('form[action="/console/sign-out"] button')]);
    const refused = page.waitForResponse((r) => r.url().split('?')[0] === `${fg.url}/codec/decode` && r.status() === 401, { timeout: 60_000 });
    await page.goto(`${fg.temporalUiUrl}/namespaces/default/workflows/${runId}`);
    await refused;
    await page.close();
  });

  it('offers a member only the sealed link, and refuses the codec sign-in to their session', async function () {
    this.timeout(120_000);
    const member = await fg.admin<{ id: string }>('POST', '/api/v1/members', { email: `ops${Date.now()}@example.com`, role: 'admin' });
    const token = await fg.admin<{ token: string }>('POST', `/api/v1/members/${member.body.id}/tokens`);
    const p = await publishWorkflow(fg, { name: 'Member view', steps: [{ name: 'One', type: 'template', template: 'x' }] });
    const runId = (await trigger(fg, p, {}, { 'x-api-wait': 'true' })).headers.get('X-Pf-Run-Id') ?? '';
    const page = await browser.newPage();
    await page.goto(`${fg.url}/console/sign-in`);
    await page.fill('#token', token.body.token);
    await Promise.all([page.waitForURL('**/console/runs'), page.click('button[type="submit"]')]);
    await page.goto(`${fg.url}/console/runs/${runId}`);
    assert.equal(await page.getAttribute('a#open-temporal-ui', 'href'), `${fg.temporalUiUrl}/namespaces/default/workflows/${runId}`);
    assert.equal(await page.locator(`form[action$="/temporal-ui"]`).count(), 0, 'no codec sign-in offered');
    // posted all the same (with the page's CSRF token): refused, with the reason
    const csrf = await page.getAttribute('input[name="csrf"]', 'value');
    const answer = await page.evaluate(async ([url, value]) => {
      const res = await fetch(url ?? '', { method: 'POST', body: new URLSearchParams({ csrf: value ?? '' }), redirect: 'manual' });
      return { status: res.status, text: await res.text() };
    }, [`${fg.url}/console/runs/${runId}/temporal-ui`, csrf]);
    assert.equal(answer.status, 403);
    assert.match(answer.text, /only a console session of the instance administrator/);
    await page.close();
  });

  it('shows a failed run\'s message, sealed in Temporal, decrypted through the codec endpoint', async function () {
    this.timeout(180_000);
    const marker = `uifail${Date.now().toString(36)}`;
    const p = await publishWorkflow(fg, { name: 'Failing in the UI', steps: [{ name: 'Refuse', type: 'code', source: 'throw new Error("refused " + inputs.secret)' }] });
    const runId = (await trigger(fg, p, { secret: marker })).headers.get('X-Pf-Run-Id') ?? '';
    assert.equal((await pollStatus(fg, p, runId)).status, 'FAILED');
    const failed = (await fg.client.workflow.getHandle(runId).fetchHistory()).events?.find((e) => e.workflowExecutionFailedEventAttributes);
    assert.equal(failed?.workflowExecutionFailedEventAttributes?.failure?.message, 'Encoded failure', 'Temporal holds the message sealed');

    const page = await signedInPage();
    await page.goto(`${fg.temporalUiUrl}/namespaces/default/workflows/${runId}`);
    // the failure's own message: the step's error also shows in the failure's details and the step's result (payloads)
    await untilText(page, new RegExp(`step 1 \\(Refuse\\) failed: Error: refused ${marker}`));
    await page.close();
  });
});
