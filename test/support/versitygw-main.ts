/**
 * `npm run s3:install`: makes sure the pinned versitygw (the S3-compatible server of the tests) is
 * built into the cache outside the clone, and prints its path. CI runs it before the tests.
 */
import { ensureVersitygw } from './versitygw';

ensureVersitygw((message) => console.log(`flowgate: ${message}`))
  .then((binary) => console.log(binary))
  .catch((err: unknown) => {
    console.error(`flowgate: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
