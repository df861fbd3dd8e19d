/**
 * One real Temporal dev server for the whole suite (in memory, headless, on a free port), started
 * with flowgate's own launcher. Each test starts flowgate against it with its own task queue.
 */
import { ensureTemporalCli } from '../../temporal/cli';
import { freePort, startDevServer, type DevServer } from '../../temporal/dev-server';
import { loadConfig } from '../../src/config';

let server: DevServer | undefined;
let cliPath: string | undefined;

export function temporalAddress(): string {
  if (!server) throw new Error('the test Temporal server is not running');
  return server.address;
}

export function temporalCliPath(): string {
  if (!cliPath) throw new Error('the Temporal CLI was not located');
  return cliPath;
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    this.timeout(15 * 60_000); // a first run may build the Temporal CLI
    const config = loadConfig({ ...process.env, TEMPORAL_ADDRESS: undefined });
    cliPath = await ensureTemporalCli(config.temporal, (m) => console.log(`      ${m}`));
    server = await startDevServer({ cliPath, port: await freePort(), namespace: 'default' });
  },
  async afterAll(): Promise<void> {
    await server?.stop();
  },
};
