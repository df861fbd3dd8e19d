/**
 * Workflows (an editable draft) and their immutable published versions. Each version carries a
 * step map: a step keeps its own version number across publishes while its content is unchanged.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { WorkflowDefinition } from '../common/definition';
import { newId } from '../crypto/secrets';
import { dbErrorCode, type Database, type WorkflowVersionsTable } from './db';
import { CONFLICT_CODES, fromJson, nowIso, RegistryError, withOrgCheck } from './store-support';
import { fieldOf } from '../common/narrow';

export interface WorkflowRecord {
  id: string;
  orgId: string;
  name: string;
  draft: WorkflowDefinition;
  publishedVersion: number | null;
  /** Every published version number, ascending. */
  versions: number[];
  createdAt: string;
  updatedAt: string;
}

export interface WorkflowVersion {
  workflowId: string;
  version: number;
  name: string;
  definition: WorkflowDefinition;
  /** 1-based step index (as a string) to that step's own version. */
  stepMap: Record<string, number>;
  createdAt: string;
  /** the source commit the version was applied from (definitions as code); absent: published otherwise */
  sourceCommit?: string;
}

const PUBLISH_ATTEMPTS = 2;

export class WorkflowStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(orgId: string, draft: WorkflowDefinition): Promise<WorkflowRecord> {
    const now = nowIso();
    const record: WorkflowRecord = {
      id: newId('wf'), orgId, name: draft.name, draft, publishedVersion: null, versions: [], createdAt: now, updatedAt: now,
    };
    await withOrgCheck(orgId, () => this.db.insertInto('workflows').values({
      id: record.id, org_id: orgId, name: draft.name, draft: JSON.stringify(draft),
      published_version: null, created_at: now, updated_at: now,
    }).execute());
    return record;
  }

  async updateDraft(orgId: string, id: string, draft: WorkflowDefinition): Promise<WorkflowRecord | undefined> {
    const result = await this.db.updateTable('workflows')
      .set({ name: draft.name, draft: JSON.stringify(draft), updated_at: nowIso() })
      .where('id', '=', id)
      .where('org_id', '=', orgId)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return undefined;
    return this.get(orgId, id);
  }

  async get(orgId: string, id: string): Promise<WorkflowRecord | undefined> {
    const row = await this.db.selectFrom('workflows').selectAll()
      .where('id', '=', id)
      .where('org_id', '=', orgId)
      .executeTakeFirst();
    if (!row) return undefined;
    const versions = await this.db.selectFrom('workflow_versions').select('version')
      .where('workflow_id', '=', id)
      .orderBy('version', 'asc')
      .execute();
    return {
      id: row.id,
      orgId: row.org_id,
      name: row.name,
      draft: fromJson<WorkflowDefinition>(row.draft),
      publishedVersion: row.published_version,
      versions: versions.map((v) => v.version),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  /**
   * Freezes the current draft as the next version. Concurrent publishes are serialised by a row
   * lock on the workflow taken first in the transaction; should two still compute the same
   * number, the (workflow_id, version) key rejects one, which retries once and otherwise reports
   * CONFLICT.
   */
  /** The organization's workflows, newest first, without their drafts' steps (a listing, not an export). */
  async list(orgId: string): Promise<Omit<WorkflowRecord, 'draft' | 'versions'>[]> {
    const rows = await this.db.selectFrom('workflows')
      .select(['id', 'org_id', 'name', 'published_version', 'created_at', 'updated_at'])
      .where('org_id', '=', orgId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'asc')
      .execute();
    return rows.map((row) => ({
      id: row.id, orgId: row.org_id, name: row.name, publishedVersion: row.published_version, createdAt: row.created_at, updatedAt: row.updated_at,
    }));
  }

  /**
   * Deletes a workflow with its versions and triggers (foreign keys cascade). Runs already started
   * keep going: they carry their definition in their input. False when not in that org.
   */
  async delete(orgId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      // Explicit deletes rather than trusting every dialect's cascade configuration.
      const owned = await trx.selectFrom('workflows').select('id').where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
      if (!owned) return false;
      await trx.deleteFrom('trigger_schedules').where('trigger_id', 'in', trx.selectFrom('triggers').select('id').where('workflow_id', '=', id)).execute();
      await trx.deleteFrom('triggers').where('workflow_id', '=', id).execute();
      await trx.deleteFrom('workflow_versions').where('workflow_id', '=', id).execute();
      await trx.deleteFrom('workflows').where('id', '=', id).execute();
      return true;
    });
  }

  /** `sourceCommit`: the commit of the definitions applied as this version (definitions as code). */
  async publish(orgId: string, id: string, sourceCommit?: string): Promise<WorkflowVersion | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction().execute((trx) => publishInTransaction(trx, orgId, id, sourceCommit));
      } catch (error) {
        if (!CONFLICT_CODES.has(dbErrorCode(error) ?? '')) throw error;
        if (attempt >= PUBLISH_ATTEMPTS) {
          throw new RegistryError('CONFLICT', `workflow ${id} is being published concurrently; try again`, { cause: error });
        }
      }
    }
  }

  async getVersion(workflowId: string, version: number): Promise<WorkflowVersion | undefined> {
    const row = await this.db.selectFrom('workflow_versions').selectAll()
      .where('workflow_id', '=', workflowId)
      .where('version', '=', version)
      .executeTakeFirst();
    return row && toWorkflowVersion(row);
  }

  getLatestVersion(workflowId: string): Promise<WorkflowVersion | undefined> {
    return latestVersion(this.db, workflowId);
  }

  /** The latest published version's number (null: none), without reading the version itself. */
  async publishedVersionNumber(workflowId: string): Promise<number | null | undefined> {
    const row = await this.db.selectFrom('workflows').select('published_version').where('id', '=', workflowId).executeTakeFirst();
    return row?.published_version;
  }
}

/** Exported for the stores that check a workflow is published (triggers), in their own transaction if need be. */
export async function latestVersion(db: Kysely<Database>, workflowId: string): Promise<WorkflowVersion | undefined> {
  const row = await latestVersionRow(db, workflowId);
  return row && toWorkflowVersion(row);
}

async function publishInTransaction(trx: Transaction<Database>, orgId: string, id: string, sourceCommit?: string): Promise<WorkflowVersion | undefined> {
  // A no-op write takes the workflow's row lock (PostgreSQL) or the write lock (SQLite) before
  // anything is read, so a concurrent publish waits here and then reads our committed version.
  const lock = await trx.updateTable('workflows')
    .set((eb) => ({ published_version: eb.ref('published_version') }))
    .where('id', '=', id)
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  if (lock.numUpdatedRows === 0n) return undefined;

  const workflow = await trx.selectFrom('workflows').select(['name', 'draft'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  const definition = fromJson<WorkflowDefinition>(workflow.draft);
  const previous = await latestVersion(trx, id);

  const version: WorkflowVersion = {
    workflowId: id,
    version: (previous?.version ?? 0) + 1,
    name: workflow.name,
    definition,
    stepMap: nextStepMap(previous, definition),
    createdAt: nowIso(),
    ...(sourceCommit ? { sourceCommit } : {}),
  };
  await trx.insertInto('workflow_versions').values({
    workflow_id: id, version: version.version, name: version.name, definition: workflow.draft,
    step_map: JSON.stringify(version.stepMap), created_at: version.createdAt, source_commit: sourceCommit ?? null,
  }).execute();
  await trx.updateTable('workflows')
    .set({ published_version: version.version, updated_at: version.createdAt })
    .where('id', '=', id)
    .execute();
  return version;
}

/**
 * A step keeps its version when its content equals the step at the same index in the previous
 * version, so unchanged steps keep their identity (and anything keyed on it) across publishes.
 */
export function nextStepMap(previous: WorkflowVersion | undefined, definition: WorkflowDefinition): Record<string, number> {
  const map: Record<string, number> = {};
  definition.steps.forEach((step, i) => {
    const key = String(i + 1);
    const before = previous?.definition.steps[i];
    const beforeVersion = previous?.stepMap[key];
    if (before === undefined || beforeVersion === undefined) {
      map[key] = 1;
    } else {
      map[key] = canonicalJson(before) === canonicalJson(step) ? beforeVersion : beforeVersion + 1;
    }
  });
  return map;
}

/** JSON with object keys sorted at every depth, so key order never counts as a change. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = fieldOf(v, k);
    return sorted;
  });
}

function latestVersionRow(db: Kysely<Database>, workflowId: string): Promise<Selectable<WorkflowVersionsTable> | undefined> {
  return db.selectFrom('workflow_versions').selectAll()
    .where('workflow_id', '=', workflowId)
    .orderBy('version', 'desc')
    .limit(1)
    .executeTakeFirst();
}

function toWorkflowVersion(row: Selectable<WorkflowVersionsTable>): WorkflowVersion {
  return {
    workflowId: row.workflow_id,
    version: row.version,
    name: row.name,
    definition: fromJson<WorkflowDefinition>(row.definition),
    stepMap: fromJson<Record<string, number>>(row.step_map),
    createdAt: row.created_at,
    ...(row.source_commit ? { sourceCommit: row.source_commit } : {}),
  };
}
