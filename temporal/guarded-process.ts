/**
 * A process of the embedded Temporal (the server, the Web UI server) under its guardian
 * (temporal/guardian.ts): started with a pipe on the guardian's stdin, so that the process ends
 * with this one however it ends, and stopped on request (SIGTERM, then SIGKILL).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const GUARDIAN = path.join(__dirname, 'guardian.js');
/** How long a process may take to stop on SIGTERM before it is killed. */
export const STOP_GRACE_MS = 5000;

/** A process under a guardian. */
export interface Guarded {
  /** the guarded process's pid, once the guardian told it */
  pid(): number | undefined;
  /** resolves with how it ended */
  exited: Promise<string>;
  hasExited(): boolean;
  /** the last 4000 characters it wrote to stderr */
  stderrTail(): string;
  stop(): Promise<void>;
}

export function spawnGuarded(pidFile: string, command: string, args: string[]): Guarded {
  // The guardian's stdin is a pipe from this process: its end of file is this process's end.
  const child = spawn(process.execPath, [GUARDIAN, pidFile, String(STOP_GRACE_MS), command, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin?.on('error', () => undefined);
  let stderrTail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-4000);
  });
  let pid: number | undefined;
  let stdoutHead = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    if (pid !== undefined) return;
    stdoutHead += chunk.toString('utf8');
    const line = /^pid (\d+)\n/.exec(stdoutHead);
    if (line) pid = Number(line[1]);
  });
  let ended: string | undefined;
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => {
    ended = signal ? `signal ${signal}` : `code ${code}`;
    resolve(ended);
  }));
  // Stopped at once when this process exits normally; on any other end the guardian sees its stdin close.
  const stopOnExit = (): void => {
    if (ended === undefined) child.kill('SIGTERM');
  };
  process.once('exit', stopOnExit);
  void exited.then(() => process.removeListener('exit', stopOnExit));
  return {
    pid: () => pid,
    exited,
    hasExited: () => ended !== undefined,
    stderrTail: () => stderrTail.trim(),
    stop: () => stopGuarded(child, () => pid, exited, () => ended !== undefined),
  };
}

/**
 * The guardian stops its process on SIGTERM (SIGKILL after the grace period) and exits with it; one
 * that has not exited well after that is killed, and the process with it.
 */
async function stopGuarded(guardian: ChildProcess, pid: () => number | undefined, exited: Promise<string>, hasExited: () => boolean): Promise<void> {
  if (hasExited()) return;
  guardian.kill('SIGTERM');
  const timer = setTimeout(() => {
    const target = pid();
    if (target !== undefined) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    guardian.kill('SIGKILL');
  }, STOP_GRACE_MS + 5000);
  await exited;
  clearTimeout(timer);
}
