/**
 * Whether the embedded dev server may start with fairness on (docs/operations.md, "Fairness across
 * organizations"). Temporal 1.29 keeps a task queue's backlog in the `tasks` table without
 * fairness and in `tasks_v2` with it, and reads only the table its setting names: tasks a server
 * without fairness left queued are never dispatched by one with it, and the runs they belong to
 * would wait for ever. A database made before flowgate turned fairness on may hold such tasks (a
 * backlog at the moment it stopped), so its server starts once more without fairness, which
 * dispatches them; the next start finds none and turns fairness on.
 *
 * A task is still queued when its ID is above its queue's ack level (Temporal deletes the rows
 * below it in batches, so finished tasks may linger). Both are read from the SQLite file before the
 * server starts. Temporal writes a queue's ack level every minute and, by default, not when the dev
 * server stops, so a server that defers fairness writes it every few seconds
 * (temporal/dev-server.ts); an ack level not yet written counts a finished task as queued, which
 * only delays fairness by one more start.
 */
import { promises as fs } from 'node:fs';
import { openSqlite } from '../src/registry/sqlite';

/** TaskQueueInfo (temporal.server.api.persistence.v1): field 4 kind (1 normal, 2 sticky), field 5 ack_level. */
const KIND_FIELD = 4;
const ACK_LEVEL_FIELD = 5;
const KIND_STICKY = 2;

/** The top-level varint fields of a protobuf message (others are skipped). */
export function varintFields(message: Uint8Array): Map<number, bigint> {
  const fields = new Map<number, bigint>();
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at >= message.length) throw new Error('truncated varint');
      const byte = message[at++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (at < message.length) {
    const tag = Number(varint());
    const field = tag >>> 3;
    switch (tag & 7) {
      case 0: fields.set(field, varint()); break;
      case 1: at += 8; break;
      case 2: {
        const length = Number(varint()); // read before `at +=` takes `at`
        at += length;
        break;
      }
      case 5: at += 4; break;
      default: throw new Error(`unsupported wire type ${tag & 7}`);
    }
  }
  return fields;
}

/**
 * How many tasks of non-sticky queues the pre-fairness table of the dev server database `dbFile`
 * still holds above their queue's ack level; 0 for a file that does not exist yet.
 */
export async function queuedLegacyTasks(dbFile: string): Promise<number> {
  if (!(await fs.stat(dbFile).catch(() => undefined))) return 0;
  const db = openSqlite(dbFile, { readOnly: true });
  try {
    const tables = db.prepare("select name from sqlite_master where type = 'table' and name in ('tasks', 'task_queues')").all();
    if (tables.length < 2) return 0;
    const queues = db.prepare('select range_hash, task_queue_id, data from task_queues').all();
    const count = db.prepare('select count(*) as n from tasks where range_hash = ? and task_queue_id = ? and task_id > ?');
    let queued = 0;
    for (const queue of queues) {
      const info = varintFields(queue.data as Uint8Array);
      if (info.get(KIND_FIELD) === BigInt(KIND_STICKY)) continue;
      const ackLevel = info.get(ACK_LEVEL_FIELD) ?? 0n;
      const [row] = count.all([queue.range_hash, queue.task_queue_id, ackLevel]);
      queued += Number(row?.n ?? 0);
    }
    return queued;
  } finally {
    db.close();
  }
}
