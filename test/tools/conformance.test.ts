/**
 * The MCP conformance suite (@modelcontextprotocol/conformance) against a tool-gateway server path.
 *
 * The suite needs Node 22 or later (every line flowgate supports: it runs on this process's node)
 * and cannot send an Authorization header, so it talks to a local header-injecting proxy on
 * loopback that adds `Authorization: Bearer <runtime token>` to every request and forwards it to
 * flowgate unchanged otherwise. Flowgate itself keeps requiring the token; there is no test-only
 * auth switch.
 * The server under test is the `conformance` test profile: an organization-scoped server with the
 * suite's fixture tools (`test_simple_text`, `test_error_handling`), served by the real gateway.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import { ToolFailure, type ToolServer } from '../../src/tools';
import { defineTool, toolServer } from '../../src/tools/define-tool';
import type { TestFlowgate } from '../support/flowgate';
import { listenOnLoopback } from '../support/loopback';
import { runtimeToken, startToolFlowgate } from './support';

const run = promisify(execFile);
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'tools-call-simple-text', 'tools-call-error'];
const CONFORMANCE_CLI = path.join(__dirname, '..', '..', '..', 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

export const conformanceServer: ToolServer = toolServer({
  name: 'conformance',
  description: 'Fixture tools of the MCP conformance suite.',
  embedded: false,
  tools: [
    defineTool({
      name: 'test_simple_text', description: 'Returns a simple text response.', input: z.object({}),
      async handler() {
        return { text: 'This is a simple text response for testing.' };
      },
    }),
    defineTool({
      name: 'test_error_handling', description: 'Always fails.', input: z.object({}),
      async handler() {
        throw new ToolFailure('This tool intentionally returns an error for testing');
      },
    }),
  ],
});

/** Forwards every request to `target`, adding the bearer token. */
async function headerInjectingProxy(target: string, token: string): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const forwarded = http.request({
      host: upstream.hostname, port: upstream.port, method: req.method, path: req.url,
      headers: { ...req.headers, host: upstream.host, authorization: `Bearer ${token}` },
    }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.writeHead(502).end());
    req.pipe(forwarded);
  });
  return listenOnLoopback(server);
}

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

function readChecks(dir: string): Check[] {
  const checks: Check[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const full = path.join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name === 'checks.json') checks.push(...(JSON.parse(readFileSync(full, 'utf8')) as Check[]));
    }
  };
  walk(dir);
  return checks;
}

describe('MCP conformance suite against /tools/conformance', function () {
  let fg: TestFlowgate;
  let proxy: Awaited<ReturnType<typeof headerInjectingProxy>>;
  const node = process.execPath;
  let outDir: string;

  before(async function () {
    this.timeout(15 * 60_000);
    fg = await startToolFlowgate({}, { servers: async () => [conformanceServer] });
    proxy = await headerInjectingProxy(fg.url, (await runtimeToken(fg)).token);
    outDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-conformance-'));
  });
  after(async () => {
    await proxy?.close();
    await fg?.stop();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  for (const scenario of SCENARIOS) {
    it(`passes scenario ${scenario}`, async () => {
      const dir = path.join(outDir, scenario);
      let output: string;
      let failed = false;
      try {
        const result = await run(node, [CONFORMANCE_CLI, 'server', '--url', `${proxy.url}/tools/conformance`, '--scenario', scenario, '-o', dir], { timeout: 120_000 });
        output = result.stdout + result.stderr;
      } catch (error) {
        failed = true;
        output = String((error as { stdout?: string }).stdout ?? '') + String((error as { stderr?: string }).stderr ?? error);
      }
      const checks = readChecks(dir);
      assert.ok(checks.length > 0, `no checks were recorded:\n${output}`);
      const bad = checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO' && c.status !== 'SKIPPED');
      assert.deepEqual(bad, [], output);
      assert.equal(failed, false, output);
    });
  }
});
