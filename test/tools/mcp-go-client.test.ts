/**
 * A client of another language: the official Go MCP SDK (github.com/modelcontextprotocol/go-sdk
 * v1.8.0, pinned in test/tools/go-mcp-client/go.mod and go.sum) against the tool gateway, pinned to
 * 2026-07-28 (server/discover, per-request _meta, the standard headers) and to 2025-11-25
 * (initialize), on /tools/mcp and a workflow tool. The client (go-mcp-client/main.go) is built once
 * per source into the cache outside the clone ($XDG_CACHE_HOME/flowgate, else ~/.cache/flowgate, as
 * scripts/with-node.sh does); Go is a peer: missing under CI=true, the test fails.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { missingPeer } from '../support/ci';
import { publishWorkflow, type TestFlowgate } from '../support/flowgate';
import { runtimeToken, startToolFlowgate } from './support';

const run = promisify(execFile);
const SOURCE = path.join(__dirname, '..', '..', '..', 'test', 'tools', 'go-mcp-client');

/** The client binary for this source, built if the cache has none. */
async function goClient(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of ['main.go', 'go.mod', 'go.sum']) hash.update(readFileSync(path.join(SOURCE, file)));
  const cache = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'flowgate');
  const binary = path.join(cache, `go-mcp-client-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(binary)) return binary;
  mkdirSync(cache, { recursive: true });
  const temporary = `${binary}.${process.pid}.tmp`;
  await run('go', ['build', '-mod=readonly', '-o', temporary, '.'], { cwd: SOURCE, timeout: 600_000 });
  await run('mv', [temporary, binary]);
  return binary;
}

interface Seen {
  protocolVersion: string;
  tools: string[];
  isError: boolean;
  structured: Record<string, unknown>;
}

describe('the official Go MCP SDK client against the tool gateway, in both eras', function () {
  this.timeout(600_000);
  let fg: TestFlowgate;
  let token: string;
  let binary: string;

  before(async function () {
    try {
      await run('go', ['version']);
    } catch {
      missingPeer(this, 'Go toolchain', 'install Go (go version) to build the Go MCP client');
    }
    binary = await goClient();
    fg = await startToolFlowgate();
    ({ token } = await runtimeToken(fg));
  });
  after(async () => {
    await fg?.stop();
  });

  async function client(server: string, version: string, tool: string, args: Record<string, unknown>): Promise<Seen> {
    const { stdout } = await run(binary, [`${fg.url}/tools/${server}`, token, version, tool, JSON.stringify(args)], { timeout: 120_000 });
    return JSON.parse(stdout) as Seen;
  }

  for (const version of ['2026-07-28', '2025-11-25']) {
    it(`lists and calls on /tools/mcp and a workflow tool at ${version}`, async () => {
      const mcp = await client('mcp', version, 'listServers', {});
      assert.equal(mcp.protocolVersion, version);
      assert.deepEqual([...mcp.tools].sort(), ['capabilities_discover', 'capability_details', 'listServers']);
      assert.equal(mcp.isError, false);
      assert.ok(Array.isArray((mcp.structured as { servers?: unknown[] }).servers));
      const name = `greet_${randomUUID().slice(0, 8)}`;
      await publishWorkflow(fg, { name: `greet-${randomUUID()}`, steps: [{ name: 'Say', type: 'template', template: 'hello {{inputs.who}}' }] }, { tool: { name, description: 'greets' } });
      const greeted = await client('workflows', version, name, { who: 'go' });
      assert.equal(greeted.isError, false, JSON.stringify(greeted));
      assert.equal(greeted.structured.output, 'hello go');
    });
  }
});
