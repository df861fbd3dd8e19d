/**
 * Signing in by URL in a real browser (docs/tool-gateway.md "Signing in by URL"): the official
 * SDK client is sent to the authorization page, which Chromium opens; the admin token is typed,
 * access allowed, and the browser follows the redirect to the client's loopback redirect URI
 * (caught here, as a client's local listener would) past the page's Content-Security-Policy.
 */
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { MemoryProvider, REDIRECT_URI } from '../support/oauth-client';

describe('MCP sign-in by URL in a browser', () => {
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

  it('signs in with the admin token, allows, returns the code to the client, which calls a tool', async () => {
    const provider = new MemoryProvider();
    const serverUrl = new URL(`${fg.url}/tools/mcp`);
    await assert.rejects(new Client({ name: 'browser-test', version: '1.0.0' }).connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider })), UnauthorizedError);
    assert.ok(provider.authorizationUrl);

    const page = await browser.newPage();
    let returned: URL | undefined;
    await page.route(`${new URL(REDIRECT_URI).origin}/**`, async (route) => {
      returned = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'signed in; you may close this tab' });
    });
    try {
      await page.goto(provider.authorizationUrl.href);
      await page.fill('#token', fg.adminToken);
      // the admin-token form's button (the page also offers an organization's provider sign-in above it)
      await page.click('form:has(#token) button[type=submit]');
      await page.waitForSelector('button[value=allow]');
      assert.match(await page.textContent('body') ?? '', /Allow access\?/);
      await page.click('button[value=allow]');
      const deadline = Date.now() + 15_000;
      while (!returned && Date.now() < deadline) await page.waitForTimeout(100);
    } finally {
      await page.close();
    }
    assert.ok(returned, 'the browser reached the client\'s redirect URI');
    const code = returned.searchParams.get('code');
    assert.ok(code);

    const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
    await transport.finishAuth(code);
    const client = new Client({ name: 'browser-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
    try {
      const listed = await client.callTool({ name: 'listServers', arguments: {} });
      assert.ok((listed.structuredContent as { servers: { name: string }[] }).servers.some((s) => s.name === 'mcp'));
    } finally {
      await client.close();
    }
  });
});
