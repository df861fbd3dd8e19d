/**
 * Starts and stops the embedded Temporal dev server (`temporal server start-dev`): the real server
 * with SQLite file persistence in WAL mode (the default journal is an order of magnitude slower)
 * and the Web UI. Used by `npm start` when TEMPORAL_ADDRESS is unset, and by the test suite.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { Connection } from '@temporalio/client';

export interface DevServerOptions {
  cliPath: string;
  ip?: string;
  port: number;
  /** undefined: headless */
  uiPort?: number;
  /** undefined: in memory */
  dbFile?: string;
  namespace: string;
  startTimeoutMs?: number;
}

export interface DevServer {
  address: string;
  uiUrl?: string;
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

export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const ip = options.ip ?? '127.0.0.1';
  if (!(await portIsFree(options.port, ip))) {
    throw new Error(`port ${options.port} on ${ip} is taken: set TEMPORAL_ADDRESS=${ip}:${options.port} to use the Temporal server already there, or TEMPORAL_DEV_PORT to another port`);
  }
  if (options.uiPort !== undefined && !(await portIsFree(options.uiPort, ip))) {
    throw new Error(`Temporal UI port ${options.uiPort} on ${ip} is taken: set TEMPORAL_UI_PORT to another port`);
  }
  const args = ['server', 'start-dev', '--ip', ip, '--port', String(options.port), '--namespace', options.namespace, '--log-level', 'warn'];
  if (options.uiPort === undefined) args.push('--headless');
  else args.push('--ui-port', String(options.uiPort));
  if (options.dbFile) {
    args.push('--db-filename', options.dbFile, '--sqlite-pragma', 'journal_mode=WAL', '--sqlite-pragma', 'synchronous=NORMAL');
  }

  const child = spawn(options.cliPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderrTail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-4000);
  });
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  child.once('exit', (code, signal) => {
    exited = { code, signal };
  });
  // Never leave an orphaned server behind, whatever way this process ends.
  const killOnExit = (): void => {
    if (!exited) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  const address = `${ip}:${options.port}`;
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    if (exited) {
      process.removeListener('exit', killOnExit);
      throw new Error(`the Temporal dev server exited during start (code ${exited.code}, signal ${exited.signal}): ${stderrTail.trim()}`);
    }
    if (await namespaceReady(address, options.namespace)) break;
    if (Date.now() > deadline) {
      await stopChild(child, () => exited !== undefined);
      process.removeListener('exit', killOnExit);
      throw new Error(`the Temporal dev server did not become ready at ${address}: ${stderrTail.trim()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }

  return {
    address,
    uiUrl: options.uiPort === undefined ? undefined : `http://${ip}:${options.uiPort}`,
    pid: child.pid,
    async stop() {
      await stopChild(child, () => exited !== undefined);
      process.removeListener('exit', killOnExit);
    },
  };
}

async function namespaceReady(address: string, namespace: string): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: 1000 });
    await connection.workflowService.describeNamespace({ namespace });
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

async function stopChild(child: ChildProcess, hasExited: () => boolean): Promise<void> {
  if (hasExited()) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await gone;
  clearTimeout(timer);
}
