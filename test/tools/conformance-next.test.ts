/**
 * The official MCP conformance suite at the revision that tests 2026-07-28: @modelcontextprotocol/
 * conformance 0.2.0-alpha.12, installed under the alias `mcp-conformance-next` (pinned exactly in
 * package.json) beside 0.1.16 (conformance.test.ts, the 2025 revisions). Every scenario runs with
 * `--spec-version 2026-07-28` against the same fixture server (`/tools/conformance`) through the
 * same header-injecting proxy (conformance-support.ts; flowgate's public URL is the proxy's, as
 * behind a load balancer, which dns-rebinding-protection's valid request relies on); the fixture's `test_custom_header` declares
 * an `x-mcp-header` for the custom-header scenario (SEP-2243).
 * Not run, as not applicable to flowgate (NOT_APPLICABLE below says why for each): the scenarios of
 * features the tool gateway has no use for (resources, prompts, completion, subscriptions), of
 * fixtures flowgate does not host, and of the extension scenarios whose fixture tools (`greet`,
 * `slow_compute`, …) are the suite's own; the Tasks extension is tested on flowgate's own task
 * tools instead (mcp-eras.test.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestFlowgate } from '../support/flowgate';
import { assertScenarioPasses, conformanceServer, headerInjectingProxy, type Excused, type HeaderInjectingProxy } from './conformance-support';
import { runtimeToken, startToolFlowgate } from './support';

const PINNED_VERSION = '0.2.0-alpha.12';
const PACKAGE_DIR = path.join(__dirname, '..', '..', '..', 'node_modules', 'mcp-conformance-next');
const CONFORMANCE_CLI = path.join(PACKAGE_DIR, 'dist', 'index.js');

/** The 2026-07-28 server scenarios flowgate passes. */
const SCENARIOS = ['server-stateless', 'tools-list', 'tools-call-simple-text', 'tools-call-error', 'caching', 'http-header-validation',
  'http-custom-header-server-validation', 'dns-rebinding-protection'];

/** Checks a scenario must have run and passed, where one that finds no fixture to test would pass as "not testable". */
const EXERCISED: Readonly<Record<string, readonly string[]>> = {
  'dns-rebinding-protection': ['localhost-host-rebinding-rejected', 'localhost-host-valid-accepted'],
  'http-custom-header-server-validation': [
    'sep-2243-server-decode-base64', 'sep-2243-server-validate-param-match', 'sep-2243-server-reject-invalid-param-chars', 'sep-2243-server-reject-param-mismatch',
  ],
};

/** The suite's other server scenarios for 2026-07-28, and why flowgate does not run them. */
export const NOT_APPLICABLE: Readonly<Record<string, string>> = {
  'completion-complete': 'completion is for prompts and resource templates, which the tool gateway does not serve',
  'resources-list': 'the tool gateway serves tools only, no resources',
  'resources-read-text': 'no resources',
  'resources-read-binary': 'no resources',
  'resources-templates-read': 'no resources',
  'sep-2164-resource-not-found': 'no resources',
  'prompts-list': 'the tool gateway serves tools only, no prompts',
  'prompts-get-simple': 'no prompts',
  'prompts-get-with-args': 'no prompts',
  'prompts-get-embedded-resource': 'no prompts',
  'prompts-get-with-image': 'no prompts',
  'tools-call-image': 'needs the suite\'s image fixture tool; flowgate\'s tools answer structured JSON (content blocks only from remote servers, passed through)',
  'tools-call-audio': 'needs the suite\'s audio fixture tool (as above)',
  'tools-call-embedded-resource': 'needs the suite\'s embedded-resource fixture tool (as above)',
  'tools-call-mixed-content': 'needs the suite\'s mixed-content fixture tool (as above)',
  'tools-call-with-progress': 'flowgate sends no progress notifications: long work runs as a task instead',
  'server-sse-multiple-streams': 'flowgate answers each POST with one JSON reply; it opens no GET streams',
  'json-schema-2020-12': 'needs the suite\'s fixture tool with a 2020-12 schema',
  'input-required-result-*': 'the suite\'s fixture tools that ask for elicitation, sampling or roots; flowgate asks for input of its own only on approvals, '
    + 'through the Tasks extension (tasks/update), and passes a remote server\'s input_required on as it is (custom-remote-2026.test.ts)',
  'tasks-*': 'the Tasks extension scenarios need the suite\'s own fixture tools (greet, slow_compute, failing_job, confirm_delete, multi_input); flowgate\'s task tools are tested in mcp-eras.test.ts',
  'sep-2640-skills-*': 'the skills extension: flowgate serves no skills',
};

const notListed = (tool: string): RegExp => new RegExp(`^Not testable: server does not list the diagnostic tool '${tool}'`);
const notServed = (method: string): RegExp => new RegExp(`^${method} returned JSON-RPC error -32601`);

/** Checks within the scenarios above that test what flowgate does not serve; each is excused only for exactly that failure. */
export const EXCUSED: Readonly<Record<string, Readonly<Record<string, Excused>>>> = {
  'server-stateless': {
    'sep-2575-server-rejects-undeclared-capability': {
      because: 'needs the suite\'s fixture tool test_missing_capability; no flowgate tool needs a client capability (tasks methods do, and answer -32021: mcp-eras.test.ts)',
      message: notListed('test_missing_capability'),
    },
    'sep-2575-missing-capability-http-400': { because: 'as above (flowgate answers -32021 with HTTP 400: mcp-eras.test.ts)', message: notListed('test_missing_capability') },
    'sep-2575-http-server-no-independent-requests-on-stream': {
      because: 'needs the suite\'s fixture tool test_streaming_elicitation; flowgate answers 2026 requests with one JSON reply and sends no requests of its own',
      message: notListed('test_streaming_elicitation'),
    },
    'sep-2575-server-no-log-without-loglevel': { because: 'needs the suite\'s fixture tool test_logging_tool; flowgate sends no log notifications', message: notListed('test_logging_tool') },
  },
  caching: {
    'sep-2549-prompts-list-caching-hints': { because: 'no prompts: prompts/list is method not found', message: notServed('prompts/list') },
    'sep-2549-resources-list-caching-hints': { because: 'no resources: resources/list is method not found', message: notServed('resources/list') },
    'sep-2549-resources-templates-list-caching-hints': { because: 'no resources: resources/templates/list is method not found', message: notServed('resources/templates/list') },
  },
};

describe('MCP conformance suite 0.2.0-alpha.12 (protocol 2026-07-28) against /tools/conformance', function () {
  let fg: TestFlowgate;
  let proxy: HeaderInjectingProxy;
  let outDir: string;

  before(async function () {
    this.timeout(15 * 60_000);
    // the proxy is the gateway's public face: its origin is the one the suite's requests carry
    proxy = await headerInjectingProxy();
    fg = await startToolFlowgate({ FLOWGATE_PUBLIC_URL: proxy.url }, { servers: async () => [conformanceServer] });
    proxy.forwardTo(fg.url, (await runtimeToken(fg)).token);
    outDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-conformance-next-'));
  });
  after(async () => {
    await proxy?.close();
    await fg?.stop();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it(`is the pinned suite, ${PINNED_VERSION}`, () => {
    assert.equal((JSON.parse(readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version, PINNED_VERSION);
  });

  for (const scenario of SCENARIOS) {
    it(`passes scenario ${scenario} at 2026-07-28`, async () => {
      const checks = await assertScenarioPasses(CONFORMANCE_CLI, `${proxy.url}/tools/conformance`, scenario, path.join(outDir, scenario), ['--spec-version', '2026-07-28'], EXCUSED[scenario]);
      for (const id of EXERCISED[scenario] ?? []) assert.ok(checks.some((c) => c.id === id && c.status === 'SUCCESS'), `${scenario}: check ${id} did not run and pass`);
    });
  }
});
