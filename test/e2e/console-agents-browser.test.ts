/**
 * The console's Agents pages in a real browser (Debian's Chromium via playwright-core) against the
 * fake OpenAI-compatible model of the agent tests: signs in, opens an agent, sends a message, sees
 * the tool call appear while the tool is still working (the tool waits for the test), then its
 * result and the final answer with the token usage; a follow-up continues the same chat. Without
 * script the page works by reloading. Over HTTP: another organization's session gets 404 for the
 * agent page, its live part and the chat POST; a POST without the CSRF token is a 403; the chat is
 * audited as `agent.invoked`. FLOWGATE_CONSOLE_SCREENSHOTS=<dir> keeps console-agent-chat.png there.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import type { Browser } from 'playwright-core';
import { defineTool, toolServer } from '../../src/tools/define-tool';
import type { ServerSource } from '../../src/tools';
import { launchChromium, waitForText } from '../support/chromium';
import { eventually } from '../support/eventually';
import { lastMessage, startFakeLlm, type FakeLlm } from '../support/fake-llm';
import type { TestFlowgate } from '../support/flowgate';
import { createOrg, startToolFlowgate } from '../tools/support';

const SHOTS = process.env.FLOWGATE_CONSOLE_SCREENSHOTS;

/** A CRM server of the default organization whose lookup waits until the test lets it answer. */
function gatedCrm(): { source: ServerSource; serverId: string; calls: string[]; release(): void; reset(): void } {
  const serverId = `crm${randomUUID().slice(0, 8)}`;
  const calls: string[] = [];
  let open!: () => void;
  let gate = new Promise<void>((resolve) => { open = resolve; });
  const server = toolServer({
    name: serverId, description: 'Acme CRM', embedded: false,
    tools: [defineTool({
      name: 'find_customer', description: 'Find a customer by company name.',
      input: z.object({ company: z.string() }).strict(),
      async handler(args) {
        calls.push(args.company);
        await gate;
        return { company: args.company, tier: 'gold', since: 2019 };
      },
    })],
  });
  return {
    source: { servers: async (orgId) => (orgId === 'org_default' ? [server] : []) }, serverId, calls,
    release: () => open(),
    reset: () => { gate = new Promise<void>((resolve) => { open = resolve; }); },
  };
}

interface Session {
  cookie: string;
  csrf: string;
}

describe('console agents in a browser', () => {
  let fg: TestFlowgate;
  let llm: FakeLlm;
  let browser: Browser;
  let crm: ReturnType<typeof gatedCrm>;
  let agentId: string;

  const signIn = async (token: string): Promise<Session> => {
    const response = await fg.request('/console/sign-in', {
      method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: fg.url }, body: new URLSearchParams({ token }),
    });
    assert.equal(response.status, 303);
    const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const agents = await fg.request('/console/agents', { headers: { Cookie: cookie } });
    assert.equal(agents.status, 200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(await agents.text())?.[1] ?? '';
    assert.ok(csrf.length > 20);
    return { cookie, csrf };
  };
  const post = (s: Session, pathname: string, form: Record<string, string>) => fg.request(pathname, {
    method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: s.cookie, Origin: fg.url }, body: new URLSearchParams(form),
  });

  before(async () => {
    browser = await launchChromium();
    llm = await startFakeLlm();
    crm = gatedCrm();
    fg = await startToolFlowgate({ FLOWGATE_LLM_BASE_URL: llm.baseUrl, FLOWGATE_LLM_MODEL: 'fake-model', FLOWGATE_LLM_API_KEY: 'sk-test-secret' }, crm.source);
    const created = await fg.admin<{ id: string }>('POST', '/api/v1/agents', {
      name: 'Account helper', description: 'Looks customers up in the CRM.', instructions: 'Look the customer up, then answer in one sentence.',
      servers: [{ name: crm.serverId, allTools: true }],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    agentId = created.body.id;
  });
  after(async () => {
    await browser?.close();
    await fg?.stop();
    await llm?.close();
  });
  beforeEach(() => {
    llm.script.length = 0;
    llm.requests.length = 0;
  });

  it('chats with an agent: the tool call shows while it runs, then its result, the answer and the usage; a follow-up continues the chat', async () => {
    const tool = `${crm.serverId}_find_customer`;
    llm.script.push(
      { toolCalls: [{ name: tool, arguments: { company: 'Acme' } }], usage: { prompt: 120, completion: 20 } },
      (request) => {
        assert.equal(lastMessage(request).role, 'tool');
        return { content: 'Acme is a gold customer since 2019.', usage: { prompt: 160, completion: 12 } };
      },
      (request) => {
        // the follow-up carries the first exchange
        const texts = request.messages.map((m) => `${m.role}: ${m.content ?? ''}`);
        assert.ok(texts.includes('user: How is Acme doing?'), texts.join('\n'));
        assert.ok(texts.includes('assistant: Acme is a gold customer since 2019.'), texts.join('\n'));
        return { content: 'Yes: gold is the highest tier.' };
      },
    );
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
    page.on('pageerror', (error) => problems.push(error.message));

    await page.goto(`${fg.url}/console`);
    await page.fill('#token', fg.adminToken);
    await Promise.all([page.waitForURL('**/console/runs'), page.click('button[type="submit"]')]);
    await page.click('nav a[href="/console/agents"]');
    const row = await page.textContent('table tbody');
    assert.match(row ?? '', /Account helper/);
    assert.match(row ?? '', /fake-model/);
    assert.match(row ?? '', new RegExp(`${crm.serverId} \\(all tools\\)`));
    await page.click(`a[href="/console/agents/${agentId}"]`);
    assert.equal(await page.textContent('h1'), 'Account helper');

    await page.fill('#message', 'How is Acme doing?');
    await Promise.all([page.waitForURL(/\/console\/agents\/[^?]+\?chat=chat_[^&]+&inv=inv_/), page.click('form.chat-form button[type="submit"]')]);
    // the tool waits for the test: the page shows the call while the invocation runs, and the answer
    // after it, through the script's poll: the marker proves the document was never reloaded
    await page.evaluate(() => { (globalThis as { notReloaded?: boolean }).notReloaded = true; });
    await waitForText(page, '#live-invocation .tool-call', new RegExp(`${tool}[\\s\\S]*running`));
    assert.match(await page.textContent('#invocation-status') ?? '', /RUNNING/);
    assert.match(await page.textContent('#live-invocation .tool-args') ?? '', /"company": "Acme"/);
    assert.deepEqual(crm.calls, ['Acme']);
    assert.equal(await page.$('#live-invocation .answer'), null, 'no answer before the tool answered');
    crm.release();
    await waitForText(page, '#live-invocation .answer', /Acme is a gold customer since 2019\./);
    assert.match(await page.textContent('#invocation-status') ?? '', /COMPLETE/);
    assert.equal(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded), true, 'redrawn in place, not reloaded');
    assert.match(await page.textContent('#live-invocation .tool-result') ?? '', /"tier": "gold"/);
    assert.match(await page.textContent('#live-invocation .usage') ?? '', /Used 312 tokens \(280 prompt, 32 completion\)/);
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, 'console-agent-chat.png'), fullPage: true });

    // a follow-up: the same chat (the form carries its ID), the first exchange now in the history
    const chatId = new URL(page.url()).searchParams.get('chat') ?? '';
    assert.equal(await page.getAttribute('input[name="chatId"]', 'value'), chatId);
    await page.fill('#message', 'Is that good?');
    const first = page.url();
    await Promise.all([page.waitForURL((u) => u.href !== first && /&inv=inv_/.test(u.href)), page.click('form.chat-form button[type="submit"]')]);
    assert.equal(new URL(page.url()).searchParams.get('chat'), chatId);
    await waitForText(page, '#live-invocation .answer', /Yes: gold is the highest tier\./);
    await page.reload();
    const exchanges = await page.$$eval('ol.conversation > li.exchange', (items) => items.map((i) => i.textContent ?? ''));
    assert.equal(exchanges.length, 2, exchanges.join('\n---\n'));
    assert.match(exchanges[0] ?? '', new RegExp(`How is Acme doing\\?[\\s\\S]*${tool}[\\s\\S]*"tier": "gold"[\\s\\S]*Acme is a gold customer`));
    assert.match(exchanges[1] ?? '', /Is that good\?[\s\S]*Yes: gold is the highest tier\./);
    assert.equal(await page.$('#live-invocation'), null, 'a finished invocation is shown once, in the history');
    assert.match(await page.textContent('ul.chats') ?? '', new RegExp(chatId));
    assert.deepEqual(problems, [], 'no script or CSP errors');
    await context.close();
  });

  it('works without script: the page shows the invocation and a reload shows its progress', async () => {
    crm.reset();
    const tool = `${crm.serverId}_find_customer`;
    llm.script.push({ toolCalls: [{ name: tool, arguments: { company: 'Globex' } }] }, { content: 'Globex is gold too.' });
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${fg.url}/console/sign-in`);
    await page.fill('#token', fg.adminToken);
    await Promise.all([page.waitForURL('**/console/runs'), page.click('button[type="submit"]')]);
    await page.goto(`${fg.url}/console/agents/${agentId}`);
    await page.fill('#message', 'And Globex?');
    await Promise.all([page.waitForURL(/&inv=inv_/), page.click('form.chat-form button[type="submit"]')]);
    await eventually(async () => {
      await page.reload();
      assert.match(await page.textContent('#live-invocation') ?? '', new RegExp(`${tool}[\\s\\S]*running`));
      return true;
    }, 'the running tool call shown after a reload', 45_000);
    assert.match(await page.textContent('#live-invocation a[href*="&inv="]') ?? '', /reload the page/);
    crm.release();
    await eventually(async () => {
      await page.reload();
      assert.match(await page.textContent('ol.conversation') ?? '', /And Globex\?[\s\S]*"tier": "gold"[\s\S]*Globex is gold too\./);
      return true;
    }, 'the answer shown after a reload', 45_000);
    await context.close();
  });

  it('answers another organization 404 for the agent, its live part and the chat; refuses a chat without the CSRF token (403); audits the chat as agent.invoked', async () => {
    const own = await signIn(fg.adminToken);
    const other = await signIn((await createOrg(fg)).adminToken);
    llm.script.push({ content: 'Hello.' });
    const sent = await post(own, `/console/agents/${agentId}/chat`, { csrf: own.csrf, message: 'Hi' });
    assert.equal(sent.status, 303);
    const location = sent.headers.get('location') ?? '';
    const invocationId = /inv=(inv_[A-Za-z0-9_-]+)/.exec(location)?.[1] ?? '';
    assert.ok(invocationId, location);

    assert.equal((await fg.request(`/console/agents/${agentId}`, { headers: { Cookie: other.cookie } })).status, 404);
    assert.equal((await fg.request(`/console/agents/${agentId}/invocations/${invocationId}/live`, { headers: { Cookie: other.cookie } })).status, 404);
    assert.equal((await post(other, `/console/agents/${agentId}/chat`, { csrf: other.csrf, message: 'Hi' })).status, 404);
    assert.doesNotMatch(await (await fg.request('/console/agents', { headers: { Cookie: other.cookie } })).text(), /Account helper/);
    // the live part of one's own invocation answers JSON
    const live = await fg.request(`/console/agents/${agentId}/invocations/${invocationId}/live`, { headers: { Cookie: own.cookie } });
    assert.equal(live.status, 200);
    assert.match(((await live.json()) as { status: string }).status, /^(RUNNING|COMPLETE)$/);

    const forged = await post(own, `/console/agents/${agentId}/chat`, { message: 'no token' });
    assert.equal(forged.status, 403);
    const wrong = await post(own, `/console/agents/${agentId}/chat`, { csrf: other.csrf, message: 'wrong token' });
    assert.equal(wrong.status, 403);
    const empty = await post(own, `/console/agents/${agentId}/chat`, { csrf: own.csrf, message: '   ' });
    assert.equal(empty.status, 400);
    assert.equal((await fg.request(`/console/agents/${agentId}/chat`, { method: 'POST', redirect: 'manual' })).status, 401);

    const audit = await fg.admin<{ records: { action: string; status: number; target: { id: string }; details: Record<string, unknown>; credential: { kind: string } }[] }>(
      'GET', '/api/v1/audit?action=agent.invoked');
    const mine = audit.body.records.filter((r) => r.details.via === 'console');
    assert.ok(mine.some((r) => r.status === 303 && r.target.id === agentId && r.details.invocationId === invocationId && r.credential.kind === 'console_session'), JSON.stringify(mine));
    assert.ok(mine.some((r) => r.status === 403), 'the refused POST is recorded');
  });
});
