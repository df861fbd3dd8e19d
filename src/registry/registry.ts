/**
 * The registry: orgs, credentials, workflows with their immutable published versions, and
 * triggers. One implementation over SQLite or PostgreSQL (see db.ts). Records are plain objects
 * with camelCase fields; JSON columns come back parsed and timestamps as ISO-8601 strings.
 */
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { WorkflowDefinition } from '../common/definition';
import { newId } from '../secrets';
import {
  createDb, dbErrorCode, type ConnectionsTable, type Database, type DatabaseConfig, type TriggersTable, type WorkflowVersionsTable,
} from './db';
import { migrateToLatest } from './migrations';
import { ToolServerStore } from './tool-servers';

export type RegistryErrorCode = 'NOT_FOUND' | 'NOT_PUBLISHED' | 'INVALID' | 'CONFLICT';

export class RegistryError extends Error {
  readonly code: RegistryErrorCode;

  constructor(code: RegistryErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RegistryError';
    this.code = code;
  }
}

export interface Org {
  id: string;
  name: string;
  createdAt: string;
}

export interface AdminTokenGrant {
  orgId: string;
  instanceAdmin: boolean;
}

export interface ApiKeyRecord {
  id: string;
  orgId: string;
  name: string | null;
  createdAt: string;
}

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
}

export interface DesignatedOutput {
  stepIndex: number;
  fileName?: string;
}

export interface TriggerRecord {
  id: string;
  orgId: string;
  workflowId: string;
  name: string | null;
  designatedOutput: DesignatedOutput | null;
  createdAt: string;
}

export interface CreateTriggerInput {
  workflowId: string;
  name?: string | null;
  designatedOutput?: DesignatedOutput | null;
}

/** A stored application connection; `credentials` is the ciphertext, opened by src/tools/connections. */
export interface ConnectionRecord {
  id: string;
  orgId: string;
  application: string;
  name: string | null;
  credentials: string;
  createdAt: string;
}

export const DEFAULT_ORG_ID = 'org_default';
export const DEFAULT_ORG_NAME = 'default';

/** Codes that mean "another writer got there first": a retry sees their commit and can proceed. */
const CONFLICT_CODES = new Set([
  '23505', // pg unique_violation
  '40001', // pg serialization_failure
  '40P01', // pg deadlock_detected
  'SQLITE_CONSTRAINT_PRIMARYKEY',
  'SQLITE_CONSTRAINT_UNIQUE',
  'SQLITE_BUSY',
]);

const FOREIGN_KEY_CODES = new Set(['23503', 'SQLITE_CONSTRAINT_FOREIGNKEY']);

const PUBLISH_ATTEMPTS = 2;

export async function openRegistry(config: DatabaseConfig): Promise<Registry> {
  const db = createDb(config);
  try {
    await migrateToLatest(db, config.kind);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return new Registry(db);
}

export class Registry {
  /** custom tool servers and custom connections' state */
  readonly toolServers: ToolServerStore;

  constructor(private readonly db: Kysely<Database>) {
    this.toolServers = new ToolServerStore(db);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  // --- orgs ---

  async createOrg(name: string): Promise<Org> {
    const org: Org = { id: newId('org'), name, createdAt: nowIso() };
    await this.db.insertInto('orgs').values({ id: org.id, name: org.name, created_at: org.createdAt }).execute();
    return org;
  }

  async getOrg(id: string): Promise<Org | undefined> {
    const row = await this.db.selectFrom('orgs').selectAll().where('id', '=', id).executeTakeFirst();
    return row && { id: row.id, name: row.name, createdAt: row.created_at };
  }

  async ensureDefaultOrg(): Promise<Org> {
    // ON CONFLICT rather than check-then-insert: two processes starting together must both succeed.
    await this.db.insertInto('orgs')
      .values({ id: DEFAULT_ORG_ID, name: DEFAULT_ORG_NAME, created_at: nowIso() })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    const org = await this.getOrg(DEFAULT_ORG_ID);
    if (!org) throw new Error('default org vanished right after it was ensured');
    return org;
  }

  // --- admin tokens ---

  /** Idempotent on the hash: a hash already stored keeps its original org and flags. */
  async addAdminToken(orgId: string, tokenHash: string, opts: { instanceAdmin: boolean }): Promise<void> {
    await withOrgCheck(orgId, () => this.db.insertInto('admin_tokens')
      .values({ token_hash: tokenHash, org_id: orgId, instance_admin: opts.instanceAdmin ? 1 : 0, created_at: nowIso() })
      .onConflict((oc) => oc.column('token_hash').doNothing())
      .execute());
  }

  /**
   * Makes `tokenHash` the organization's only admin token of its kind (instance or organization
   * administrator): every other one stops working at once. Used for the bootstrap token at start
   * (the configured or generated token is authoritative, so changing it and restarting revokes the
   * old one) and to rotate an organization's token.
   */
  async replaceAdminTokens(orgId: string, tokenHash: string, opts: { instanceAdmin: boolean }): Promise<void> {
    const flag = opts.instanceAdmin ? 1 : 0;
    await withOrgCheck(orgId, () => this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('admin_tokens')
        .where('org_id', '=', orgId)
        .where('instance_admin', '=', flag)
        .where('token_hash', '!=', tokenHash)
        .execute();
      await trx.insertInto('admin_tokens')
        .values({ token_hash: tokenHash, org_id: orgId, instance_admin: flag, created_at: nowIso() })
        .onConflict((oc) => oc.column('token_hash').doNothing())
        .execute();
    }));
  }

  async findAdminToken(tokenHash: string): Promise<AdminTokenGrant | undefined> {
    const row = await this.db.selectFrom('admin_tokens')
      .select(['org_id', 'instance_admin'])
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
    return row && { orgId: row.org_id, instanceAdmin: row.instance_admin === 1 };
  }

  // --- API keys ---

  async createApiKey(orgId: string, name: string | null, keyHash: string): Promise<ApiKeyRecord> {
    const key: ApiKeyRecord = { id: newId('key'), orgId, name, createdAt: nowIso() };
    await withOrgCheck(orgId, () => this.db.insertInto('api_keys')
      .values({ id: key.id, org_id: orgId, name, key_hash: keyHash, created_at: key.createdAt, revoked_at: null })
      .execute());
    return key;
  }

  /** Revoked keys are not found: callers authenticate with this and must not see them. */
  async findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys')
      .select(['id', 'org_id', 'name', 'created_at'])
      .where('key_hash', '=', keyHash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return row && { id: row.id, orgId: row.org_id, name: row.name, createdAt: row.created_at };
  }

  /** The key by id while it is not revoked: runtime tokens minted from a key die with it. */
  async getActiveApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys')
      .select(['id', 'org_id', 'name', 'created_at'])
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return row && { id: row.id, orgId: row.org_id, name: row.name, createdAt: row.created_at };
  }

  /** False when the key is not in that org or is already revoked. */
  async revokeApiKey(orgId: string, id: string): Promise<boolean> {
    const result = await this.db.updateTable('api_keys')
      .set({ revoked_at: nowIso() })
      .where('id', '=', id)
      .where('org_id', '=', orgId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  // --- workflows ---

  async createWorkflow(orgId: string, draft: WorkflowDefinition): Promise<WorkflowRecord> {
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

  async updateWorkflowDraft(orgId: string, id: string, draft: WorkflowDefinition): Promise<WorkflowRecord | undefined> {
    const result = await this.db.updateTable('workflows')
      .set({ name: draft.name, draft: JSON.stringify(draft), updated_at: nowIso() })
      .where('id', '=', id)
      .where('org_id', '=', orgId)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return undefined;
    return this.getWorkflow(orgId, id);
  }

  async getWorkflow(orgId: string, id: string): Promise<WorkflowRecord | undefined> {
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
  async publishWorkflow(orgId: string, id: string): Promise<WorkflowVersion | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction().execute((trx) => publishInTransaction(trx, orgId, id));
      } catch (error) {
        if (!CONFLICT_CODES.has(dbErrorCode(error) ?? '')) throw error;
        if (attempt >= PUBLISH_ATTEMPTS) {
          throw new RegistryError('CONFLICT', `workflow ${id} is being published concurrently; try again`, { cause: error });
        }
      }
    }
  }

  async getWorkflowVersion(workflowId: string, version: number): Promise<WorkflowVersion | undefined> {
    const row = await this.db.selectFrom('workflow_versions').selectAll()
      .where('workflow_id', '=', workflowId)
      .where('version', '=', version)
      .executeTakeFirst();
    return row && toWorkflowVersion(row);
  }

  async getLatestVersion(workflowId: string): Promise<WorkflowVersion | undefined> {
    const row = await latestVersionRow(this.db, workflowId);
    return row && toWorkflowVersion(row);
  }

  // --- triggers ---

  async createTrigger(orgId: string, input: CreateTriggerInput): Promise<TriggerRecord> {
    const workflow = await this.db.selectFrom('workflows').select('id')
      .where('id', '=', input.workflowId)
      .where('org_id', '=', orgId)
      .executeTakeFirst();
    if (!workflow) throw new RegistryError('NOT_FOUND', `workflow ${input.workflowId} not found`);
    const latest = await this.getLatestVersion(input.workflowId);
    if (!latest) throw new RegistryError('NOT_PUBLISHED', `workflow ${input.workflowId} has no published version`);

    const output = input.designatedOutput ?? null;
    if (output) {
      const steps = latest.definition.steps.length;
      if (!Number.isInteger(output.stepIndex) || output.stepIndex < 1 || output.stepIndex > steps) {
        throw new RegistryError('INVALID',
          `designatedOutput.stepIndex ${output.stepIndex} is out of range: version ${latest.version} has ${steps} step(s)`);
      }
    }
    const trigger: TriggerRecord = {
      id: newId('trg'), orgId, workflowId: input.workflowId, name: input.name ?? null, designatedOutput: output, createdAt: nowIso(),
    };
    await this.db.insertInto('triggers').values({
      id: trigger.id, org_id: orgId, workflow_id: trigger.workflowId, name: trigger.name,
      designated_output: output && JSON.stringify(output), created_at: trigger.createdAt,
    }).execute();
    return trigger;
  }

  // --- connections ---

  /** `id` may be chosen by the caller, which binds it into the ciphertext before the row exists. */
  async createConnection(orgId: string, input: { id?: string; application: string; name?: string | null; credentials: string }): Promise<ConnectionRecord> {
    const record: ConnectionRecord = {
      id: input.id ?? newConnectionId(), orgId, application: input.application, name: input.name ?? null, credentials: input.credentials, createdAt: nowIso(),
    };
    await withOrgCheck(orgId, () => this.db.insertInto('connections').values({
      id: record.id, org_id: orgId, application: record.application, name: record.name, credentials: record.credentials,
      created_at: record.createdAt,
    }).execute());
    return record;
  }

  /** Only the org's own: another organization's connection is indistinguishable from none. */
  async getConnection(orgId: string, id: string): Promise<ConnectionRecord | undefined> {
    const row = await this.db.selectFrom('connections').selectAll()
      .where('id', '=', id)
      .where('org_id', '=', orgId)
      .executeTakeFirst();
    return row && toConnectionRecord(row);
  }

  async listConnections(orgId: string, application?: string): Promise<ConnectionRecord[]> {
    let query = this.db.selectFrom('connections').selectAll().where('org_id', '=', orgId);
    if (application !== undefined) query = query.where('application', '=', application);
    const rows = await query.orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
    return rows.map(toConnectionRecord);
  }

  async deleteConnection(orgId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('connections').where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** Not filtered by org: the caller decides what to reveal to whom. */
  async getTrigger(id: string): Promise<TriggerRecord | undefined> {
    const row = await this.db.selectFrom('triggers').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toTriggerRecord(row);
  }
}

async function publishInTransaction(trx: Transaction<Database>, orgId: string, id: string): Promise<WorkflowVersion | undefined> {
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
  const previousRow = await latestVersionRow(trx, id);
  const previous = previousRow && toWorkflowVersion(previousRow);

  const version: WorkflowVersion = {
    workflowId: id,
    version: (previous?.version ?? 0) + 1,
    name: workflow.name,
    definition,
    stepMap: nextStepMap(previous, definition),
    createdAt: nowIso(),
  };
  await trx.insertInto('workflow_versions').values({
    workflow_id: id, version: version.version, name: version.name, definition: workflow.draft,
    step_map: JSON.stringify(version.stepMap), created_at: version.createdAt,
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
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
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
  };
}

export function newConnectionId(): string {
  return newId('pc');
}

function toConnectionRecord(row: Selectable<ConnectionsTable>): ConnectionRecord {
  return {
    id: row.id, orgId: row.org_id, application: row.application, name: row.name, credentials: row.credentials, createdAt: row.created_at,
  };
}

function toTriggerRecord(row: Selectable<TriggersTable>): TriggerRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    workflowId: row.workflow_id,
    name: row.name,
    designatedOutput: row.designated_output === null ? null : fromJson<DesignatedOutput>(row.designated_output),
    createdAt: row.created_at,
  };
}

/**
 * JSON columns are written only by this module from already-validated values, so they are read
 * back without re-validation; re-parsing with today's schema could also reject versions published
 * under an older one, and published versions must stay readable.
 */
function fromJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

function nowIso(): string {
  return new Date().toISOString();
}

/** Turns a foreign-key violation on org_id into NOT_FOUND instead of a driver error. */
async function withOrgCheck<T>(orgId: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (FOREIGN_KEY_CODES.has(dbErrorCode(error) ?? '')) {
      throw new RegistryError('NOT_FOUND', `org ${orgId} not found`, { cause: error });
    }
    throw error;
  }
}
