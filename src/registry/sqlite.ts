/**
 * The registry's SQLite driver: Node's built-in `node:sqlite` (SQLite compiled into Node, stable
 * enough since 22.13 and warning-free on 24 and 26), so `npm ci` builds no native addon and one
 * `node_modules` serves every supported Node line. It replaced better-sqlite3, which needed a build
 * per Node ABI (two majors of it while Node 20 was supported).
 *
 * `openSqlite` answers the database as Kysely's SqliteDialect drives it (`prepare` → statements
 * with `reader`, `all`, `run`, `iterate` taking an array of parameters) and as better-sqlite3 did
 * for the registry: rows are plain objects, and a failure carries better-sqlite3's `code` names
 * (`SQLITE_CONSTRAINT_UNIQUE`, `SQLITE_BUSY`, …), which store-support.ts sorts into conflicts and
 * missing organizations. The file format is SQLite's own, so registries written by better-sqlite3
 * open unchanged (test/registry/registry.test.ts opens one).
 */
import type * as NodeSqlite from 'node:sqlite';
import { errorCode, fieldOf } from '../common/narrow';

/** Node 22 announces `node:sqlite` as experimental on first load; 24 and 26 do not. */
const EXPERIMENTAL_WARNING = /SQLite is an experimental feature/;

function loadNodeSqlite(): typeof NodeSqlite {
  // The warning is for the module, which the registry uses knowingly on a supported line: drop that
  // one warning while loading it, and only it (a warning emitted elsewhere meanwhile passes through).
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
    if (EXPERIMENTAL_WARNING.test(typeof warning === 'string' ? warning : warning.message)) return;
    Reflect.apply(emitWarning, this, [warning, ...rest]);
  };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const sqlite: typeof NodeSqlite = require('node:sqlite');
    return sqlite;
  } finally {
    process.emitWarning = emitWarning;
  }
}

const { DatabaseSync } = loadNodeSqlite();

/**
 * SQLite's result codes by number (the primary codes and the extended ones a registry query can
 * meet), named as SQLite and better-sqlite3 name them. An unlisted extended code falls back to its
 * primary code's name (the low 8 bits).
 */
const RESULT_CODES: ReadonlyMap<number, string> = new Map([
  [1, 'SQLITE_ERROR'], [2, 'SQLITE_INTERNAL'], [3, 'SQLITE_PERM'], [4, 'SQLITE_ABORT'], [5, 'SQLITE_BUSY'],
  [6, 'SQLITE_LOCKED'], [7, 'SQLITE_NOMEM'], [8, 'SQLITE_READONLY'], [9, 'SQLITE_INTERRUPT'], [10, 'SQLITE_IOERR'],
  [11, 'SQLITE_CORRUPT'], [13, 'SQLITE_FULL'], [14, 'SQLITE_CANTOPEN'], [15, 'SQLITE_PROTOCOL'], [17, 'SQLITE_SCHEMA'],
  [18, 'SQLITE_TOOBIG'], [19, 'SQLITE_CONSTRAINT'], [20, 'SQLITE_MISMATCH'], [21, 'SQLITE_MISUSE'], [23, 'SQLITE_AUTH'],
  [25, 'SQLITE_RANGE'], [26, 'SQLITE_NOTADB'],
  [261, 'SQLITE_BUSY_RECOVERY'], [517, 'SQLITE_BUSY_SNAPSHOT'], [773, 'SQLITE_BUSY_TIMEOUT'],
  [262, 'SQLITE_LOCKED_SHAREDCACHE'], [264, 'SQLITE_READONLY_RECOVERY'], [520, 'SQLITE_READONLY_CANTLOCK'],
  [275, 'SQLITE_CONSTRAINT_CHECK'], [531, 'SQLITE_CONSTRAINT_COMMITHOOK'], [787, 'SQLITE_CONSTRAINT_FOREIGNKEY'],
  [1043, 'SQLITE_CONSTRAINT_FUNCTION'], [1299, 'SQLITE_CONSTRAINT_NOTNULL'], [1555, 'SQLITE_CONSTRAINT_PRIMARYKEY'],
  [1811, 'SQLITE_CONSTRAINT_TRIGGER'], [2067, 'SQLITE_CONSTRAINT_UNIQUE'], [2323, 'SQLITE_CONSTRAINT_VTAB'],
  [2579, 'SQLITE_CONSTRAINT_ROWID'], [3091, 'SQLITE_CONSTRAINT_DATATYPE'],
]);

/** A failure SQLite reported, with its result code by name (`code`) and number (`errcode`). */
export class SqliteError extends Error {
  override readonly name = 'SqliteError';

  constructor(message: string, readonly code: string, readonly errcode: number, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** SQLite's own failures (node:sqlite's ERR_SQLITE_ERROR) as SqliteError; anything else as it is. */
function translated(error: unknown): unknown {
  if (!(error instanceof Error) || errorCode(error) !== 'ERR_SQLITE_ERROR') return error;
  const errcode = fieldOf(error, 'errcode');
  if (typeof errcode !== 'number') return error;
  const code = RESULT_CODES.get(errcode) ?? RESULT_CODES.get(errcode & 0xff) ?? `SQLITE_${errcode}`;
  return new SqliteError(error.message, code, errcode, { cause: error });
}

function sqliteCall<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw translated(error);
  }
}

/** node:sqlite's rows have no prototype; the registry's callers (and deepEqual in tests) expect plain objects. */
function plain(row: Record<string, unknown>): Record<string, unknown> {
  return { ...row };
}

type Parameters = ReadonlyArray<unknown>;

/** A prepared statement as Kysely's SqliteDialect drives it. */
export interface SqliteStatement {
  /** whether it answers rows (a select, a pragma query, a `returning` clause) */
  readonly reader: boolean;
  all(parameters?: Parameters): Record<string, unknown>[];
  run(parameters?: Parameters): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(parameters?: Parameters): IterableIterator<Record<string, unknown>>;
}

export interface SqliteDatabase {
  /** runs one or more statements that take no parameters (pragmas, DDL) */
  exec(sql: string): void;
  prepare(sql: string): SqliteStatement;
  close(): void;
}

export interface SqliteOpenOptions {
  /** opens without write access; the file must exist */
  readOnly?: boolean;
}

function bindable(value: unknown): value is NodeSqlite.SQLInputValue {
  return value === null || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string' || ArrayBuffer.isView(value);
}

function statement(prepared: NodeSqlite.StatementSync): SqliteStatement {
  // Kysely types its parameters `unknown`: a value node:sqlite cannot bind is refused here, as it would refuse it.
  const bind = (parameters: Parameters | undefined): readonly NodeSqlite.SQLInputValue[] => {
    const values = parameters ?? [];
    if (!values.every(bindable)) throw new TypeError(`a parameter cannot be bound to SQLite: ${values.map((v) => typeof v).join(', ')}`);
    return values;
  };
  return {
    reader: prepared.columns().length > 0,
    all: (parameters) => sqliteCall(() => prepared.all(...bind(parameters)).map(plain)),
    run: (parameters) => sqliteCall(() => prepared.run(...bind(parameters))),
    *iterate(parameters) {
      const rows = sqliteCall(() => prepared.iterate(...bind(parameters)));
      for (;;) {
        const next = sqliteCall(() => rows.next());
        if (next.done) return;
        yield plain(next.value);
      }
    },
  };
}

/** Opens (creating unless read-only) the SQLite database in `file` (`:memory:` for a private one). */
export function openSqlite(file: string, options: SqliteOpenOptions = {}): SqliteDatabase {
  const db = sqliteCall(() => new DatabaseSync(file, { readOnly: options.readOnly ?? false }));
  return {
    exec: (sql) => sqliteCall(() => db.exec(sql)),
    prepare: (sql) => statement(sqliteCall(() => db.prepare(sql))),
    close: () => sqliteCall(() => db.close()),
  };
}
