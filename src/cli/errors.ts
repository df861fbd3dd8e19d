/**
 * Exit codes the CLI promises scripts: success, failure, timeout, a run left waiting for people (`call --wait` on
 * a run PAUSED at an approval) and usage error stay apart.
 */
export const EXIT = { OK: 0, FAILURE: 1, TIMEOUT: 2, WAITING: 3, USAGE: 64 } as const;

export class CliError extends Error {
  constructor(message: string, readonly exitCode: number = EXIT.FAILURE) {
    super(message);
  }
}
