/**
 * The dev server's guardian (temporal/guardian.ts) on its own, with stand-in servers (node
 * processes) so that a server deaf to SIGTERM can be had: the end of its stdin stops the server,
 * SIGKILL follows the grace period, and the pid file lives exactly as long as the server.
 * test/e2e/dev-server-lifetime.test.ts does it with real Temporal servers under `npm start`.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processInfo } from '../../temporal/orphan';
import { missingPeer } from '../support/ci';

const GUARDIAN = path.join(__dirname, '..', '..', 'temporal', 'guardian.js');

describe('dev server guardian', () => {
  let dir: string;
  const children: ChildProcess[] = [];

  before(async function () {
    if (!(await processInfo(process.pid))) missingPeer(this, '/proc', 'the server\'s end is observed through /proc (Linux)');
  });
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-guardian-'));
  });
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A guardian over a stand-in server running `code`; resolves with the server's pid once the
   * stand-in has run `code` (its signal handlers are in place) and says so in a file.
   */
  async function guard(code: string, graceMs: number, pidFile = '-'): Promise<{ guardian: ChildProcess; server: number; exited: Promise<number | null> }> {
    const ready = path.join(dir, `ready-${children.length}`);
    const standIn = `${code}; require('node:fs').writeFileSync(${JSON.stringify(ready)}, '')`;
    const guardian = spawn(process.execPath, [GUARDIAN, pidFile, String(graceMs), process.execPath, '-e', standIn], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(guardian);
    const exited = new Promise<number | null>((resolve) => guardian.once('exit', (status) => resolve(status)));
    const server = await new Promise<number>((resolve, reject) => {
      let out = '';
      guardian.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        const line = /^pid (\d+)\n/.exec(out);
        if (line) resolve(Number(line[1]));
      });
      guardian.once('exit', () => reject(new Error(`the guardian exited first: ${out}`)));
    });
    const deadline = Date.now() + 10_000;
    while (!existsSync(ready)) {
      if (Date.now() > deadline) throw new Error('the stand-in server did not start');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { guardian, server, exited };
  }

  async function gone(pid: number, timeoutMs: number): Promise<number> {
    const started = Date.now();
    while (await processInfo(pid)) {
      if (Date.now() - started > timeoutMs) throw new Error(`pid ${pid} still runs after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return Date.now() - started;
  }

  it('stops the server when its stdin ends (the parent is gone), and exits with it', async () => {
    const { guardian, server, exited } = await guard('setInterval(() => undefined, 1000)', 5000);
    guardian.stdin!.end();
    await gone(server, 10_000);
    assert.equal(await exited, 128 + os.constants.signals.SIGTERM);
  });

  it('kills a server that ignores SIGTERM once the grace period has passed', async () => {
    const { guardian, server, exited } = await guard('process.on("SIGTERM", () => undefined); setInterval(() => undefined, 1000)', 500);
    guardian.kill('SIGTERM');
    const tookMs = await gone(server, 10_000);
    assert.ok(tookMs >= 400, `killed only after the grace period, not after ${tookMs} ms`);
    assert.equal(await exited, 128 + os.constants.signals.SIGKILL);
  });

  it('names the server, itself and its parent in the pid file while the server runs, and removes the file when it ends', async () => {
    const pidFile = path.join(dir, 'temporal.sqlite.pid');
    const { guardian, server, exited } = await guard('process.on("SIGTERM", () => process.exit(3)); setInterval(() => undefined, 1000)', 5000, pidFile);
    assert.deepEqual(JSON.parse(readFileSync(pidFile, 'utf8')), { server, guardian: guardian.pid, owner: process.pid });
    process.kill(server, 'SIGTERM'); // the server ends on its own account
    assert.equal(await exited, 3, 'the server\'s own exit code');
    assert.equal(existsSync(pidFile), false);
  });
});
