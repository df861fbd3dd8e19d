/**
 * One real Temporal dev server for the whole suite (in memory, headless, on a free port), started
 * with flowgate's own launcher. Each test starts flowgate against it with its own task queue.
 *
 * These are mocha global fixtures, not root hooks: with `--parallel` they run once in the parent
 * process, before any worker exists. The address and the CLI path go to the workers through the
 * environment, which each worker copies when it is forked (mocha forks them after global setup).
 * Serial runs read the same variables in the same process.
 */
import { z } from 'zod';
import { ensureTemporalCli } from '../../temporal/cli';
import { freePort, startDevServer, type DevServer } from '../../temporal/dev-server';
import { loadConfig } from '../../src/config/config';

const ADDRESS_VAR = 'FLOWGATE_TEST_TEMPORAL_ADDRESS';
const CLI_VAR = 'FLOWGATE_TEST_TEMPORAL_CLI';

const HandOffSchema = z.object({
  [ADDRESS_VAR]: z.string().min(1).optional(),
  [CLI_VAR]: z.string().min(1).optional(),
});

/** Read at call time, not at import: in the parent the variables appear only once setup ran. */
function handOff(): z.infer<typeof HandOffSchema> {
  return HandOffSchema.parse(process.env);
}

export function temporalAddress(): string {
  const address = handOff()[ADDRESS_VAR];
  if (!address) throw new Error(`the test Temporal server is not running (${ADDRESS_VAR} is unset: is test/setup/root-hooks.js required?)`);
  return address;
}

export function temporalCliPath(): string {
  const cliPath = handOff()[CLI_VAR];
  if (!cliPath) throw new Error(`the Temporal CLI was not located (${CLI_VAR} is unset: is test/setup/root-hooks.js required?)`);
  return cliPath;
}

let server: DevServer | undefined;

/** Global fixtures have no mocha timeout: a first run may spend minutes building the Temporal CLI. */
export async function mochaGlobalSetup(): Promise<void> {
  const config = loadConfig({ ...process.env, TEMPORAL_ADDRESS: undefined });
  const cliPath = await ensureTemporalCli(config.temporal, (m) => console.log(`      ${m}`));
  server = await startDevServer({ cliPath, port: await freePort(), namespace: 'default' });
  process.env[ADDRESS_VAR] = server.address;
  process.env[CLI_VAR] = cliPath;
}

export async function mochaGlobalTeardown(): Promise<void> {
  await server?.stop();
  delete process.env[ADDRESS_VAR];
  delete process.env[CLI_VAR];
}

/**
 * The suite runs many flowgates in one process and stops each when its file ends. The Temporal
 * client's retry interceptor (@temporalio/client grpc-retry) keeps a call's backoff timer after its
 * connection is closed; when it fires it throws "Channel has been shut down" from a timer, which
 * mocha would pin on whatever test runs then (a flowgate process has one connection, closed only
 * as it exits). Only that error, from that timer, is let go here, with a line saying so.
 *
 * It is caught before any `uncaughtException` listener, through the process's capture callback:
 * between two files a mocha worker has no listener at all (mocha removes them when a file ends),
 * and there the timer's error used to end the worker (exit code 1, "Workerpool Worker terminated
 * Unexpectedly", the file then running lost). Every other error goes on to the listeners (mocha's,
 * during a file) or, with none, ends the process as Node would.
 */
function isRetryAfterClose(error: unknown): boolean {
  return error instanceof Error && error.message === 'Channel has been shut down' && /grpc-retry/.test(error.stack ?? '');
}

function installRetryAfterCloseFilter(): void {
  if (process.hasUncaughtExceptionCaptureCallback()) return; // installed already in this process
  process.setUncaughtExceptionCaptureCallback((error) => {
    if (isRetryAfterClose(error)) {
      console.warn('      (a stopped test instance\'s Temporal client retried a call after its connection closed: ignored)');
      return;
    }
    if (process.listenerCount('uncaughtException') > 0) {
      (process.emit as (event: string, ...args: unknown[]) => boolean)('uncaughtException', error, 'uncaughtException');
      return;
    }
    console.error('Uncaught', error);
    process.exit(1);
  });
}

export const mochaHooks = {
  beforeAll(): void {
    installRetryAfterCloseFilter();
  },
};
