/**
 * The registry's checkpoint thread (sqlite-checkpoints.ts owns it): its own connection to the
 * registry's SQLite file, and on each request a passive checkpoint, which copies the write-ahead
 * log's committed pages into the database file and syncs both. On the event loop's connection that
 * copy and its two fsyncs blocked every request of the process for 3 to 8 ms, several times a
 * second under a stream of tool calls (SQLite checkpoints inside the commit that takes the log past
 * 1,000 pages). A passive checkpoint never waits for a lock and never blocks a writer.
 */
import { existsSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { fieldOf } from '../common/narrow';
import { openSqlite, type SqliteDatabase } from './sqlite';

/** The thread's `workerData` tag, so that importing this file elsewhere never starts listening. */
export const CHECKPOINT_THREAD = 'flowgate-sqlite-checkpoints';

export interface CheckpointThreadData {
  tag: typeof CHECKPOINT_THREAD;
  file: string;
}

export type CheckpointRequest = 'checkpoint' | 'close';

/** `checkpointed` also when a reader kept it from copying every frame: the next one goes on from there. */
export type CheckpointAnswer = { kind: 'checkpointed' } | { kind: 'failed'; reason: string };

function isThreadData(data: unknown): data is CheckpointThreadData {
  return fieldOf(data, 'tag') === CHECKPOINT_THREAD && typeof fieldOf(data, 'file') === 'string';
}

function serve(port: NonNullable<typeof parentPort>, file: string): void {
  let db: SqliteDatabase | undefined;
  const checkpoint = (): CheckpointAnswer => {
    // opening creates a missing file: a registry whose file is gone has nothing to checkpoint
    if (!db && !existsSync(file)) return { kind: 'failed', reason: `the registry file ${file} is gone` };
    if (!db) {
      db = openSqlite(file);
      // a checkpoint syncs the log before copying it, whatever the connection that wrote it relaxed
      db.exec('pragma synchronous = FULL');
    }
    db.exec('pragma wal_checkpoint(PASSIVE)');
    return { kind: 'checkpointed' };
  };
  port.on('message', (request: CheckpointRequest) => {
    if (request === 'close') {
      db?.close();
      db = undefined;
      port.close();
      return;
    }
    let answer: CheckpointAnswer;
    try {
      answer = checkpoint();
    } catch (error) {
      answer = { kind: 'failed', reason: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(answer);
  });
}

if (parentPort && isThreadData(workerData)) serve(parentPort, workerData.file);
