/**
 * `npm run temporal -- <args>`: the pinned Temporal CLI from the cache, pointed at the server
 * flowgate uses (temporal/cli-address.ts: TEMPORAL_ADDRESS, else the dev server running on the
 * configured data dir, else TEMPORAL_DEV_PORT; never a guess) and its namespace, so that
 * `npm run temporal -- workflow describe -w <runId>` works as written. Run data is sealed before it
 * reaches Temporal; when flowgate's gateway answers, the CLI decodes payloads through its codec
 * endpoint with the instance administrator token (TEMPORAL_CODEC_ENDPOINT and TEMPORAL_CODEC_AUTH in
 * the CLI's environment, not its arguments, which other users of the machine could read).
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../src/config/config';
import { ensureTemporalCli } from './cli';
import { temporalCliAddress } from './cli-address';

const loaded = loadConfig();
const config = loaded.temporal;
const args = process.argv.slice(2);

/** The CLI's codec settings for flowgate's endpoint, when the gateway answers and the token is at hand. */
async function codecEnvironment(): Promise<Record<string, string>> {
  if (process.env.TEMPORAL_CODEC_ENDPOINT || args.some((a) => a.startsWith('--codec-endpoint'))) return {};
  const host = ['0.0.0.0', '::'].includes(loaded.host) ? '127.0.0.1' : loaded.host;
  const base = loaded.publicUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${loaded.port}`;
  const token = loaded.adminToken ?? (await readFile(path.join(loaded.dataDir, 'admin-token'), 'utf8').catch(() => '')).trim();
  if (token === '') return {};
  try {
    await fetch(`${base}/codec/sign-in`, { signal: AbortSignal.timeout(1500) });
  } catch {
    console.error(`flowgate: the gateway at ${base} does not answer: payloads show sealed (binary/encrypted)`);
    return {};
  }
  return { TEMPORAL_CODEC_ENDPOINT: `${base}/codec`, TEMPORAL_CODEC_AUTH: `Bearer ${token}` };
}

async function main(): Promise<void> {
  // One argument (`--help`, `--version`) talks to no server.
  const extra = args.length > 1 ? [
    ...await temporalCliAddress({ args, dataDir: loaded.dataDir, ...(config.address ? { address: config.address } : {}), ...(process.env.TEMPORAL_DEV_PORT ? { devPortEnv: String(config.devPort) } : {}) }),
    ...(args.includes('--namespace') || args.includes('-n') ? [] : ['--namespace', config.namespace]),
  ] : [];
  const cliPath = await ensureTemporalCli(config, (message) => console.error(`flowgate: ${message}`));
  const codec = args.length > 1 ? await codecEnvironment() : {};
  const child = spawn(cliPath, [...args, ...extra], { stdio: 'inherit', env: { ...process.env, ...codec } });
  child.on('exit', (code) => process.exit(code ?? 1));
}

main().catch((err: unknown) => {
  console.error(`flowgate: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
