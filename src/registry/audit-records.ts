/**
 * The audit trail's rows (docs/audit.md): appended, read newest first per organization, and
 * deleted only by the retention sweep. Nothing here updates a row. IDs sort in the order the
 * records were made (auditId below), so "newest first" and the paging cursor are one column.
 *
 * Appends are committed in groups: the records appended while the event loop is busy (every
 * concurrent tool call that ended in one turn) go in one insert, one commit, and each append
 * resolves once its record is committed. A synced SQLite commit costs nearly a millisecond of a
 * blocked event loop on a slow disk, a PostgreSQL one a round trip; 50 concurrent calls paid 50
 * of them. One appender at a time answers after one commit, as before.
 *
 * A tool call's record on a registry in a SQLite file is journaled instead (audit-journal.ts): one
 * write() before the answer, inserted into the table in groups within INGEST_EVERY_MS.
 *
 * One piece: the grouped commits, the journal's insertion and the reads share one row format and
 * one insert, and each read first inserts what the journal holds.
 */
import { randomBytes } from 'node:crypto';
import { CompiledQuery, PostgresAdapter, sql, type Kysely } from 'kysely';
import { AuditJournal, type JournalRow } from './audit-journal';
import { checkpointedOffThread, type Database } from './db';
import type { AuditOutcome } from './tables';
import { fromJson } from './store-support';

export type { AuditOutcome };

export interface AuditRecord {
  id: string;
  orgId: string;
  /** ISO 8601 UTC */
  at: string;
  /** who: `admin`, `instance-admin`, `api-key:<id>`, `approver:<name>` */
  actor: string;
  /** the API key's name, when the actor is one */
  actorName: string | null;
  /** which credential: `admin_token`, `api_key`, `runtime_token`, `approval_link`, `console_session`, `oauth_token` */
  credentialKind: string;
  /** its id (an API key's id; a fingerprint of an admin token or a link), never the secret */
  credentialId: string;
  /** dotted, stable: `workflow.published`, `api_key.revoked`, `tool.called` … (src/audit/actions.ts) */
  action: string;
  targetType: string | null;
  targetId: string | null;
  outcome: AuditOutcome;
  /** the HTTP status the caller was answered */
  status: number;
  sourceIp: string | null;
  userAgent: string | null;
  requestId: string | null;
  /** small, secret-free facts of the action (a tool call's server, tool, argument digest, duration) */
  details: Record<string, unknown>;
}

export type NewAuditRecord = Omit<AuditRecord, 'id' | 'at'> & { at?: string };

export interface AuditFilter {
  /** an exact action, or a prefix ending in `.` or `*` (`api_key.`, `api_key.*`) */
  action?: string;
  /** an actor (`member:<id>`, `api-key:<id>`, `admin` …), or an e-mail address: the member or approver who has it */
  actor?: string;
  /** `<type>:<id>` or `<type>` */
  target?: string;
  outcome?: AuditOutcome;
  /** ISO 8601, inclusive */
  since?: string;
  /** ISO 8601, exclusive */
  until?: string;
  /** the last id of the previous page: records older than it */
  cursor?: string;
}

let lastMs = 0;
let sequence = 0;
const processTag = randomBytes(3).toString('hex');
/** Random bytes for ids, drawn a few thousand at a time: one small randomBytes() per record cost ~12 µs. */
const RANDOM_POOL_BYTES = 3 * 1024;
let randomPool = Buffer.alloc(0);
let randomOffset = 0;

function threeRandomBytesHex(): string {
  if (randomOffset + 3 > randomPool.length) {
    randomPool = randomBytes(RANDOM_POOL_BYTES);
    randomOffset = 0;
  }
  randomOffset += 3;
  return randomPool.toString('hex', randomOffset - 3, randomOffset);
}

/**
 * `aud_` + the time in ms (12 hex digits) + a per-process sequence (4) + this process's tag (6) +
 * random (6): lowercase hex, one length, so text order is creation order (within a millisecond,
 * per process) on SQLite and PostgreSQL alike, whatever the collation.
 */
export function auditId(now = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    sequence = 0;
  } else {
    sequence = (sequence + 1) & 0xffff;
    if (sequence === 0) lastMs++;
  }
  return `aud_${lastMs.toString(16).padStart(12, '0')}${sequence.toString(16).padStart(4, '0')}${processTag}${threeRandomBytesHex()}`;
}

/** The most records one insert carries (16 parameters each: well under SQLite's and PostgreSQL's limits). */
const MAX_GROUP = 500;

/**
 * How a record waits for the disk. `synced` (every record but tool calls): its commit is flushed
 * to disk before append() resolves. `committed` (tool calls, one per call on the data plane): its
 * commit is written and visible before append() resolves, so a crash of flowgate loses nothing,
 * but the flush to disk follows within FLUSH_WITHIN_MS: a crash of the machine itself (power,
 * kernel) can lose the records of that last interval. SQLite: the commit runs with `synchronous =
 * NORMAL` on the registry's one connection (set back to FULL at once) and a checkpoint flushes it
 * (a file registry's checkpoint thread within CHECKPOINT_EVERY_MS, else this store's own);
 * PostgreSQL: `synchronous_commit = off` for that transaction, flushed by its WAL writer (within
 * three `wal_writer_delay`s, 600 ms by default).
 */
export type AuditDurability = 'synced' | 'committed';

/** The longest a `committed` record waits before flowgate asks SQLite to flush it (a checkpoint). */
export const FLUSH_WITHIN_MS = 1_000;

/** A registry in a SQLite file: the longest a journaled record waits before it is inserted into the table (audit-journal.ts). */
export const INGEST_EVERY_MS = 100;

/**
 * The most journaled records kept waiting for the table (a registry that cannot be written keeps
 * them waiting): past it a record is committed to the table as if there were no journal, and so
 * fails, and is logged, while the registry does.
 */
export const MAX_JOURNALED = 10_000;

interface PendingAppend {
  durability: AuditDurability;
  record: AuditRecord;
  resolve(record: AuditRecord): void;
  reject(error: unknown): void;
}

/** The columns of an insert, in the order row() gives their values. */
const COLUMNS = ['id', 'org_id', 'at', 'actor', 'actor_name', 'credential_kind', 'credential_id', 'action', 'target_type', 'target_id', 'outcome', 'status', 'source_ip', 'user_agent', 'request_id', 'details'] as const;

type RowValues = JournalRow;

/** The columns a record must have (NOT NULL), checked before a record is journaled: the table would refuse it later, alone. */
const REQUIRED: readonly (keyof AuditRecord)[] = ['id', 'orgId', 'at', 'actor', 'credentialKind', 'credentialId', 'action', 'outcome', 'status', 'details'];

/** A record's values in COLUMNS order (details as JSON: this throws for what JSON cannot encode). */
function row(full: AuditRecord): RowValues {
  return [
    full.id, full.orgId, full.at, full.actor, full.actorName, full.credentialKind, full.credentialId, full.action,
    full.targetType, full.targetId, full.outcome, full.status, full.sourceIp, full.userAgent, full.requestId, JSON.stringify(full.details),
  ];
}

/** A record's values for the journal, refused (as the table would refuse it) when a column that must have a value has none. */
function journalable(full: AuditRecord): RowValues {
  for (const field of REQUIRED) {
    if (full[field] === null || full[field] === undefined) throw new Error(`an audit record needs ${field}`);
  }
  return row(full);
}

/** SQLite's answers that say nothing of the rows: a busy or closed registry. */
function isBusyOrClosed(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  return code.startsWith('SQLITE_BUSY') || code === 'SQLITE_MISUSE' || (error instanceof Error && /closed|destroy/i.test(error.message));
}

/**
 * The SQL of an insert of `count` records, made once per count and dialect: an audit record is
 * appended on every tool call, and building the statement through the query builder cost more
 * than SQLite's own insert (about 120 of 220 µs).
 */
const insertSqls = new Map<string, string>();
/** Group sizes whose SQL is kept (larger groups are rare: the SQL is made for each). */
const KEPT_INSERT_SIZES = 32;
function insertSql(count: number, postgres: boolean, orIgnore = false): string {
  const key = `${postgres ? 'pg' : 'sqlite'}:${orIgnore ? 'ignore:' : ''}${count}`;
  let text = insertSqls.get(key);
  if (text === undefined) {
    let n = 0;
    const tuple = (): string => `(${COLUMNS.map(() => (postgres ? `$${++n}` : '?')).join(', ')})`;
    // `or ignore` (SQLite, journaled records): one inserted again after a crash is there once
    text = `insert ${orIgnore ? 'or ignore ' : ''}into audit_records (${COLUMNS.join(', ')}) values ${Array.from({ length: count }, tuple).join(', ')}`;
    if (count <= KEPT_INSERT_SIZES) insertSqls.set(key, text);
  }
  return text;
}

const RELAXED_SQLITE = CompiledQuery.raw('pragma synchronous = NORMAL');
const SYNCED_SQLITE = CompiledQuery.raw('pragma synchronous = FULL');
const RELAXED_POSTGRES = CompiledQuery.raw('set local synchronous_commit = off');

export class AuditStore {
  /** appended, waiting for the next group's insert */
  private pending: PendingAppend[] = [];
  /** a group's insert is scheduled or running: appends until it ends wait for the next */
  private writing = false;
  private readonly postgres: boolean;
  /** SQLite: a checkpoint is due for records committed without a flush */
  private flushTimer: NodeJS.Timeout | undefined;
  /** a file registry's journal of `committed` records (audit-journal.ts) */
  private readonly journal: AuditJournal | undefined;
  /** journaled, not yet in the table */
  private journaled: RowValues[] = [];
  /** journal files whose rows are (being) inserted: removed once they are in */
  private journalFiles: string[] = [];
  private ingestTimer: NodeJS.Timeout | undefined;
  private ingesting: Promise<void> | undefined;
  private closed = false;

  /**
   * Told of a journaled record the table refused on its own when it went in (REQUIRED keeps those
   * out of the journal, so a damaged registry, say): the record is dropped, and the trail logs it.
   */
  onUnwritten: ((error: unknown) => void) | undefined;

  /** `journalDir`: a SQLite file registry's journal directory (openRegistry gives one); tool-call records are journaled there. */
  constructor(private readonly db: Kysely<Database>, journalDir?: string) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    this.journal = journalDir !== undefined && !this.postgres ? new AuditJournal(journalDir) : undefined;
  }

  /**
   * Resolves once the record is committed (with others appended in the same turn), and for a
   * `synced` one (the default) flushed to disk; see AuditDurability. A `committed` record of a
   * file registry resolves once it is in the journal, which survives a crash of flowgate as a
   * commit does; it is in the table within INGEST_EVERY_MS, and list() reads it at once.
   */
  append(record: NewAuditRecord, durability: AuditDurability = 'synced'): Promise<AuditRecord> {
    const at = record.at ?? new Date().toISOString();
    const full: AuditRecord = { ...record, id: auditId(Date.parse(at)), at };
    if (durability === 'committed' && this.journal && this.journaled.length < MAX_JOURNALED) {
      let values: RowValues;
      try {
        values = journalable(full);
      } catch (error) {
        return Promise.reject(error);
      }
      try {
        this.journal.write(values);
        this.journaled.push(values);
        this.ingestSoon();
        return Promise.resolve(full);
      } catch {
        // the journal cannot be written (disk full, say): the record is committed to the table instead
      }
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ durability, record: full, resolve, reject });
      if (!this.writing) {
        this.writing = true;
        // after this turn's I/O callbacks: the records they append go in the same insert
        setImmediate(() => void this.writeGroups());
      }
    });
  }

  /** Inserts the pending records a group at a time until none is left. */
  private async writeGroups(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const group: { append: PendingAppend; row: ReturnType<typeof row> }[] = [];
        for (const append of this.pending.splice(0, MAX_GROUP)) {
          try {
            group.push({ append, row: row(append.record) });
          } catch (error) {
            append.reject(error); // details JSON cannot encode
          }
        }
        if (group.length === 0) continue;
        try {
          // one record that must be on disk makes the whole group's commit a synced one
          const synced = group.some((g) => g.append.durability === 'synced');
          await this.insert(group.map((g) => g.row), synced);
          for (const { append } of group) append.resolve(append.record);
        } catch (error) {
          if (group.length === 1) group[0]?.append.reject(error);
          // one record the registry refuses does not cost the others theirs
          else await Promise.all(group.map(({ append, row: values }) => this.db.executeQuery(this.insertOf([values])).then(() => append.resolve(append.record), append.reject)));
        }
      }
    } finally {
      this.writing = false;
    }
  }

  private insertOf(rows: RowValues[], orIgnore = false): CompiledQuery {
    return CompiledQuery.raw(insertSql(rows.length, this.postgres, orIgnore), rows.flat());
  }

  /**
   * Inserts every journaled record into the table now (and waits for an insertion under way):
   * what list() does first, and what closing the registry does.
   */
  async flush(): Promise<void> {
    while (this.ingesting) await this.ingesting.catch(() => undefined);
    if (this.journaled.length === 0 && this.journalFiles.length === 0) return;
    clearTimeout(this.ingestTimer);
    this.ingestTimer = undefined;
    this.ingesting = this.ingest();
    try {
      await this.ingesting;
    } finally {
      this.ingesting = undefined;
    }
  }

  /** Inserts the records of journal files a crashed process (or an unclosed store) left, then removes the files. */
  async recover(): Promise<number> {
    let recovered = 0;
    for (const { file, rows } of this.journal?.orphans() ?? []) {
      await this.insertRows(rows);
      this.journal!.remove(file);
      recovered += rows.length;
    }
    return recovered;
  }

  /** Inserts what the journal holds and stops the insertion timer; the registry's connection closes after this. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.ingestTimer);
    this.ingestTimer = undefined;
    try {
      await this.flush();
    } catch {
      // the records stay in the journal files: the next start inserts them
    }
  }

  private ingestSoon(): void {
    // closed: a record appended since stays in the journal, which the next start inserts
    if (this.ingestTimer || this.closed) return;
    this.ingestTimer = setTimeout(() => {
      this.ingestTimer = undefined;
      this.flush().catch(() => {
        // kept, journal files and all (ingest() put them back): tried again after the next interval
        this.ingestSoon();
      });
    }, INGEST_EVERY_MS);
    // a process that ends leaves the journal, which its next start inserts
    this.ingestTimer.unref();
  }

  /** One turn of insertion: the journaled rows go in (a group at a time), then the files that held them go. */
  private async ingest(): Promise<void> {
    const rows = this.journaled;
    this.journaled = [];
    const current = this.journal?.rotate();
    if (current !== undefined) this.journalFiles.push(current);
    const files = this.journalFiles;
    this.journalFiles = [];
    try {
      await this.insertRows(rows);
    } catch (error) {
      this.journaled = rows.concat(this.journaled);
      this.journalFiles = files.concat(this.journalFiles);
      throw error;
    }
    for (const file of files) this.journal?.remove(file);
  }

  /**
   * Inserts journaled rows a group at a time (`or ignore`: one already in is skipped). A group the
   * table refuses goes in a row at a time, and a row it refuses alone is told to onUnwritten and
   * dropped (REQUIRED keeps those out of the journal). Throws, leaving the rest, when the registry
   * is busy or closed.
   */
  private async insertRows(rows: RowValues[]): Promise<void> {
    for (let i = 0; i < rows.length; i += MAX_GROUP) {
      const group = rows.slice(i, i + MAX_GROUP);
      try {
        await this.insert(group, false, true);
      } catch (error) {
        if (isBusyOrClosed(error)) throw error;
        const refused = await this.insertEach(group);
        if (refused === undefined) continue;
        if (isBusyOrClosed(refused)) throw refused;
        this.onUnwritten?.(refused);
      }
    }
  }

  /** Inserts each row of a group alone; answers the first error, if any row was refused. */
  private async insertEach(group: RowValues[]): Promise<unknown> {
    let refused: unknown;
    for (const values of group) {
      try {
        await this.insert([values], false, true);
      } catch (error) {
        refused ??= error;
      }
    }
    return refused;
  }

  /** One insert of a group, committed with or without waiting for the disk (see AuditDurability). */
  private async insert(rows: RowValues[], synced: boolean, orIgnore = false): Promise<void> {
    const insert = this.insertOf(rows, orIgnore);
    if (synced) {
      await this.db.executeQuery(insert);
      return;
    }
    if (this.postgres) {
      await this.db.transaction().execute(async (trx) => {
        await trx.executeQuery(RELAXED_POSTGRES);
        await trx.executeQuery(insert);
      });
      return;
    }
    // SQLite: the one connection, held across the three statements so that no other commit runs
    // unsynced in between; in WAL mode the next synced commit or checkpoint flushes these pages too
    await this.db.connection().execute(async (connection) => {
      await connection.executeQuery(RELAXED_SQLITE);
      try {
        await connection.executeQuery(insert);
      } finally {
        await connection.executeQuery(SYNCED_SQLITE);
      }
    });
    this.flushSoon();
  }

  /**
   * SQLite: a passive checkpoint (it syncs the write-ahead log first) within FLUSH_WITHIN_MS, unless
   * the registry's checkpoint thread makes one sooner (sqlite-checkpoints.ts): this one would run on
   * the event loop.
   */
  private flushSoon(): void {
    if (this.flushTimer || checkpointedOffThread(this.db)) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      sql`pragma wal_checkpoint(PASSIVE)`.execute(this.db).catch(() => {
        // the registry is closing, or busy: the next synced commit or checkpoint flushes instead
      });
    }, FLUSH_WITHIN_MS);
    this.flushTimer.unref();
  }

  /** Up to `limit` records of the organization, newest first (journaled ones included: they are inserted first). */
  async list(orgId: string, filter: AuditFilter, limit: number): Promise<AuditRecord[]> {
    await this.flush();
    let query = this.db.selectFrom('audit_records').selectAll().where('org_id', '=', orgId);
    if (filter.action !== undefined) {
      const prefix = filter.action.endsWith('*') ? filter.action.slice(0, -1) : filter.action.endsWith('.') ? filter.action : undefined;
      query = prefix === undefined ? query.where('action', '=', filter.action) : query.where(sql`substr(action, 1, ${sql.lit(prefix.length)})`, '=', prefix);
    }
    if (filter.actor !== undefined) {
      // An e-mail address names a person however they acted: a member (their address is the record's
      // actor name) or an approver through a link (`approver:<address>`).
      const actor = filter.actor;
      query = actor.includes('@')
        ? query.where((eb) => eb.or([eb(sql<string>`lower(actor_name)`, '=', actor.toLowerCase()), eb('actor', '=', `approver:${actor}`), eb('actor', '=', actor)]))
        : query.where('actor', '=', actor);
    }
    if (filter.target !== undefined) {
      const colon = filter.target.indexOf(':');
      query = colon === -1
        ? query.where('target_type', '=', filter.target)
        : query.where('target_type', '=', filter.target.slice(0, colon)).where('target_id', '=', filter.target.slice(colon + 1));
    }
    if (filter.outcome !== undefined) query = query.where('outcome', '=', filter.outcome);
    if (filter.since !== undefined) query = query.where('at', '>=', filter.since);
    if (filter.until !== undefined) query = query.where('at', '<', filter.until);
    if (filter.cursor !== undefined) query = query.where('id', '<', filter.cursor);
    const rows = await query.orderBy('id', 'desc').limit(limit).execute();
    return rows.map((row) => ({
      id: row.id, orgId: row.org_id, at: row.at, actor: row.actor, actorName: row.actor_name,
      credentialKind: row.credential_kind, credentialId: row.credential_id, action: row.action,
      targetType: row.target_type, targetId: row.target_id, outcome: row.outcome, status: Number(row.status),
      sourceIp: row.source_ip, userAgent: row.user_agent, requestId: row.request_id, details: fromJson<Record<string, unknown>>(row.details),
    }));
  }

  /** Deletes up to `limit` records made before `cutoff` (ISO 8601 UTC); returns how many went. */
  async removeOlderThan(cutoff: string, limit: number): Promise<number> {
    const result = await this.db.deleteFrom('audit_records')
      .where('id', 'in', (qb) => qb.selectFrom('audit_records').select('id').where('at', '<', cutoff).limit(limit))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
