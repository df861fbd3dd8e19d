/**
 * `npm run temporal -- <args>`: the pinned Temporal CLI from the cache, pointed at the server
 * flowgate uses (TEMPORAL_ADDRESS, else the embedded dev server's port) and its namespace, so
 * that `npm run temporal -- workflow describe -w <runId>` works as written.
 */
import { spawn } from 'node:child_process';
import { loadConfig } from '../src/config/config';
import { ensureTemporalCli } from './cli';

const config = loadConfig().temporal;
const args = process.argv.slice(2);
const extra = [
  ...(args.includes('--address') ? [] : ['--address', config.address ?? `127.0.0.1:${config.devPort}`]),
  ...(args.includes('--namespace') || args.includes('-n') ? [] : ['--namespace', config.namespace]),
];
ensureTemporalCli(config, (message) => console.error(`flowgate: ${message}`))
  .then((cliPath) => {
    const child = spawn(cliPath, [...args, ...(args.length > 1 ? extra : [])], { stdio: 'inherit' });
    child.on('exit', (code) => process.exit(code ?? 1));
  })
  .catch((err: unknown) => {
    console.error(`flowgate: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
