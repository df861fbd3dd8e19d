/**
 * Finished runs: a closed run never changes, so the view its status and results bodies are built
 * from is written here once and read back by every gateway replica (and after a restart) without
 * asking Temporal. The body is opaque JSON to the registry; src/runs/run-views.ts owns its shape.
 */
import type { Kysely } from 'kysely';
import type { Database } from './db';
import { nowIso } from './store-support';

export interface FinishedRunRecord {
  runId: string;
  orgId: string;
  automationId: string;
  /** JSON text, as stored */
  view: string;
}

export class FinishedRunStore {
  constructor(private readonly db: Kysely<Database>) {}

  async get(runId: string): Promise<FinishedRunRecord | undefined> {
    const row = await this.db.selectFrom('finished_runs')
      .select(['run_id', 'org_id', 'automation_id', 'view'])
      .where('run_id', '=', runId)
      .executeTakeFirst();
    return row && { runId: row.run_id, orgId: row.org_id, automationId: row.automation_id, view: row.view };
  }

  /** Written once: a second writer (another replica that saw the run close too) changes nothing. */
  async put(record: FinishedRunRecord): Promise<void> {
    await this.db.insertInto('finished_runs')
      .values({ run_id: record.runId, org_id: record.orgId, automation_id: record.automationId, view: record.view, created_at: nowIso() })
      .onConflict((oc) => oc.column('run_id').doNothing())
      .execute();
  }

  /**
   * Deletes up to `limit` rows written before `cutoff` (ISO 8601 UTC, compared as text: every
   * created_at is written by nowIso in the same format). Returns how many went.
   */
  async removeOlderThan(cutoff: string, limit: number): Promise<number> {
    const result = await this.db.deleteFrom('finished_runs')
      .where('run_id', 'in', (qb) => qb.selectFrom('finished_runs').select('run_id').where('created_at', '<', cutoff).limit(limit))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
