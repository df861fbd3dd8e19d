/** Exit codes the CLI promises scripts: success, failure, timeout and usage error stay apart. */
export const EXIT = { OK: 0, FAILURE: 1, TIMEOUT: 2, USAGE: 64 } as const;

export class CliError extends Error {
  constructor(message: string, readonly exitCode: number = EXIT.FAILURE) {
    super(message);
  }
}
