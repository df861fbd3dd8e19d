/**
 * `npm run temporal:install`: makes sure the embedded Temporal's binaries are available (the
 * Temporal server with its SQL tool, and the Web UI server), building them once into the cache
 * outside the clone, and prints their paths. CI runs it before the tests.
 */
import { loadConfig } from '../src/config/config';
import { ensureTemporalServer, ensureTemporalUiServer } from './server-binaries';

async function main(): Promise<void> {
  const { temporal } = loadConfig();
  const progress = (message: string): void => console.log(`flowgate: ${message}`);
  const binaries = await ensureTemporalServer(temporal, progress);
  const uiServer = await ensureTemporalUiServer(temporal, progress);
  console.log(binaries.server);
  if (binaries.sqlTool) console.log(binaries.sqlTool);
  console.log(uiServer);
}

main().catch((err: unknown) => {
  console.error(`flowgate: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
