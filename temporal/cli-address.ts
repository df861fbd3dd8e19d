/**
 * Which Temporal server `npm run temporal -- …` (temporal/run-cli.ts) talks to: `--address` on its
 * command line, else TEMPORAL_ADDRESS, else the embedded Temporal running on the configured data
 * dir (its pid file, `<data dir>/temporal.sqlite.pid` or `<data dir>/temporal-postgres.pid`, names
 * the server; the configuration file on the server's own command line in /proc says its frontend),
 * else TEMPORAL_DEV_PORT when it is set in the environment. Otherwise it refuses to guess: a
 * default port may well be another instance's server.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { serverPidFile } from './embedded';
import { isEmbeddedProcessOf, processInfo } from './orphan';

const PidFileSchema = z.object({ server: z.number().int().positive() });
const FrontendSchema = z.object({
  services: z.object({ frontend: z.object({ rpc: z.object({ grpcPort: z.number().int(), bindOnIP: z.string().min(1) }) }) }),
});

/** The frontend address of the embedded Temporal whose files are named after `stateKey`, when its pid file names a live one. */
export async function runningEmbeddedAddress(stateKey: string): Promise<string | undefined> {
  try {
    const { server } = PidFileSchema.parse(JSON.parse(readFileSync(serverPidFile(stateKey), 'utf8')));
    const info = await processInfo(server);
    const configFile = `${stateKey}.server.yaml`;
    if (!info || !isEmbeddedProcessOf(info.argv, configFile)) return undefined;
    const { rpc } = FrontendSchema.parse(parse(readFileSync(configFile, 'utf8'))).services.frontend;
    return `${rpc.bindOnIP.includes(':') ? `[${rpc.bindOnIP}]` : rpc.bindOnIP}:${rpc.grpcPort}`;
  } catch {
    return undefined;
  }
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
  const keys = [path.join(inputs.dataDir, 'temporal.sqlite'), path.join(inputs.dataDir, 'temporal-postgres')];
  for (const key of keys) {
    const running = await runningEmbeddedAddress(key);
    if (running) return ['--address', running];
  }
  if (inputs.devPortEnv) return ['--address', `127.0.0.1:${inputs.devPortEnv}`];
  throw new Error(`no Temporal server to address: no embedded Temporal runs on the data dir ${inputs.dataDir} (no live server in ${keys.map(serverPidFile).join(' or ')}), `
    + 'and neither TEMPORAL_ADDRESS nor TEMPORAL_DEV_PORT is set. Start flowgate with this FLOWGATE_DATA_DIR, set TEMPORAL_ADDRESS (or TEMPORAL_DEV_PORT), or pass --address');
}
