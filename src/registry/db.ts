/**
 * One Kysely query builder over two dialects: SQLite (node:sqlite, the embedded default) and
 * PostgreSQL (pg). Column types are the lowest common denominator of both, so a single migration
 * and a single set of queries serve either: JSON is text, timestamps are ISO-8601 text, booleans
 * are integer 0/1.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { openSqlite, type SqliteDatabase, type SqliteStatement } from './sqlite';
import { SqliteCheckpoints } from './sqlite-checkpoints';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type { DatabaseIntrospector, Driver, LogConfig, SchemaMetadata, SqliteDialectConfig, TableMetadata } from 'kysely';
import { Pool } from 'pg';
import type { Database } from './tables';

export type DatabaseConfig =
  | { kind: 'sqlite'; file: string }
  | { kind: 'postgres'; url: string; schema?: string };

export type * from './tables';

const SQLITE_BUSY_TIMEOUT_MS = 5_000;
/** SQLite's default: a commit that takes the write-ahead log past this many pages checkpoints it. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1_000;

// The schema name is spliced into DDL (identifiers cannot be bound), so only plain names pass.
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** PostgreSQL's codes for a schema created by a concurrent session between our check and create. */
const PG_ALREADY_EXISTS_CODES = new Set(['42P06', '23505']);

/** `log`: Kysely's query log (tests that check which statements a store runs). */
export function createDb(config: DatabaseConfig, log?: LogConfig): Kysely<Database> {
  return config.kind === 'sqlite' ? createSqliteDb(config.file, log) : createPostgresDb(config.url, config.schema, log);
}

/** Registries whose log a thread checkpoints (while it is well), by their query builder. */
const threadCheckpointed = new WeakMap<Kysely<Database>, () => boolean>();

/**
 * Whether a thread checkpoints this registry's write-ahead log, and so syncs it, within
 * CHECKPOINT_EVERY_MS of each statement (sqlite-checkpoints.ts): a file registry's, until that
 * thread fails. Not a PostgreSQL registry nor an in-memory one.
 */
export function checkpointedOffThread(db: Kysely<Database>): boolean {
  return threadCheckpointed.get(db)?.() ?? false;
}

/** The file of a registry in a SQLite file; undefined for PostgreSQL and for an in-memory SQLite database. */
export function sqliteFileOf(config: DatabaseConfig): string | undefined {
  return config.kind === 'sqlite' && onDisk(config.file) ? config.file : undefined;
}

function onDisk(file: string): boolean {
  return file !== ':memory:' && !file.startsWith('file:');
}

function createSqliteDb(file: string, log: LogConfig | undefined): Kysely<Database> {
  let checkpoints: SqliteCheckpoints | undefined;
  const dialect = new ClosingFirstSqliteDialect(async () => checkpoints?.close(), {
    // Opened lazily so that constructing the registry does no IO; errors surface on the first query.
    database: async () => {
      const inFile = onDisk(file);
      if (inFile) mkdirSync(dirname(file), { recursive: true });
      const db = openSqlite(file);
      // First, so that every statement after it (the journal mode's included) waits for a lock
      // another connection holds (a second flowgate process on the file) instead of failing.
      db.exec(`pragma busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
      // WAL lets readers in other processes (CLI, a second worker) proceed while we write.
      db.exec('pragma journal_mode = WAL');
      // Every commit reaches the disk before it returns (SQLite's default, said here because the
      // audit trail's tool-call records relax it for their own commits: audit-records.ts).
      db.exec('pragma synchronous = FULL');
      // SQLite ignores REFERENCES clauses unless this is set on each connection.
      db.exec('pragma foreign_keys = ON');
      if (!inFile) return keepingStatements(db);
      // Checkpoints run on a thread of their own (sqlite-checkpoints.ts), not in this connection's
      // commits, where each held the event loop for milliseconds.
      db.exec('pragma wal_autocheckpoint = 0');
      // A failure is reported only while the thread is open, and the driver closes it before this
      // connection (ClosingFirstSqliteDialect): the connection is open then.
      checkpoints = new SqliteCheckpoints(file, () => {
        try {
          // the thread failed: SQLite's own checkpoints again, in this connection's commits
          db.exec(`pragma wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
        } catch {
          // nothing more to do: the connection keeps the setting it had
        }
      });
      return keepingStatements(db, () => checkpoints?.written());
    },
  });
  const kysely = new Kysely<Database>({ dialect, log });
  threadCheckpointed.set(kysely, () => checkpoints?.healthy ?? false);
  return kysely;
}

/**
 * Kysely's SQLite dialect, its driver's destroy() first awaiting `closeFirst` (the checkpoint
 * thread's end): the registry's connection then closes as the file's last one, and checkpoints the
 * log as it does so, before destroy() resolves. A registry opened again on the file at once (a
 * restart in the same process) found the thread's connection closing and failed "database is
 * locked".
 */
class ClosingFirstSqliteDialect extends SqliteDialect {
  constructor(private readonly closeFirst: () => Promise<void>, config: SqliteDialectConfig) {
    super(config);
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    const destroy = driver.destroy.bind(driver);
    driver.destroy = async () => {
      await this.closeFirst();
      await destroy();
    };
    return driver;
  }
}

/** How many prepared statements one SQLite connection keeps (the registry's queries are a few dozen shapes). */
const KEPT_STATEMENTS = 500;

/**
 * The connection as kysely sees it, with prepared statements kept by their SQL: kysely prepares
 * every query anew, which costs more than running a small one (a trigger call's lookups, a tool
 * call's server lookup). A statement is reusable once its run returned: kysely runs them with
 * all() or run(), which finish at once (the registry never streams a query). `ran`: called after each.
 */
function keepingStatements(db: SqliteDatabase, ran?: () => void): Pick<SqliteDatabase, 'close' | 'prepare'> {
  const statements = new Map<string, ReturnType<SqliteDatabase['prepare']>>();
  return {
    close: () => db.close(),
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = ran ? announcing(db.prepare(sql), ran) : db.prepare(sql);
        if (statements.size >= KEPT_STATEMENTS) statements.delete(statements.keys().next().value!);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

/** The statement, calling `ran` after each of its runs. */
function announcing(statement: SqliteStatement, ran: () => void): SqliteStatement {
  return {
    reader: statement.reader,
    all(parameters) {
      const rows = statement.all(parameters);
      ran();
      return rows;
    },
    run(parameters) {
      const result = statement.run(parameters);
      ran();
      return result;
    },
    iterate: (parameters) => statement.iterate(parameters),
  };
}

function createPostgresDb(url: string, schema: string | undefined, log: LogConfig | undefined): Kysely<Database> {
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new Error(`invalid PostgreSQL schema name: ${JSON.stringify(schema)}`);
  }
  const dialect = new SchemaScopedPostgresDialect({
    pool: new Pool({ connectionString: url }),
    // search_path is per session, so every pooled connection must be pointed at the schema.
    onCreateConnection: schema === undefined ? undefined : async (connection) => {
      try {
        await connection.executeQuery(CompiledQuery.raw(`create schema if not exists "${schema}"`));
      } catch (error) {
        if (!PG_ALREADY_EXISTS_CODES.has(dbErrorCode(error) ?? '')) throw error;
      }
      await connection.executeQuery(CompiledQuery.raw(`set search_path to "${schema}"`));
    },
  });
  return new Kysely<Database>({ dialect, log });
}

/**
 * Kysely's PostgreSQL dialect with the table listing limited to the session's own schema. The
 * Migrator asks which tables exist before every run, and the stock introspector lists every
 * schema's columns and names each table through pg_get_serial_sequence(): a schema that another
 * session drops meanwhile (a second flowgate's, an operator's cleanup, the test suite's) is still in
 * that query's snapshot but no longer resolves by name, and opening the registry failed with
 * "schema ... does not exist". It is also slow in a database of many schemas. The Migrator needs
 * only the names of the tables in its schema, so that is all this lists (without columns).
 */
class SchemaScopedPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    const stock = super.createIntrospector(db);
    return {
      getSchemas: (): Promise<SchemaMetadata[]> => stock.getSchemas(),
      async getTables(): Promise<TableMetadata[]> {
        const { rows } = await sql<{ name: string; schema: string; kind: string }>`
          select c.relname as name, ns.nspname as schema, c.relkind as kind
          from pg_catalog.pg_class c join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
          where ns.nspname = current_schema() and c.relkind in ('r', 'p', 'v', 'm', 'f')`.execute(db);
        return rows.map((row) => ({
          name: row.name,
          schema: row.schema,
          isView: row.kind === 'v' || row.kind === 'm',
          isForeign: row.kind === 'f',
          columns: [],
        }));
      },
    };
  }
}

/** The SQLSTATE of a pg error or the result code of a SQLite one (sqlite.ts); undefined for anything else. */
export function dbErrorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') {
    return error.code;
  }
  return undefined;
}
