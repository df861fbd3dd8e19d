/**
 * What a SQLite database's write-ahead log holds, read from its wal-index (the `-shm` file, in
 * the layout SQLite documents in "WAL-mode File Format", walformat.html): `frames`, the last valid
 * frame of the log (mxFrame, offset 16 of the header); `backfilled`, how many of them a checkpoint
 * has copied into the database (nBackfill, offset 96). Both are in the machine's byte order.
 */
import { readFileSync } from 'node:fs';
import { endianness } from 'node:os';

export function walIndex(databaseFile: string): { frames: number; backfilled: number } {
  const index = readFileSync(`${databaseFile}-shm`);
  const read = (offset: number): number => (endianness() === 'LE' ? index.readUInt32LE(offset) : index.readUInt32BE(offset));
  return { frames: read(16), backfilled: read(96) };
}
