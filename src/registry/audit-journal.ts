/**
 * The audit trail's journal of tool-call records, for a registry in a SQLite file (docs/audit.md,
 * "Durability and failures"). A tool call's record is appended here, one JSON line, with one
 * write() before the call is answered: written to the operating system, it survives a crash of
 * flowgate as a committed SQLite row does. The store (audit-records.ts) inserts the journaled
 * records into the table in groups within INGEST_EVERY_MS, then removes the file they were in; a
 * start finds the files a crashed process left and inserts their records (`insert or ignore`:
 * a record inserted twice is there once).
 *
 * Measured in bench:compare's one-caller proxy row: a SQLite commit per tool call cost about
 * 0.25 ms of the call's latency (its own 0.13 ms plus the rest of the path run slower after it),
 * one write() about 10 µs.
 *
 * One file per turn of insertion (`<pid>-<tag>-<n>.jsonl`), so a file is never written and
 * removed at once. A line cut short by a crash is skipped.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { errorCode } from '../common/narrow';

/** A record's column values, in the order of the audit table's insert (audit-records.ts). */
export type JournalRow = (string | number | null)[];

/** Journal files a store of this process has open: not another's to take, though its process lives. */
const openHere = new Set<string>();

const FILE_NAME = /^(\d+)-[0-9a-z]+-\d+\.jsonl$/;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it lives, as another user's
    return errorCode(error) === 'EPERM';
  }
}

export class AuditJournal {
  private fd: number | undefined;
  private file: string | undefined;
  private count = 0;
  private readonly tag = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;

  constructor(readonly dir: string) {}

  /** Appends a row as one line of the current file; throws when it cannot (the row is then not in the journal). */
  write(values: JournalRow): void {
    const line = Buffer.from(`${JSON.stringify(values)}\n`);
    if (this.fd === undefined) this.openNext();
    try {
      let written = 0;
      while (written < line.length) written += writeSync(this.fd!, line, written);
    } catch (error) {
      // a part of the line may be in the file: later lines go to another one, so this one alone is cut short
      this.end();
      throw error;
    }
  }

  /**
   * Ends the current file and answers its path (undefined when there is none): what it holds is
   * the caller's to insert, then remove(). Rows written after this go to a new file.
   */
  rotate(): string | undefined {
    return this.end();
  }

  /** Removes a file whose rows are in the table; one that cannot be removed is inserted again (and ignored) by the next start. */
  remove(file: string): void {
    try {
      unlinkSync(file);
    } catch {
      // gone already (another store took it), or left for the next start
    }
  }

  /**
   * Files left by processes that are gone, or by a store of this process that did not close: their
   * paths and rows (lines cut short skipped). A live process's files are its own to insert.
   */
  orphans(): { file: string; rows: JournalRow[] }[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return [];
      throw error;
    }
    const found: { file: string; rows: JournalRow[] }[] = [];
    for (const name of names.sort()) {
      const pid = Number(FILE_NAME.exec(name)?.[1]);
      const file = path.join(this.dir, name);
      if (!Number.isInteger(pid) || openHere.has(file) || (pid !== process.pid && processAlive(pid))) continue;
      found.push({ file, rows: rowsOf(readFileSync(file, 'utf8')) });
    }
    return found;
  }

  private openNext(): void {
    mkdirSync(this.dir, { recursive: true });
    const file = path.join(this.dir, `${process.pid}-${this.tag}-${++this.count}.jsonl`);
    this.fd = openSync(file, 'a');
    this.file = file;
    openHere.add(file);
  }

  private end(): string | undefined {
    const { fd, file } = this;
    this.fd = undefined;
    this.file = undefined;
    if (file !== undefined) openHere.delete(file);
    if (fd !== undefined) closeSync(fd);
    return file;
  }
}

function isJournalRow(values: unknown): values is JournalRow {
  return Array.isArray(values) && values.every((v) => v === null || typeof v === 'string' || typeof v === 'number');
}

/** A journal file's rows: each line an array of column values; a line cut short (or otherwise unreadable) is skipped. */
function rowsOf(text: string): JournalRow[] {
  const rows: JournalRow[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      const values: unknown = JSON.parse(line);
      if (isJournalRow(values)) rows.push(values);
    } catch {
      // cut short by a crash
    }
  }
  return rows;
}
