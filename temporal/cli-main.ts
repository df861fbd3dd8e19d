/**
 * `npm run temporal:install`: makes sure the pinned Temporal CLI is available (building it once
 * into the cache outside the clone) and prints its path. CI runs it before the tests.
 */
import { loadConfig } from '../src/config/config';
import { ensureTemporalCli } from './cli';

ensureTemporalCli(loadConfig().temporal, (message) => console.log(`flowgate: ${message}`))
  .then((cliPath) => console.log(cliPath))
  .catch((err: unknown) => {
    console.error(`flowgate: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
