/**
 * The embedded Temporal dev server's guardian: flowgate (temporal/dev-server.ts) starts it with a
 * pipe on its stdin, and it starts the server. When that pipe reaches its end, flowgate is gone,
 * however it ended (a SIGKILL or a crash included): the guardian stops the server (SIGTERM, then
 * SIGKILL after the grace period) and exits with it. SIGTERM, SIGINT and SIGHUP stop it the same way.
 *
 * While the server runs, its pid file names the server, the guardian and flowgate, so that a later
 * start on the same database can tell an orphan (its guardian killed too) from a live instance's
 * server. The server's pid is also the first line on stdout (`pid <n>`).
 *
 * Usage: node guardian.js <pid file, or - for none> <grace ms> <temporal CLI> <its arguments...>
 */
import { spawn } from 'node:child_process';
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';

export interface PidFile {
  server: number;
  guardian: number;
  /** the flowgate process that started the guardian */
  owner: number;
}

function main(): void {
  const [pidFile = '-', grace = '', cli, ...args] = process.argv.slice(2);
  const graceMs = Number(grace);
  if (!cli || !Number.isInteger(graceMs) || graceMs < 0) {
    process.stderr.write('usage: guardian.js <pid file|-> <grace ms> <temporal CLI> <args...>\n');
    process.exit(2);
  }
  // flowgate gone means its ends of these pipes are closed too: a write must fail quietly, never
  // take the guardian down before the server is stopped.
  process.stdout.on('error', () => undefined);
  process.stderr.on('error', () => undefined);

  // The server's stdout (where the CLI prints some start errors) joins its stderr, read in flowing
  // mode so that a gone reader never blocks the server.
  const server = spawn(cli, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  server.stdout?.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
  });
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    server.kill('SIGTERM');
    setTimeout(() => server.kill('SIGKILL'), graceMs).unref();
  };
  const forget = (): void => {
    if (pidFile === '-' || server.pid === undefined) return;
    try {
      if ((JSON.parse(readFileSync(pidFile, 'utf8')) as PidFile).server === server.pid) rmSync(pidFile, { force: true });
    } catch {
      // gone already, or another start's: not ours to remove
    }
  };
  server.once('error', (err) => {
    process.stderr.write(`the Temporal CLI could not be started: ${err.message}\n`);
    process.exit(127);
  });
  server.once('exit', (code, signal) => {
    forget();
    process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0));
  });
  if (server.pid === undefined) return; // 'error' follows
  if (pidFile !== '-') {
    // Written whole, and never over another's: the start removed a stale one before it came here,
    // so one that exists belongs to a concurrent start on the same database (whose server wins the port).
    const record: PidFile = { server: server.pid, guardian: process.pid, owner: process.ppid };
    const temp = `${pidFile}.${process.pid}.tmp`;
    try {
      writeFileSync(temp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
      linkSync(temp, pidFile);
    } catch (err) {
      process.stderr.write(`the dev server's pid file ${pidFile} could not be written: ${(err as Error).message}\n`);
    } finally {
      rmSync(temp, { force: true });
    }
  }
  process.stdout.write(`pid ${server.pid}\n`);

  process.stdin.once('end', stop);
  process.stdin.once('error', stop);
  process.stdin.resume();
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, stop);
}

if (require.main === module) main();
