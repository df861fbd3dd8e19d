/**
 * Which Temporal server `npm run temporal -- …` (temporal/run-cli.ts) talks to: `--address` on its
 * command line, else TEMPORAL_ADDRESS, else the embedded dev server running on the configured data
 * dir (its pid file `<data dir>/temporal.sqlite.pid` names the server; the server's own command line
 * in /proc says its `--ip` and `--port`), else TEMPORAL_DEV_PORT when it is set in the environment.
 * Otherwise it refuses to guess: a default port may well be another instance's server.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { devServerPidFile } from './dev-server';
import { isDevServerOf, processInfo } from './orphan';

/** The address of the dev server flowgate runs on `dbFile`, when its pid file names a live one. */
export async function runningDevServerAddress(dbFile: string): Promise<string | undefined> {
  let server: unknown;
  try {
    server = (JSON.parse(readFileSync(devServerPidFile(dbFile), 'utf8')) as { server?: unknown }).server;
  } catch {
    return undefined;
  }
  if (typeof server !== 'number') return undefined;
  const info = await processInfo(server);
  if (!info || !isDevServerOf(info.argv, dbFile)) return undefined;
  const flag = (name: string) => {
    const at = info.argv.indexOf(name);
    return at >= 0 ? info.argv[at + 1] : undefined;
  };
  const port = flag('--port');
  return port && /^\d+$/.test(port) ? `${flag('--ip') ?? '127.0.0.1'}:${port}` : undefined;
}

export interface AddressInputs {
  args: readonly string[];
  /** TEMPORAL_ADDRESS */
  address?: string;
  dataDir: string;
  /** TEMPORAL_DEV_PORT as the environment has it (not its default) */
  devPortEnv?: string;
}

/** `--address` to add to the Temporal CLI's arguments: [] when they name one; throws when it would be a guess. */
export async function temporalCliAddress(inputs: AddressInputs): Promise<string[]> {
  if (inputs.args.includes('--address')) return [];
  if (inputs.address) return ['--address', inputs.address];
  const dbFile = path.join(inputs.dataDir, 'temporal.sqlite');
  const running = await runningDevServerAddress(dbFile);
  if (running) return ['--address', running];
  if (inputs.devPortEnv) return ['--address', `127.0.0.1:${inputs.devPortEnv}`];
  throw new Error(`no Temporal server to address: no dev server runs on the data dir ${inputs.dataDir} (no live server in ${devServerPidFile(dbFile)}), `
    + 'and neither TEMPORAL_ADDRESS nor TEMPORAL_DEV_PORT is set. Start flowgate with this FLOWGATE_DATA_DIR, set TEMPORAL_ADDRESS (or TEMPORAL_DEV_PORT), or pass --address');
}
