/**
 * The MCP conformance suite (@modelcontextprotocol/conformance) against a tool-gateway server path.
 *
 * The suite needs Node 22 or later (every line flowgate supports: it runs on this process's node)
 * and cannot send an Authorization header, so it talks to a local header-injecting proxy on
 * loopback that adds `Authorization: Bearer <runtime token>` to every request and forwards it to
 * flowgate unchanged otherwise (Host and Origin as the suite sent them). Flowgate itself keeps
 * requiring the token; there is no test-only auth switch. The proxy stands where a load balancer
 * would, so flowgate's FLOWGATE_PUBLIC_URL is the proxy's address: dns-rebinding-protection's
 * "valid" request carries the proxy's origin, its rebinding one `Host`/`Origin: evil.example.com`.
 * The server under test is the `conformance` test profile: an organization-scoped server with the
 * suite's fixture tools (`test_simple_text`, `test_error_handling`), served by the real gateway.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestFlowgate } from '../support/flowgate';
import { assertScenarioPasses, conformanceServer, headerInjectingProxy, type HeaderInjectingProxy } from './conformance-support';
import { runtimeToken, startToolFlowgate } from './support';

const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'tools-call-simple-text', 'tools-call-error', 'dns-rebinding-protection'];
/** Checks a scenario must have run and passed. */
const EXERCISED: Readonly<Record<string, readonly string[]>> = {
  'dns-rebinding-protection': ['localhost-host-rebinding-rejected', 'localhost-host-valid-accepted'],
};
const CONFORMANCE_CLI = path.join(__dirname, '..', '..', '..', 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

describe('MCP conformance suite against /tools/conformance', function () {
  let fg: TestFlowgate;
  let proxy: HeaderInjectingProxy;
  let outDir: string;

  before(async function () {
    this.timeout(15 * 60_000);
    // the proxy is the gateway's public face: its origin is the one the suite's requests carry
    proxy = await headerInjectingProxy();
    fg = await startToolFlowgate({ FLOWGATE_PUBLIC_URL: proxy.url }, { servers: async () => [conformanceServer] });
    proxy.forwardTo(fg.url, (await runtimeToken(fg)).token);
    outDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-conformance-'));
  });
  after(async () => {
    await proxy?.close();
    await fg?.stop();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  for (const scenario of SCENARIOS) {
    it(`passes scenario ${scenario}`, async () => {
      const checks = await assertScenarioPasses(CONFORMANCE_CLI, `${proxy.url}/tools/conformance`, scenario, path.join(outDir, scenario));
      for (const id of EXERCISED[scenario] ?? []) assert.ok(checks.some((c) => c.id === id && c.status === 'SUCCESS'), `${scenario}: check ${id} did not run and pass`);
    });
  }
});
