/**
 * The `git` binary for tests that make repositories: a fixed author and `main` as the first
 * branch, whatever the machine's Git configuration says.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** `git <args>` in `cwd`; its standard output, trimmed. */
export async function gitIn(cwd: string, ...args: string[]): Promise<string> {
  return (await run('git', ['-c', 'user.email=ci@example.com', '-c', 'user.name=ci', '-c', 'init.defaultBranch=main', ...args], { cwd })).stdout.trim();
}
