/**
 * Schema migrations, kept in code so the compiled package needs no migration files on disk.
 * Each migration must run unchanged on SQLite and PostgreSQL: only text and integer columns,
 * JSON as text, timestamps as ISO-8601 text, booleans as integer 0/1. Never edit a migration that
 * has shipped; add a new one (names sort in the order they run).
 */
import { Kysely, sql } from 'kysely';
import { Migrator, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely/migration';
import type { Database } from './db';

// Migrations see the database as it was when they were written, not today's Database type.
type AnyDb = Kysely<unknown>;

const initial: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.createTable('orgs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema.createTable('admin_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('instance_admin', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema.createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('name', 'text')
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema.createIndex('api_keys_org_id_idx').on('api_keys').column('org_id').execute();

    await db.schema.createTable('workflows')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('draft', 'text', (c) => c.notNull())
      .addColumn('published_version', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('workflows_org_id_idx').on('workflows').column('org_id').execute();

    // The composite key is what makes two racing publishes unable to both claim a version number.
    await db.schema.createTable('workflow_versions')
      .addColumn('workflow_id', 'text', (c) => c.notNull().references('workflows.id').onDelete('cascade'))
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('step_map', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('workflow_versions_pk', ['workflow_id', 'version'])
      .execute();

    await db.schema.createTable('triggers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('workflow_id', 'text', (c) => c.notNull().references('workflows.id').onDelete('cascade'))
      .addColumn('name', 'text')
      .addColumn('designated_output', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('triggers_workflow_id_idx').on('triggers').column('workflow_id').execute();
  },

  async down(db: AnyDb): Promise<void> {
    for (const table of ['triggers', 'workflow_versions', 'workflows', 'api_keys', 'admin_tokens', 'orgs']) {
      await db.schema.dropTable(table).ifExists().execute();
    }
  },
};

/** Application connections (the `PCID`s of tool calls); credentials are ciphertext. */
const connections: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.createTable('connections')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('application', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('credentials', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('connections_org_id_idx').on('connections').column('org_id').execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropTable('connections').ifExists().execute();
  },
};

/** Agents, their chats and the files their tools produced (issue 11); chat histories live in the blob store. */
const agents: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.createTable('agents')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('instructions', 'text', (c) => c.notNull())
      .addColumn('output_schema', 'text')
      .addColumn('servers', 'text', (c) => c.notNull())
      .addColumn('workflows', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('limits', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('agents_org_id_idx').on('agents').column('org_id').execute();

    await db.schema.createTable('agent_chats')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('title', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('agent_chats_agent_id_idx').on('agent_chats').column('agent_id').execute();

    await db.schema.createTable('agent_artifacts')
      .addColumn('chat_id', 'text', (c) => c.notNull().references('agent_chats.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('mime_type', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('agent_artifacts_pk', ['chat_id', 'name'])
      .execute();
  },

  async down(db: AnyDb): Promise<void> {
    for (const table of ['agent_artifacts', 'agent_chats', 'agents']) await db.schema.dropTable(table).ifExists().execute();
  },
};

/** Custom tool servers (generated and remote) and the state of custom connections (OAuth consent, errors). */
const toolServers: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.createTable('tool_servers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('connection_id', 'text')
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('tool_servers_org_id_idx').on('tool_servers').column('org_id').execute();
    await db.schema.createTable('connection_states')
      .addColumn('connection_id', 'text', (c) => c.primaryKey().references('connections.id').onDelete('cascade'))
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('secret', 'text')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropTable('connection_states').ifExists().execute();
    await db.schema.dropTable('tool_servers').ifExists().execute();
  },
};

/**
 * Workflows as MCP tools: a trigger may opt in with a tool name (unique in its organization) and
 * a description; the organization's `workflows` tool server lists those triggers.
 */
const triggerTools: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.alterTable('triggers').addColumn('tool_name', 'text').execute();
    await db.schema.alterTable('triggers').addColumn('tool_description', 'text').execute();
    // NULLs never collide in a unique index (SQLite and PostgreSQL alike): triggers without a tool are unaffected.
    await db.schema.createIndex('triggers_org_tool_name_idx').unique().on('triggers').columns(['org_id', 'tool_name']).execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropIndex('triggers_org_tool_name_idx').ifExists().execute();
    await db.schema.alterTable('triggers').dropColumn('tool_description').execute();
    await db.schema.alterTable('triggers').dropColumn('tool_name').execute();
  },
};

/** Closed runs' status and results views, written once: served without a Temporal call. */
const finishedRuns: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.createTable('finished_runs')
      .addColumn('run_id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('automation_id', 'text', (c) => c.notNull())
      .addColumn('view', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropTable('finished_runs').ifExists().execute();
  },
};

/**
 * Live runs and their management: a trigger can be disabled and may name a completion callback
 * URL; each organization has a Standard Webhooks signing secret (sealed, with the previous one
 * kept for a day after a rotation).
 */
const triggerStateAndWebhooks: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.alterTable('triggers').addColumn('disabled_at', 'text').execute();
    await db.schema.alterTable('triggers').addColumn('callback_url', 'text').execute();
    await db.schema.createTable('webhook_secrets')
      .addColumn('org_id', 'text', (c) => c.primaryKey().references('orgs.id').onDelete('cascade'))
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('previous_secret', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('rotated_at', 'text')
      .execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropTable('webhook_secrets').ifExists().execute();
    await db.schema.alterTable('triggers').dropColumn('callback_url').execute();
    await db.schema.alterTable('triggers').dropColumn('disabled_at').execute();
  },
};

/** Schedules of triggers: the registry's side of a Temporal Schedule (src/schedules/). */
const triggerSchedules: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.createTable('trigger_schedules')
      .addColumn('trigger_id', 'text', (c) => c.primaryKey().references('triggers.id').onDelete('cascade'))
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('spec', 'text', (c) => c.notNull())
      .addColumn('paused', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('note', 'text')
      .addColumn('revision', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('trigger_schedules_org_id_idx').on('trigger_schedules').column('org_id').execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropTable('trigger_schedules').ifExists().execute();
  },
};

/** The retention sweep deletes finished_runs rows by age (src/retention/sweep.ts). */
const finishedRunsAge: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.createIndex('finished_runs_created_at_idx').on('finished_runs').column('created_at').execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropIndex('finished_runs_created_at_idx').ifExists().execute();
  },
};

export const MIGRATIONS: Readonly<Record<string, Migration>> = Object.freeze({
  '0001-initial': initial,
  '0002-connections': connections,
  '0003-agents': agents,
  '0004-tool-servers': toolServers,
  '0005-trigger-tools': triggerTools,
  '0006-finished-runs': finishedRuns,
  '0007-trigger-state-webhooks': triggerStateAndWebhooks,
  '0008-trigger-schedules': triggerSchedules,
  '0009-finished-runs-age': finishedRunsAge,
});

class InCodeMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return { ...MIGRATIONS };
  }
}

export class MigrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

/**
 * Brings the schema to the latest migration; a no-op when it is already there. Safe to run from
 * several processes at once: Kysely's Migrator takes a lock row for the duration.
 */
export async function migrateToLatest(db: Kysely<Database>, kind: 'sqlite' | 'postgres'): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: new InCodeMigrationProvider(),
    // On PostgreSQL the Migrator looks for its tables in every schema unless told which one, so a
    // kysely_migration table in another schema would be mistaken for ours. Pin it to the schema
    // this session writes to (the search_path set in createDb, or the server default).
    migrationTableSchema: kind === 'postgres' ? await currentSchema(db) : undefined,
  });
  const result = await migrator.migrateToLatest();
  if (result.error !== undefined) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName;
    const reason = result.error instanceof Error ? result.error.message : String(result.error);
    throw new MigrationError(`registry migration ${failed ?? '(setup)'} failed: ${reason}`, { cause: result.error });
  }
  return result;
}

async function currentSchema(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new MigrationError('PostgreSQL has no current schema: check search_path');
  return schema;
}
