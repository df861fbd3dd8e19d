/**
 * The better-sqlite3 build this Node line loads. better-sqlite3 12 aborts worker processes on
 * Node 24 when statements are finalized during shutdown (an assertion in
 * RemoveEnvironmentCleanupHook); 13 fixes that but needs Node 22 or newer. package.json therefore
 * carries both: `better-sqlite3` (12, every line) and the optional alias `better-sqlite3-v13`,
 * which npm skips on Node 20 (its `engines` do not match). Node 22 and later use 13 when it is
 * installed, Node 20 uses 12. The two share one API, and @types/better-sqlite3 describes both.
 */
import type BetterSqlite3 from 'better-sqlite3';

export type SqliteDatabase = BetterSqlite3.Database;
type SqliteConstructor = typeof BetterSqlite3;

function load(): SqliteConstructor {
  if (Number(process.versions.node.split('.')[0]) >= 22) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      return require('better-sqlite3-v13') as SqliteConstructor;
    } catch (error) {
      // not installed (node_modules installed on Node 20): 12 is the only build there is
      if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    }
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('better-sqlite3') as SqliteConstructor;
}

/** better-sqlite3's Database constructor for this Node line. */
export const Sqlite: SqliteConstructor = load();
