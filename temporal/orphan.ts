/**
 * An embedded Temporal process (the server, or its Web UI server) left running by an earlier start
 * whose flowgate and guardian both died (temporal/guardian.ts): found through its pid file and
 * stopped before a new one starts on the same database and ports. A process is stopped only when
 * /proc shows it runs with this start's configuration (`--config-file <file>` for the server,
 * `--root <dir>` for the Web UI server) and no live flowgate owns it; anything else named by a
 * stale pid file is left alone. Without /proc (macOS) nothing is reclaimed: the port check then
 * names the port that is taken.
 */
import { promises as fs } from 'node:fs';
import type { PidFile } from './guardian';

export interface ProcessInfo {
  pid: number;
  ppid: number;
  argv: string[];
}

/** A live process as /proc shows it; undefined when it is gone, a zombie, or cannot be read. */
export async function processInfo(pid: number): Promise<ProcessInfo | undefined> {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z' || state === 'X') return undefined;
    const argv = (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    if (argv.at(-1) === '') argv.pop();
    return { pid, ppid: Number(ppid), argv };
  } catch {
    return undefined;
  }
}

/** Whether `argv` is an embedded Temporal process started with `configFile` (the server's `--config-file`, the Web UI server's `--root`). */
export function isEmbeddedProcessOf(argv: readonly string[], configFile: string): boolean {
  return ['--config-file', '--root'].some((flag) => {
    const at = argv.indexOf(flag);
    return at >= 0 && argv[at + 1] === configFile;
  });
}

async function readPidFile(file: string): Promise<PidFile | undefined> {
  try {
    const parsed = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<PidFile>;
    const pids = [parsed.server, parsed.guardian, parsed.owner];
    return pids.every((pid) => Number.isInteger(pid) && (pid as number) > 0) ? parsed as PidFile : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a thread of `pid` other than a zombie still runs. A multi-threaded process (the Go dev
 * server) shows its leader as a zombie while its other threads still exit, and those hold its files,
 * listening sockets included: it is not gone until they are.
 */
export async function anyThreadAlive(pid: number): Promise<boolean> {
  let tasks: string[];
  try {
    tasks = await fs.readdir(`/proc/${pid}/task`);
  } catch {
    return false;
  }
  for (const tid of tasks) {
    try {
      const stat = await fs.readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
      if (state !== 'Z' && state !== 'X') return true;
    } catch {
      // exited meanwhile
    }
  }
  return false;
}

async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!(await processInfo(pid)) && !(await anyThreadAlive(pid))) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface ReclaimOptions {
  pidFile: string;
  /** the configuration the process was started with (isEmbeddedProcessOf) */
  configFile: string;
  /** how long the orphan may take to stop on SIGTERM before it is killed */
  graceMs: number;
  notice?: (message: string) => void;
}

/**
 * Stops the orphaned process started with `configFile`, if one runs; throws when a live flowgate's
 * runs with it (a second start on the same data dir), or when the orphan cannot be stopped.
 */
export async function reclaimOrphan({ pidFile, configFile, graceMs, notice }: ReclaimOptions): Promise<void> {
  if (!(await processInfo(process.pid))) return; // no /proc: nothing can be verified, so nothing is touched
  const recorded = await readPidFile(pidFile);
  if (!recorded) {
    await fs.rm(pidFile, { force: true });
    return;
  }
  const server = await processInfo(recorded.server);
  if (!server && await anyThreadAlive(recorded.server)) {
    // still exiting (its pid cannot be another's while it is a zombie): wait until its ports are let go
    await waitGone(recorded.server, graceMs + 5000);
    await fs.rm(pidFile, { force: true });
    return;
  }
  if (!server || !isEmbeddedProcessOf(server.argv, configFile)) {
    await fs.rm(pidFile, { force: true }); // stale: the server is gone and the pid may be another's now
    return;
  }
  // Owned: its guardian is still its parent, and the guardian's parent is still the flowgate that
  // started it (a guardian whose flowgate died is reparented, and is already stopping the server).
  const guardian = server.ppid === recorded.guardian ? await processInfo(recorded.guardian) : undefined;
  if (guardian && guardian.ppid === recorded.owner) {
    throw new Error(`the embedded Temporal process of ${configFile} (pid ${server.pid}) belongs to a flowgate that is running (pid ${recorded.owner}): stop that one first, or give this one another FLOWGATE_DATA_DIR`);
  }
  notice?.(`stopping the embedded Temporal process (pid ${server.pid}) an earlier start left running with ${configFile}`);
  try {
    process.kill(server.pid, 'SIGTERM');
    if (!(await waitGone(server.pid, graceMs))) {
      process.kill(server.pid, 'SIGKILL');
      if (!(await waitGone(server.pid, 5000))) throw new Error('it outlived SIGKILL');
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') {
      throw new Error(`the embedded Temporal process an earlier start left running with ${configFile} (pid ${server.pid}) could not be stopped: ${(err as Error).message}`, { cause: err });
    }
  }
  await fs.rm(pidFile, { force: true });
}
