/**
 * Definitions as code (issue 53, docs/definitions-as-code.md): what the last apply wrote of each
 * object of an organization, as a hash of its declarative form. A plan compares the live object's
 * hash with it: a difference is drift (the object was changed outside the folder since).
 */
import type { Kysely } from 'kysely';
import type { Database } from './db';

export interface AppliedDefinitionRecord {
  kind: string;
  name: string;
  hash: string;
  source: string | null;
  sourceCommit: string | null;
  appliedAt: string;
}

export class AppliedDefinitionStore {
  constructor(private readonly db: Kysely<Database>) {}

  async list(orgId: string): Promise<AppliedDefinitionRecord[]> {
    const rows = await this.db.selectFrom('applied_definitions').selectAll().where('org_id', '=', orgId).orderBy('kind').orderBy('name').execute();
    return rows.map((r) => ({ kind: r.kind, name: r.name, hash: r.hash, source: r.source, sourceCommit: r.source_commit, appliedAt: r.applied_at }));
  }

  /** Records what an apply wrote (each object replaces its earlier record) and forgets the deleted ones, in one transaction. */
  async record(orgId: string, written: readonly Omit<AppliedDefinitionRecord, 'appliedAt'>[], deleted: readonly { kind: string; name: string }[]): Promise<void> {
    const now = new Date().toISOString();
    await this.db.transaction().execute(async (trx) => {
      for (const gone of [...deleted, ...written]) {
        await trx.deleteFrom('applied_definitions').where('org_id', '=', orgId).where('kind', '=', gone.kind).where('name', '=', gone.name).execute();
      }
      for (const w of written) {
        await trx.insertInto('applied_definitions').values({
          org_id: orgId, kind: w.kind, name: w.name, hash: w.hash, source: w.source, source_commit: w.sourceCommit, applied_at: now,
        }).execute();
      }
    });
  }
}
