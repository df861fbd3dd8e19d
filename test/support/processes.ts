/** Child flowgate processes for tests that need a real crash or a real `npm start`. */
import { FIXTURE_DATA_KEYS } from './histories';
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';

export const MAIN = path.join(__dirname, '..', '..', 'src', 'main.js');

export interface Child {
  process: ChildProcess;
  output(): string;
  /** resolves with the first stdout line matching `pattern` */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startMain(env: Record<string, string>): Child {
  const child = spawn(process.execPath, [MAIN], {
    // Outside the clone: a start without FLOWGATE_DATA_DIR would otherwise create ./data in it.
    cwd: os.tmpdir(),
    // the replicas a test starts share the suite's key ring, as a deployment's must (docs/operations.md)
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', FLOWGATE_LOG_LEVEL: 'warn', FLOWGATE_DATA_KEYS: FIXTURE_DATA_KEYS, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
    for (const listener of listeners) listener();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    // 'close', not 'exit': by then stdout and stderr are drained, so output() holds the last words.
    child.once('close', (code, signal) => {
      for (const listener of listeners) listener();
      resolve({ code, signal });
    });
  });
  return {
    process: child,
    output: () => output,
    exited,
    waitForLine(pattern, timeoutMs = 120_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const match = pattern.exec(output);
          if (match) {
            done();
            resolve(match);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            done();
            reject(new Error(`process exited before printing ${pattern}: ${output}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms: ${output}`));
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
  };
}
