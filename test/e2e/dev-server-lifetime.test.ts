/**
 * The embedded Temporal never outlives flowgate for long (issue 28, finding 10; issue 47): real
 * `npm start` processes (node dist/src/main.js) with the real Temporal server and Web UI server on
 * a data dir of their own. A SIGKILLed flowgate's Temporal processes are gone within seconds and
 * the next start on the same data dir and ports succeeds; a server left alive on purpose (its
 * guardian killed too) is stopped by the next start; a start beside a running flowgate's server
 * refuses instead of stopping it; and a server killed under a running flowgate is started again.
 * Processes are found through /proc (Linux; elsewhere a missing peer, which fails under CI=true).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freeTemporalFrontendPort, temporalBinaries } from '../setup/root-hooks';
import { freePort, portIsFree } from '../../temporal/ports';
import { startMain, type Child } from '../support/processes';
import { missingPeer } from '../support/ci';

interface Proc {
  pid: number;
  ppid: number;
  argv: string[];
}

/**
 * Every live embedded Temporal process on `dbFile` (the server, with `--config-file <dbFile>.server.yaml`,
 * and the Web UI server, with `--root <dbFile>.ui`), read from /proc; their guardians, node with the
 * same arguments after their own, left out.
 */
function temporalProcessesOn(dbFile: string, which: 'server' | 'ui' | 'both' = 'both'): Proc[] {
  const found: Proc[] = [];
  const marks = [...(which === 'ui' ? [] : [['--config-file', `${dbFile}.server.yaml`]]), ...(which === 'server' ? [] : [['--root', `${dbFile}.ui`]])];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const ours = marks.some(([flag, value]) => {
        const at = argv.indexOf(flag!);
        return at >= 0 && argv[at + 1] === value;
      });
      if (!ours || argv.some((arg) => arg.endsWith('guardian.js'))) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z') continue;
      found.push({ pid: Number(entry), ppid: Number(ppid), argv });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

const alive = (pid: number): boolean => existsSync(`/proc/${pid}/stat`) && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));

async function until(what: string, done: () => boolean | Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await done())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Date.now() - started;
}

describe('the embedded Temporal does not outlive flowgate', function () {
  this.timeout(300_000);
  let parent: string;
  let dataDir: string;
  let dbFile: string;
  let env: Record<string, string>;
  let devPort: number;
  const started: Child[] = [];

  before(function () {
    if (!existsSync('/proc/self/stat')) missingPeer(this, '/proc', 'these tests find the embedded Temporal processes through /proc (Linux)');
  });
  beforeEach(async () => {
    parent = mkdtempSync(path.join(os.tmpdir(), 'flowgate-lifetime-'));
    dataDir = path.join(parent, 'data');
    dbFile = path.join(dataDir, 'temporal.sqlite');
    devPort = await freeTemporalFrontendPort();
    const { binaries, uiServer } = temporalBinaries();
    env = {
      FLOWGATE_DATA_DIR: dataDir, PORT: String(await freePort()), TEMPORAL_DEV_PORT: String(devPort), TEMPORAL_UI_PORT: String(await freePort()),
      TEMPORAL_SERVER_PATH: binaries.server, TEMPORAL_UI_SERVER_PATH: uiServer,
    };
  });
  afterEach(async () => {
    for (const child of started.splice(0)) child.process.kill('SIGKILL');
    // whatever a failed test left on this data dir (only processes on this test's own database)
    for (const server of temporalProcessesOn(dbFile)) process.kill(server.pid, 'SIGKILL');
    await until('the test\'s Temporal processes are gone', () => temporalProcessesOn(dbFile).length === 0, 15_000).catch(() => undefined);
    rmSync(parent, { recursive: true, force: true });
  });

  /** `npm start` on this test's data dir and ports, up to its banner. */
  async function start(): Promise<{ child: Child; url: string; server: Proc }> {
    const child = startMain(env);
    started.push(child);
    await child.waitForLine(/admin token .*\n/); // the banner's last line
    const url = /gateway listening on (http:\/\/\S+)/.exec(child.output())?.[1];
    assert.ok(url, child.output());
    const servers = temporalProcessesOn(dbFile, 'server');
    assert.equal(servers.length, 1, `one Temporal server on ${dbFile}`);
    assert.equal(temporalProcessesOn(dbFile, 'ui').length, 1, `one Web UI server on ${dbFile}`);
    return { child, url, server: servers[0]! };
  }

  async function healthy(url: string): Promise<void> {
    const health = await fetch(`${url}/healthz`);
    assert.deepEqual(await health.json(), { status: 'ok', temporal: 'ok', registry: 'ok' });
  }

  async function stopCleanly(child: Child): Promise<void> {
    child.process.kill('SIGTERM');
    assert.deepEqual(await child.exited, { code: 0, signal: null }, child.output());
    assert.deepEqual(temporalProcessesOn(dbFile), []);
    assert.equal(await portIsFree(devPort), true);
  }

  it('after a SIGKILL of flowgate its Temporal server and Web UI server are gone within seconds, and npm start starts again on the same data dir and ports', async () => {
    const first = await start();
    await healthy(first.url);
    first.child.process.kill('SIGKILL');
    assert.deepEqual(await first.child.exited, { code: null, signal: 'SIGKILL' });
    const tookMs = await until('the Temporal processes are gone and the port free', async () => temporalProcessesOn(dbFile).length === 0 && await portIsFree(devPort), 15_000);
    console.log(`      (the Temporal server and Web UI server were gone ${tookMs} ms after flowgate was killed)`);

    const second = await start();
    await healthy(second.url);
    assert.notEqual(second.server.pid, first.server.pid);
    await stopCleanly(second.child);
  });

  it('a start stops the Temporal server an earlier start left alive on its data dir (guardian and flowgate both killed)', async () => {
    const first = await start();
    const orphan = first.server;
    // the server's parent is its guardian: kill it first, so nothing is left to stop the server
    process.kill(orphan.ppid, 'SIGKILL');
    first.child.process.kill('SIGKILL');
    await first.child.exited;
    await until('the guardian is gone', () => !alive(orphan.ppid), 15_000);
    assert.equal(alive(orphan.pid), true, 'the orphan is alive: the next start has something to stop');
    assert.equal(await portIsFree(devPort), false);

    const second = await start();
    assert.equal(alive(orphan.pid), false, 'the orphan is stopped');
    assert.notEqual(second.server.pid, orphan.pid);
    assert.match(second.child.output(), new RegExp(`stopping the embedded Temporal process \\(pid ${orphan.pid}\\) an earlier start left running`));
    await healthy(second.url);
    await stopCleanly(second.child);
  });

  it('a second start on the data dir of a running flowgate refuses, and leaves that flowgate\'s Temporal server alone', async () => {
    const first = await start();
    const second = startMain(env);
    started.push(second);
    assert.deepEqual(await second.exited, { code: 1, signal: null });
    assert.match(second.output(), new RegExp(`process of ${`${dbFile}.server.yaml`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(pid ${first.server.pid}\\) belongs to a flowgate that is running`));
    assert.deepEqual(temporalProcessesOn(dbFile, 'server').map((p) => p.pid), [first.server.pid]);
    await healthy(first.url);
    await stopCleanly(first.child);
  });
});
