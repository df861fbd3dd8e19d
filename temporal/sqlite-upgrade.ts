/**
 * Brings an embedded Temporal's SQLite database up to the schema of the server that is about to
 * open it. The server creates the schema of a new file itself (`setup`), but never changes an
 * existing one, and a SQLite database carries no schema version: a file the Temporal CLI's dev
 * server (Temporal 1.29, what flowgate embedded before) wrote lacks a table of Temporal 1.32
 * (`current_chasm_executions`) and the visibility columns added since. So the file is compared
 * with the new schema, made once in memory from the server's own schema files:
 * - a table the file lacks is created, with its indexes (nothing else changes in the main schema);
 * - a visibility table whose columns differ is rebuilt: its triggers, full-text tables and indexes
 *   are dropped, the new ones made, and every row copied over by the columns both have (the
 *   generated ones are computed again from the search attributes the rows carry).
 * All of it in one transaction, before the server starts; a file already current is not written.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/** The visibility table: rebuilt as a whole when its columns change. */
const VISIBILITY = 'executions_visibility';

interface SchemaObject {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

export interface UpgradeResult {
  /** tables created */
  created: string[];
  /** whether the visibility table was rebuilt, and how many rows it carried over */
  visibilityRows?: number;
}

function open(file: string): DatabaseSync {
  // Temporal's schema writes JSON paths as double-quoted strings, which SQLite reads as literals only when told to
  return new DatabaseSync(file, { enableDoubleQuotedStringLiterals: true });
}

function objects(db: DatabaseSync): SchemaObject[] {
  const rows = db.prepare('select type, name, tbl_name, sql from sqlite_master').all();
  return rows.map((row) => ({
    type: String(row.type), name: String(row.name), tbl_name: String(row.tbl_name), sql: typeof row.sql === 'string' ? row.sql : null,
  }));
}

/** The names of a table's stored columns (generated ones excluded: they are computed, not copied). */
function storedColumns(db: DatabaseSync, table: string): string[] {
  // table_xinfo's `hidden`: 0 an ordinary column, 2 and 3 generated ones
  return db.prepare(`pragma table_xinfo(${quote(table)})`).all().filter((c) => Number(c.hidden) === 0).map((c) => String(c.name));
}

function allColumns(db: DatabaseSync, table: string): string[] {
  return db.prepare(`pragma table_xinfo(${quote(table)})`).all().map((c) => String(c.name));
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * A full-text table's shadow tables (`<name>_data`, `_idx`, …) come and go with it: never made or
 * dropped on their own.
 */
function isShadow(object: SchemaObject, all: SchemaObject[]): boolean {
  return object.type === 'table' && all.some((o) => o.sql?.startsWith('CREATE VIRTUAL TABLE') && o.name !== object.name && object.name.startsWith(`${o.name}_`));
}

/** Upgrades `dbFile` in place to the schema in `schemaDir` (`v3/temporal/schema.sql`, `v3/visibility/schema.sql`). */
export async function upgradeSqliteSchema(dbFile: string, schemaDir: string): Promise<UpgradeResult> {
  const script = (await Promise.all(['temporal', 'visibility'].map((part) => fs.readFile(path.join(schemaDir, 'v3', part, 'schema.sql'), 'utf8')))).join('\n;\n');
  const wanted = open(':memory:');
  try {
    wanted.exec(script);
    const db = open(dbFile);
    try {
      return upgrade(db, wanted);
    } finally {
      db.close();
    }
  } finally {
    wanted.close();
  }
}

function upgrade(db: DatabaseSync, wanted: DatabaseSync): UpgradeResult {
  const have = objects(db);
  const want = objects(wanted);
  const haveTable = new Set(have.filter((o) => o.type === 'table').map((o) => o.name));
  if (!haveTable.has(VISIBILITY) && !haveTable.has('executions')) return { created: [] }; // not a Temporal database yet: the server sets it up
  const missing = want.filter((o) => o.type === 'table' && !haveTable.has(o.name) && !isShadow(o, want) && o.tbl_name !== VISIBILITY && !o.name.startsWith(`${VISIBILITY}_`));
  const visibilityChanged = haveTable.has(VISIBILITY) && allColumns(db, VISIBILITY).join(',') !== allColumns(wanted, VISIBILITY).join(',');
  if (missing.length === 0 && !visibilityChanged) return { created: [] };

  const result: UpgradeResult = { created: missing.map((o) => o.name) };
  db.exec('begin immediate');
  try {
    for (const table of missing) {
      db.exec(table.sql ?? '');
      for (const index of want.filter((o) => o.type === 'index' && o.tbl_name === table.name && o.sql)) db.exec(index.sql ?? '');
    }
    if (visibilityChanged) result.visibilityRows = rebuildVisibility(db, have, wanted, want);
    db.exec('commit');
  } catch (err) {
    db.exec('rollback');
    throw new Error(`upgrading the Temporal database's schema failed (nothing was changed): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return result;
}

/** Everything that belongs to the visibility table: the table, its indexes, triggers and full-text tables (and their shadows). */
function visibilityObjects(all: SchemaObject[]): SchemaObject[] {
  return all.filter((o) => o.tbl_name === VISIBILITY || o.name.startsWith(`${VISIBILITY}_`));
}

function rebuildVisibility(db: DatabaseSync, have: SchemaObject[], wanted: DatabaseSync, want: SchemaObject[]): number {
  const old = visibilityObjects(have);
  const carried = storedColumns(wanted, VISIBILITY).filter((c) => new Set(storedColumns(db, VISIBILITY)).has(c));
  const kept = `${VISIBILITY}_before_upgrade`;
  // triggers and full-text tables first (they point at the table), then the indexes, whose names
  // the new ones take; the table itself is renamed and read from below
  for (const o of old.filter((x) => x.type === 'trigger')) db.exec(`drop trigger ${quote(o.name)}`);
  for (const o of old.filter((x) => x.sql?.startsWith('CREATE VIRTUAL TABLE'))) db.exec(`drop table ${quote(o.name)}`);
  for (const o of old.filter((x) => x.type === 'index' && x.sql)) db.exec(`drop index ${quote(o.name)}`);
  db.exec(`alter table ${quote(VISIBILITY)} rename to ${quote(kept)}`);
  const fresh = visibilityObjects(want).filter((o) => o.sql && !isShadow(o, want));
  const order = ['table', 'index', 'trigger'];
  fresh.sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type));
  for (const o of fresh) db.exec(o.sql ?? '');
  const columns = carried.map(quote).join(', ');
  const copied = db.prepare(`insert into ${quote(VISIBILITY)} (${columns}) select ${columns} from ${quote(kept)}`).run();
  db.exec(`drop table ${quote(kept)}`);
  return Number(copied.changes);
}
