/**
 * The CLI as a user runs it: `node dist/src/cli/main.js` as a child process against a test
 * instance, with a home of its own (config files) and the instance's URL and a token in the
 * environment. Never throws for a non-zero exit: the code and both streams are the answer.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const CLI = path.resolve(__dirname, '../../src/cli/main.js');

export interface CliResult { code: number; stdout: string; stderr: string }

export interface CliTarget {
  /** the instance's base URL */
  url: string;
  /** FLOWGATE_TOKEN */
  token: string;
  /** HOME (and XDG_CONFIG_HOME below it) */
  home: string;
  /** more environment variables */
  env?: Record<string, string>;
  timeoutMs?: number;
}

export async function runCli(args: readonly string[], target: CliTarget): Promise<CliResult> {
  const env = {
    PATH: process.env.PATH ?? '', HOME: target.home, XDG_CONFIG_HOME: path.join(target.home, '.config'),
    FLOWGATE_URL: target.url, FLOWGATE_TOKEN: target.token, ...target.env,
  };
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [CLI, ...args], { env, timeout: target.timeoutMs ?? 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed: { code?: unknown; stdout?: unknown; stderr?: unknown } = typeof err === 'object' && err !== null ? err : {};
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      stdout: typeof failed.stdout === 'string' ? failed.stdout : '', stderr: typeof failed.stderr === 'string' ? failed.stderr : '',
    };
  }
}
