/**
 * What a start does with the pid file an embedded Temporal server left beside its database
 * (temporal/orphan.ts): it stops only a process that /proc shows to run with that very database's
 * configuration and that no live flowgate owns. The processes here are stand-ins that carry the
 * server's command line (`node -e … --config-file <file> start`): the safety rules are about which
 * process is touched, and test/e2e/dev-server-lifetime.test.ts does the same with real Temporal servers.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isEmbeddedProcessOf, processInfo, reclaimOrphan } from '../../temporal/orphan';
import { missingPeer } from '../support/ci';

describe('reclaimOrphan (an embedded Temporal process an earlier start left on a database)', () => {
  let dir: string;
  let dbFile: string;
  let configFile: string;
  let pidFile: string;
  const children: ChildProcess[] = [];

  before(async function () {
    if (!(await processInfo(process.pid))) missingPeer(this, '/proc', 'orphans are found through /proc (Linux)');
  });
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-orphan-'));
    dbFile = path.join(dir, 'temporal.sqlite');
    pidFile = `${dbFile}.pid`;
    configFile = `${dbFile}.server.yaml`;
  });
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  /** A live process with `args` on its command line; resolves once /proc shows them. */
  async function standIn(...args: string[]): Promise<ChildProcess & { pid: number }> {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => undefined, 1000)', '--', ...args], { stdio: 'ignore' });
    children.push(child);
    const pid = child.pid;
    assert.ok(pid);
    const deadline = Date.now() + 10_000;
    while (!(await processInfo(pid))?.argv.includes('-e')) {
      if (Date.now() > deadline) throw new Error('the stand-in did not start');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return child as ChildProcess & { pid: number };
  }
  const alive = async (pid: number): Promise<boolean> => (await processInfo(pid)) !== undefined;
  const record = (server: number, guardian: number, owner: number): void => writeFileSync(pidFile, JSON.stringify({ server, guardian, owner }));
  /** a pid no process has now (one that just exited) */
  async function deadPid(): Promise<number> {
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((resolve) => child.once('exit', resolve));
    return child.pid!;
  }

  it('recognizes the server of the file by its --config-file, the Web UI server by its --root, and nothing else', () => {
    const argv = ['/x/server', '--config-file', configFile, '--allow-no-auth', 'start'];
    assert.equal(isEmbeddedProcessOf(argv, configFile), true);
    assert.equal(isEmbeddedProcessOf(argv, `${configFile}.other`), false);
    assert.equal(isEmbeddedProcessOf(['/x/ui-server', '--root', `${dbFile}.ui`, 'start'], `${dbFile}.ui`), true);
    assert.equal(isEmbeddedProcessOf(['/bin/sleep', '--db-filename', configFile], configFile), false);
    assert.equal(isEmbeddedProcessOf(['/x/server', 'start', '--config-file'], configFile), false);
  });

  it('stops an orphaned server of this file (its guardian and flowgate gone) and removes the pid file', async () => {
    const orphan = await standIn('--config-file', configFile, 'start');
    record(orphan.pid, await deadPid(), await deadPid());
    const notices: string[] = [];
    await reclaimOrphan({ pidFile, configFile, graceMs: 5000, notice: (m) => notices.push(m) });
    assert.equal(await alive(orphan.pid), false);
    assert.equal(existsSync(pidFile), false);
    assert.match(notices.join('\n'), new RegExp(`stopping the embedded Temporal process \\(pid ${orphan.pid}\\)`));
  });

  it('never touches a live process that is not the server of this file, whatever the pid file says', async () => {
    const unrelated = await standIn('something', 'else');
    const otherDb = await standIn('--config-file', path.join(dir, 'another.sqlite.server.yaml'), 'start');
    for (const pid of [unrelated.pid, otherDb.pid]) {
      record(pid, await deadPid(), await deadPid());
      await reclaimOrphan({ pidFile, configFile, graceMs: 5000 });
      assert.equal(await alive(pid), true, `pid ${pid} is left alone`);
      assert.equal(existsSync(pidFile), false, 'a stale pid file is removed');
    }
  });

  it('refuses to start beside the server of a flowgate that is running, and leaves it alone', async () => {
    // this test process stands in for the guardian (the server's parent), its parent for flowgate
    const owned = await standIn('--config-file', configFile, 'start');
    record(owned.pid, process.pid, process.ppid);
    await assert.rejects(reclaimOrphan({ pidFile, configFile, graceMs: 5000 }), /belongs to a flowgate that is running/);
    assert.equal(await alive(owned.pid), true);
    assert.equal(existsSync(pidFile), true);
  });

  it('takes a missing, empty or garbled pid file as no orphan', async () => {
    await reclaimOrphan({ pidFile, configFile, graceMs: 5000 });
    for (const text of ['', 'not json', '{"server":"1"}', JSON.stringify({ server: -1, guardian: 1, owner: 1 })]) {
      writeFileSync(pidFile, text);
      await reclaimOrphan({ pidFile, configFile, graceMs: 5000 });
      assert.equal(existsSync(pidFile), false, text);
    }
  });
});
