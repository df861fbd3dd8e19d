/**
 * Starts and stops the embedded Temporal dev server (`temporal server start-dev`): the real server
 * with SQLite file persistence in WAL mode (the default journal is an order of magnitude slower)
 * and the Web UI. Used by `npm start` when TEMPORAL_ADDRESS is unset, and by the test suite.
 *
 * The server runs under a guardian (temporal/guardian.ts) that stops it within seconds of this
 * process ending, however it ends; a server on a database file whose guardian died too is found
 * through the file's pid file and stopped by the next start (temporal/orphan.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { queuedLegacyTasks } from './legacy-backlog';
import { reclaimOrphan } from './orphan';

const GUARDIAN = path.join(__dirname, 'guardian.js');
/** How often a server that defers fairness for a backlog (temporal/legacy-backlog.ts) records its queues' progress. */
const LEGACY_ACK_INTERVAL = '5s';
/** How long the server may take to stop on SIGTERM before it is killed. */
const STOP_GRACE_MS = 5000;

/** Beside the database: names the server running on it, its guardian and the flowgate that started them. */
export function devServerPidFile(dbFile: string): string {
  return `${dbFile}.pid`;
}

export interface DevServerOptions {
  cliPath: string;
  ip?: string;
  port: number;
  /** undefined: headless */
  uiPort?: number;
  /** where the Web UI decodes payloads (flowgate's `/codec`); the operator signs in there first */
  uiCodecEndpoint?: string;
  /** undefined: in memory */
  dbFile?: string;
  namespace: string;
  startTimeoutMs?: number;
  /** told when an orphaned server of `dbFile` is stopped, or when it starts without fairness */
  notice?: (message: string) => void;
  /**
   * Fair dispatch across fairness keys (organizations) on the task queues, `matching.enableFairness`
   * (src/common/priority.ts); default true. A database holding tasks queued without it starts
   * without it once more (temporal/legacy-backlog.ts).
   */
  fairness?: boolean;
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  /** whether it dispatches fairly across fairness keys */
  fairness: boolean;
  /** the server's process (benchmarks read its CPU time) */
  pid?: number;
  stop(): Promise<void>;
}

export async function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/**
 * Whether the port is free, or becomes free within `waitMs`: a server stopped just before (an orphan
 * reclaimed, or the one of a flowgate killed a moment ago) may still be letting its sockets go.
 */
async function portFreeSoon(port: number, host: string, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (await portIsFree(port, host)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** The server exited before it was ready: often something passing (a port it picked for itself taken meanwhile). */
class ExitedDuringStart extends Error {}

/** How many times a start is tried when the server exits before it is ready. */
const START_ATTEMPTS = 3;

/**
 * Starts the server; one that exits before it is ready is started again (up to three tries in all),
 * because the dev server picks some ports of its own (its internal services, HTTP API, metrics)
 * with nothing to stop another process from taking one between its pick and its bind.
 */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (err) {
      if (!(err instanceof ExitedDuringStart) || attempt >= START_ATTEMPTS) throw err;
      options.notice?.(`${err.message}; starting it again (try ${attempt + 1} of ${START_ATTEMPTS})`);
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
  }
}

async function startOnce(options: DevServerOptions): Promise<DevServer> {
  const ip = options.ip ?? '127.0.0.1';
  const pidFile = options.dbFile === undefined ? undefined : devServerPidFile(options.dbFile);
  if (options.dbFile !== undefined) {
    await reclaimOrphan({ pidFile: devServerPidFile(options.dbFile), dbFile: options.dbFile, graceMs: STOP_GRACE_MS, notice: options.notice });
  }
  if (!(await portFreeSoon(options.port, ip, options.dbFile === undefined ? 0 : 5000))) {
    throw new Error(`port ${options.port} on ${ip} is taken: set TEMPORAL_ADDRESS=${ip}:${options.port} to use the Temporal server already there, or TEMPORAL_DEV_PORT to another port`);
  }
  if (options.uiPort !== undefined && !(await portFreeSoon(options.uiPort, ip, options.dbFile === undefined ? 0 : 5000))) {
    throw new Error(`Temporal UI port ${options.uiPort} on ${ip} is taken: set TEMPORAL_UI_PORT to another port`);
  }
  const args = ['server', 'start-dev', '--ip', ip, '--port', String(options.port), '--namespace', options.namespace, '--log-level', 'warn'];
  if (options.uiPort === undefined) args.push('--headless');
  else {
    args.push('--ui-port', String(options.uiPort));
    if (options.uiCodecEndpoint) args.push('--ui-codec-endpoint', options.uiCodecEndpoint);
  }
  if (options.dbFile) {
    args.push('--db-filename', options.dbFile, '--sqlite-pragma', 'journal_mode=WAL', '--sqlite-pragma', 'synchronous=NORMAL');
  }
  const wanted = options.fairness ?? true;
  const fairness = wanted && await fairnessSafe(options.dbFile, options.notice);
  // Fairness implies the priority-aware matcher (priority keys) as well.
  if (fairness) args.push('--dynamic-config-value', 'matching.enableFairness=true');
  // Deferred for a backlog: write how far each queue got every few seconds rather than every
  // minute (this server's stop does not), so that the next start sees the backlog gone.
  else if (wanted) args.push('--dynamic-config-value', `matching.updateAckInterval="${LEGACY_ACK_INTERVAL}"`);

  // The guardian's stdin is a pipe from this process: its end of file is this process's end.
  const child = spawn(process.execPath, [GUARDIAN, pidFile ?? '-', String(STOP_GRACE_MS), options.cliPath, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin?.on('error', () => undefined);
  let stderrTail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-4000);
  });
  let serverPid: number | undefined;
  let stdoutHead = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    if (serverPid !== undefined) return;
    stdoutHead += chunk.toString('utf8');
    const line = /^pid (\d+)\n/.exec(stdoutHead);
    if (line) serverPid = Number(line[1]);
  });
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  child.once('exit', (code, signal) => {
    exited = { code, signal };
  });
  // Stop the server at once when this process exits normally; on any other end the guardian
  // sees its stdin close and does the same.
  const stopOnExit = (): void => {
    if (!exited) child.kill('SIGTERM');
  };
  process.once('exit', stopOnExit);

  const address = `${ip}:${options.port}`;
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    if (exited) {
      process.removeListener('exit', stopOnExit);
      throw new ExitedDuringStart(`the Temporal dev server exited during start (code ${exited.code}, signal ${exited.signal}): ${stderrTail.trim()}`);
    }
    if (await namespaceReady(address, options.namespace)) break;
    if (Date.now() > deadline) {
      await stopGuarded(child, serverPid, () => exited !== undefined);
      process.removeListener('exit', stopOnExit);
      throw new Error(`the Temporal dev server did not become ready at ${address}: ${stderrTail.trim()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }

  return {
    address,
    uiUrl: options.uiPort === undefined ? undefined : `http://${ip}:${options.uiPort}`,
    fairness,
    pid: serverPid,
    async stop() {
      await stopGuarded(child, serverPid, () => exited !== undefined);
      process.removeListener('exit', stopOnExit);
    },
  };
}

/** False while the database `dbFile` holds tasks queued without fairness (temporal/legacy-backlog.ts). */
async function fairnessSafe(dbFile: string | undefined, notice: DevServerOptions['notice']): Promise<boolean> {
  if (dbFile === undefined) return true;
  let queued: number;
  try {
    queued = await queuedLegacyTasks(dbFile);
  } catch (err) {
    notice?.(`could not read the queued tasks of ${dbFile} (${(err as Error).message}): the Temporal dev server starts without fairness across organizations`);
    return false;
  }
  if (queued === 0) return true;
  notice?.(`${dbFile} holds ${queued} task(s) queued before fairness across organizations was enabled: the Temporal dev server starts without it this time so that they run; the next start enables it`);
  return false;
}

async function namespaceReady(address: string, namespace: string): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    // A subchannel of its own: the process-wide pool would hand back one that an earlier connection
    // to this address is still backing off on, delaying a restarted server's readiness by minutes.
    connection = await Connection.connect({ address, connectTimeout: 1000, channelArgs: { 'grpc.use_local_subchannel_pool': 1 } });
    await connection.workflowService.describeNamespace({ namespace });
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/**
 * The guardian stops the server on SIGTERM (SIGKILL after the grace period) and exits with it; one
 * that has not exited well after that is killed, and the server with it.
 */
async function stopGuarded(guardian: ChildProcess, serverPid: number | undefined, hasExited: () => boolean): Promise<void> {
  if (hasExited()) return;
  const gone = new Promise<void>((resolve) => guardian.once('exit', () => resolve()));
  guardian.kill('SIGTERM');
  const timer = setTimeout(() => {
    if (serverPid !== undefined) {
      try {
        process.kill(serverPid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    guardian.kill('SIGKILL');
  }, STOP_GRACE_MS + 5000);
  await gone;
  clearTimeout(timer);
}
