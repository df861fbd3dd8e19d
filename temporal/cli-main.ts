/**
 * `npm run temporal:install`: makes sure every Temporal binary flowgate and its tests use is
 * available, building each once into the cache outside the clone, and prints their paths: the
 * embedded Temporal's (the Temporal server with its SQL tool, and the Web UI server) and the
 * Temporal CLI v1.5.1 the tests drive (`workflow signal`, `schedule list`, ...). CI runs it in its
 * install stage, so the suite's first start builds nothing. The three build side by side: each
 * `go install` spends much of its time fetching modules and linking, which overlap well on 2 cores.
 */
import { loadConfig } from '../src/config/config';
import { ensureTemporalCli } from './cli';
import { ensureTemporalServer, ensureTemporalUiServer } from './server-binaries';

async function main(): Promise<void> {
  const { temporal } = loadConfig();
  const progress = (message: string): void => console.log(`flowgate: ${message}`);
  const [binaries, uiServer, cli] = await Promise.all([
    ensureTemporalServer(temporal, progress),
    ensureTemporalUiServer(temporal, progress),
    ensureTemporalCli(temporal, progress),
  ]);
  console.log(binaries.server);
  if (binaries.sqlTool) console.log(binaries.sqlTool);
  console.log(uiServer);
  console.log(cli);
}

main().catch((err: unknown) => {
  console.error(`flowgate: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
