/**
 * What both runs of the official MCP conformance suite share (conformance.test.ts: 0.1.16, the 2025
 * revisions; conformance-next.test.ts: 0.2.0-alpha.12, 2026-07-28): the fixture server, the
 * header-injecting proxy (the suite cannot send an Authorization header), running one scenario
 * and reading its checks.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import { ToolFailure, type ToolEntry, type ToolServer } from '../../src/tools';
import { defineTool, toolServer } from '../../src/tools/define-tool';
import { listenOnLoopback } from '../support/loopback';

const run = promisify(execFile);

const fixture: ToolServer = toolServer({
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
    // SEP-2243 (2026-07-28): an argument mirrored into the Mcp-Param-Region header, which the gateway checks against the body
    defineTool({
      name: 'test_custom_header', description: 'Echoes the region it was routed to.',
      input: z.object({ region: z.string().meta({ 'x-mcp-header': 'Region' }) }),
      async handler({ region }) {
        return { region };
      },
    }),
  ],
});

let listed: readonly ToolEntry[] | undefined;
/**
 * The suite's fixture server. Like a remote server it keeps the list it last gave (keptTools): the
 * gateway checks a 2026 call's Mcp-Param headers against the schemas of such servers only.
 */
export const conformanceServer: ToolServer = {
  ...fixture,
  keptTools: () => listed,
  listTools: async (context) => (listed = await fixture.listTools(context)),
};

export interface HeaderInjectingProxy {
  url: string;
  /** where requests go from now on, and the token they get */
  forwardTo(target: string, token: string): void;
  close(): Promise<void>;
}

/**
 * Forwards every request to the target given to forwardTo() (502 before), adding the bearer token
 * and passing every other header on as it came, Host and Origin included: it stands in front of
 * flowgate as a load balancer would, so the test's flowgate has the proxy's address as its
 * FLOWGATE_PUBLIC_URL (started first: its address is known before flowgate's).
 */
export async function headerInjectingProxy(): Promise<HeaderInjectingProxy> {
  let upstream: { url: URL; token: string } | undefined;
  const server = http.createServer((req, res) => {
    if (!upstream) {
      res.writeHead(502).end();
      return;
    }
    const { url, token } = upstream;
    const forwarded = http.request({
      host: url.hostname, port: url.port, method: req.method, path: req.url,
      headers: { ...req.headers, authorization: `Bearer ${token}` },
    }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.writeHead(502).end());
    req.pipe(forwarded);
  });
  const listening = await listenOnLoopback(server);
  return { url: listening.url, close: () => listening.close(), forwardTo: (target, token) => (upstream = { url: new URL(target), token }) };
}

export interface Check {
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

/** A check of a scenario that is not applicable to flowgate: why, and the failure message that says so (only that failure is excused). */
export interface Excused {
  because: string;
  message: RegExp;
}

/**
 * Runs one scenario of the suite at `cli` against `url` (extra: more CLI options) and asserts that
 * every check it recorded passed (INFO and SKIPPED count as passing), or failed exactly as an
 * `excused` entry of its id says, and that it recorded some.
 */
export async function assertScenarioPasses(cli: string, url: string, scenario: string, dir: string, extra: string[] = [], excused: Readonly<Record<string, Excused>> = {}): Promise<Check[]> {
  let output: string;
  let failed = false;
  try {
    const result = await run(process.execPath, [cli, 'server', '--url', url, '--scenario', scenario, ...extra, '-o', dir], { timeout: 120_000 });
    output = result.stdout + result.stderr;
  } catch (error) {
    failed = true;
    output = String((error as { stdout?: string }).stdout ?? '') + String((error as { stderr?: string }).stderr ?? error);
  }
  const checks = readChecks(dir);
  assert.ok(checks.length > 0, `no checks were recorded:\n${output}`);
  const isExcused = (c: Check): boolean => excused[c.id]?.message.test(c.errorMessage ?? '') === true;
  const bad = checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO' && c.status !== 'SKIPPED' && !isExcused(c));
  assert.deepEqual(bad, [], output);
  // the CLI exits non-zero when any check failed: only excused ones may have
  assert.equal(failed, checks.some((c) => c.status === 'FAILURE'), output);
  return checks;
}
