/**
 * Schema migrations, kept in code so the compiled package needs no migration files on disk.
 * Each migration must run unchanged on SQLite and PostgreSQL: only text and integer columns,
 * JSON as text, timestamps as ISO-8601 text, booleans as integer 0/1. Never edit a migration that
 * has shipped; add a new one (names sort in the order they run).
 *
 * One piece (over 300 lines): the migrations are an ordered list that only grows; one file keeps
 * their order visible and a shipped one untouched.
 */
import type { Kysely} from 'kysely';
import { sql } from 'kysely';
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

/**
 * Token usage and budgets of agents (issue 36): each model call, each organization's month totals,
 * and organizations' monthly budgets. Token counts and nano-USD are bigint (int8 on PostgreSQL).
 */
const agentUsage: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.createTable('agent_usage_calls')
      .addColumn('invocation_id', 'text', (c) => c.notNull())
      .addColumn('turn', 'integer', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('month', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
      .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
      .addColumn('cached_prompt_tokens', 'bigint', (c) => c.notNull())
      .addColumn('cost_nano_usd', 'bigint')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('agent_usage_calls_pk', ['invocation_id', 'turn', 'attempt'])
      .execute();
    await db.schema.createIndex('agent_usage_calls_org_month_idx').on('agent_usage_calls').columns(['org_id', 'month']).execute();
    await db.schema.createTable('org_usage_months')
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('month', 'text', (c) => c.notNull())
      .addColumn('tokens', 'bigint', (c) => c.notNull())
      .addColumn('cost_nano_usd', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('org_usage_months_pk', ['org_id', 'month'])
      .execute();
    await db.schema.createTable('org_budgets')
      .addColumn('org_id', 'text', (c) => c.primaryKey().references('orgs.id').onDelete('cascade'))
      .addColumn('monthly_max_tokens', 'bigint')
      .addColumn('monthly_max_cost_nano_usd', 'bigint')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropTable('org_budgets').ifExists().execute();
    await db.schema.dropTable('org_usage_months').ifExists().execute();
    await db.schema.dropIndex('agent_usage_calls_org_month_idx').ifExists().execute();
    await db.schema.dropTable('agent_usage_calls').ifExists().execute();
  },
};

/** The Temporal priority key (1..5) a trigger or an agent may set (src/common/priority.ts); null: the default. */
const priorities: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.alterTable('triggers').addColumn('priority', 'integer').execute();
    await db.schema.alterTable('agents').addColumn('priority', 'integer').execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.alterTable('agents').dropColumn('priority').execute();
    await db.schema.alterTable('triggers').dropColumn('priority').execute();
  },
};

/**
 * The audit trail (issue 35, docs/audit.md): append-only, no foreign key (a record outlives what
 * it names), read per organization newest first by id (ids sort by time), pruned by time.
 */
const auditRecords: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.createTable('audit_records')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('actor_name', 'text')
      .addColumn('credential_kind', 'text', (c) => c.notNull())
      .addColumn('credential_id', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('target_type', 'text')
      .addColumn('target_id', 'text')
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('status', 'integer', (c) => c.notNull())
      .addColumn('source_ip', 'text')
      .addColumn('user_agent', 'text')
      .addColumn('request_id', 'text')
      .addColumn('details', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('audit_records_org_id_idx').on('audit_records').columns(['org_id', 'id']).execute();
    await db.schema.createIndex('audit_records_at_idx').on('audit_records').column('at').execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropTable('audit_records').ifExists().execute();
  },
};

/** A trigger's concurrency limit (issue 36): JSON {limit, mode?}, null for none. */
const triggerConcurrency: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.alterTable('triggers').addColumn('concurrency', 'text').execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.alterTable('triggers').dropColumn('concurrency').execute();
  },
};

/** Console sessions (hashed IDs, tied to the admin token they signed in with) and triggers' hosted forms (issue 33). */
const consoleAndForms: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.createTable('console_sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('token_hash', 'text', (c) => c.notNull())
      .addColumn('csrf_token', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('console_sessions_expires_at_idx').on('console_sessions').column('expires_at').execute();
    await db.schema.createTable('trigger_forms')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('trigger_id', 'text', (c) => c.notNull().references('triggers.id').onDelete('cascade'))
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('wait', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema.createIndex('trigger_forms_trigger_id_idx').on('trigger_forms').column('trigger_id').execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropTable('trigger_forms').ifExists().execute();
    await db.schema.dropTable('console_sessions').ifExists().execute();
  },
};

/** People of an organization with a role, their personal access tokens, and the organization's OpenID Connect provider (issue 34). */
const members: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.createTable('members')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('members_org_email_unique', ['org_id', 'email'])
      .execute();
    await db.schema.createTable('member_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('member_id', 'text', (c) => c.notNull().references('members.id').onDelete('cascade'))
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('member_tokens_member_id_idx').on('member_tokens').column('member_id').execute();
    await db.schema.createTable('identity_providers')
      .addColumn('org_id', 'text', (c) => c.primaryKey().references('orgs.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('client_secret', 'text', (c) => c.notNull())
      .addColumn('role_rules', 'text', (c) => c.notNull())
      .addColumn('default_role', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // a console session opened by a member's sign-in names the member (an admin token's names none)
    await db.schema.alterTable('console_sessions').addColumn('member_id', 'text').execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.alterTable('console_sessions').dropColumn('member_id').execute();
    for (const table of ['identity_providers', 'member_tokens', 'members']) await db.schema.dropTable(table).ifExists().execute();
  },
};

/** The tool gateway's OAuth authorization server (issue 34): dynamically registered clients, codes, grants, tokens (all secrets hashed). */
const mcpOAuth: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.createTable('oauth_clients')
      .addColumn('client_id', 'text', (c) => c.primaryKey())
      .addColumn('client_name', 'text')
      .addColumn('redirect_uris', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createTable('oauth_codes')
      .addColumn('code_hash', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('resource', 'text', (c) => c.notNull())
      .addColumn('scope', 'text')
      .addColumn('code_challenge', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('admin_token_hash', 'text')
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .addColumn('grant_id', 'text')
      .execute();
    await db.schema.createIndex('oauth_codes_expires_at_idx').on('oauth_codes').column('expires_at').execute();
    await db.schema.createTable('oauth_grants')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('resource', 'text', (c) => c.notNull())
      .addColumn('scope', 'text')
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('admin_token_hash', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema.createTable('oauth_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('grant_id', 'text', (c) => c.notNull().references('oauth_grants.id').onDelete('cascade'))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute();
    await db.schema.createIndex('oauth_tokens_grant_id_idx').on('oauth_tokens').column('grant_id').execute();
    await db.schema.createIndex('oauth_tokens_expires_at_idx').on('oauth_tokens').column('expires_at').execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropTable('oauth_tokens').ifExists().execute();
    await db.schema.dropTable('oauth_grants').ifExists().execute();
    await db.schema.dropTable('oauth_codes').ifExists().execute();
    await db.schema.dropTable('oauth_clients').ifExists().execute();
  },
};

/** OAuth grants of members signed in through the organization's identity provider (issue 34): who, so their current role applies. */
const oauthMembers: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.alterTable('oauth_codes').addColumn('member_id', 'text').execute();
    await db.schema.alterTable('oauth_grants').addColumn('member_id', 'text').execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.alterTable('oauth_grants').dropColumn('member_id').execute();
    await db.schema.alterTable('oauth_codes').dropColumn('member_id').execute();
  },
};

/** An API key limited to a role (issue 34; docs/people-and-roles.md "API keys with a role"): null is the key's full reach. */
const apiKeyRoles: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.alterTable('api_keys').addColumn('role', 'text').execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.alterTable('api_keys').dropColumn('role').execute();
  },
};

/**
 * Who minted a credential (issue 46: offboarding): the member whose personal access token or
 * console session rotated an admin token, created an API key or issued a personal access token.
 * Removing the member ends them (src/registry/members.ts); null: an admin token or the
 * instance administrator minted it (no member).
 */
const credentialOwners: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.alterTable('admin_tokens').addColumn('member_id', 'text').execute();
    await db.schema.alterTable('api_keys').addColumn('member_id', 'text').execute();
    await db.schema.alterTable('member_tokens').addColumn('issued_by', 'text').execute();
    await db.schema.createIndex('admin_tokens_member_id_idx').on('admin_tokens').column('member_id').execute();
    await db.schema.createIndex('api_keys_member_id_idx').on('api_keys').column('member_id').execute();
    await db.schema.createIndex('member_tokens_issued_by_idx').on('member_tokens').column('issued_by').execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropIndex('member_tokens_issued_by_idx').ifExists().execute();
    await db.schema.dropIndex('api_keys_member_id_idx').ifExists().execute();
    await db.schema.dropIndex('admin_tokens_member_id_idx').ifExists().execute();
    await db.schema.alterTable('member_tokens').dropColumn('issued_by').execute();
    await db.schema.alterTable('api_keys').dropColumn('member_id').execute();
    await db.schema.alterTable('admin_tokens').dropColumn('member_id').execute();
  },
};

/**
 * When a dynamically registered OAuth client last obtained a grant or tokens (issue 46): the
 * retention sweep removes clients never used, and clients unused and without a live grant
 * (src/registry/oauth.ts, docs/tool-gateway.md "Registered clients").
 */
const oauthClientUse: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.alterTable('oauth_clients').addColumn('last_used_at', 'text').execute();
    await db.schema.createIndex('oauth_clients_created_at_idx').on('oauth_clients').column('created_at').execute();
    await db.schema.createIndex('oauth_grants_client_id_idx').on('oauth_grants').column('client_id').execute();
    await db.schema.createIndex('oauth_grants_org_id_idx').on('oauth_grants').columns(['org_id', 'client_id']).execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropIndex('oauth_grants_org_id_idx').ifExists().execute();
    await db.schema.dropIndex('oauth_grants_client_id_idx').ifExists().execute();
    await db.schema.dropIndex('oauth_clients_created_at_idx').ifExists().execute();
    await db.schema.alterTable('oauth_clients').dropColumn('last_used_at').execute();
  },
};

/**
 * Verified and shaped triggers (issue 51): a trigger may be verified by a signature preset instead
 * of an API key (its secrets sealed in trigger_secrets, its last deliveries kept for the console)
 * and may debounce or batch its calls.
 */
const triggerWebhooks: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.alterTable('triggers').addColumn('verify', 'text').execute();
    await db.schema.alterTable('triggers').addColumn('shaping', 'text').execute();
    await db.schema.createTable('trigger_secrets')
      .addColumn('trigger_id', 'text', (c) => c.primaryKey().references('triggers.id').onDelete('cascade'))
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('secrets', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createTable('trigger_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('trigger_id', 'text', (c) => c.notNull().references('triggers.id').onDelete('cascade'))
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('reason', 'text')
      .addColumn('delivery_id', 'text')
      .addColumn('run_id', 'text')
      .execute();
    await db.schema.createIndex('trigger_deliveries_trigger_at_idx').on('trigger_deliveries').columns(['trigger_id', 'at']).execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropIndex('trigger_deliveries_trigger_at_idx').ifExists().execute();
    await db.schema.dropTable('trigger_deliveries').ifExists().execute();
    await db.schema.dropTable('trigger_secrets').ifExists().execute();
    await db.schema.alterTable('triggers').dropColumn('shaping').execute();
    await db.schema.alterTable('triggers').dropColumn('verify').execute();
  },
};

/**
 * Durable tool calls (issue 50): a custom server may be marked durable, its retry policy kept as
 * JSON text (null: a plain proxy, as before).
 */
const durableToolCalls: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.alterTable('tool_servers').addColumn('durable', 'text').execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.alterTable('tool_servers').dropColumn('durable').execute();
  },
};

/**
 * Durable tool calls per tool (issue 50): a custom server's `durableTools`, each tool's own retry
 * policy or false (a plain proxied call on a durable server), as JSON text (null: none).
 */
const durableToolOverrides: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.alterTable('tool_servers').addColumn('durable_tools', 'text').execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.alterTable('tool_servers').dropColumn('durable_tools').execute();
  },
};

/** Alert rules on run outcomes (issue 54): per organization, evaluated by an entity workflow per rule. */
const alertRules: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.createTable('alert_rules')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('condition', 'text', (c) => c.notNull())
      .addColumn('destination', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('alert_rules_org_id_idx').on('alert_rules').column('org_id').execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropIndex('alert_rules_org_id_idx').ifExists().execute();
    await db.schema.dropTable('alert_rules').ifExists().execute();
  },
};

/**
 * Holds on new runs (issue 54): an operator paused a whole workflow or trigger; the runs prepared
 * meanwhile wait PENDING (src/runs/run-holds.ts). One row per paused workflow or trigger.
 */
const operatorHolds: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.createTable('operator_holds')
      .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('target_id', 'text', (c) => c.notNull())
      .addColumn('held_by', 'text', (c) => c.notNull())
      .addColumn('held_at', 'text', (c) => c.notNull())
      .addColumn('reason', 'text')
      .addPrimaryKeyConstraint('operator_holds_pk', ['org_id', 'scope', 'target_id'])
      .execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropTable('operator_holds').ifExists().execute();
  },
};

/**
 * Definitions as code (issue 53): the commit a published version was applied from, and the hash of
 * every object the last apply wrote (drift: the live object's hash differs).
 */
const appliedDefinitions: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.alterTable('workflow_versions').addColumn('source_commit', 'text').execute();
    await db.schema.createTable('applied_definitions')
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('source', 'text')
      .addColumn('source_commit', 'text')
      .addColumn('applied_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('applied_definitions_pk', ['org_id', 'kind', 'name'])
      .execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.dropTable('applied_definitions').ifExists().execute();
    await db.schema.alterTable('workflow_versions').dropColumn('source_commit').execute();
  },
};

/**
 * A trigger changed in place (PATCH /api/v1/triggers/{id}, definitions as code): its revision, read
 * with its live state on every call, so a gateway's kept copy of the trigger is known stale at once.
 */
const triggerRevisions: Migration = {
  async up(db: AnyDb): Promise<void> {
    await db.schema.alterTable('triggers').addColumn('revision', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  },

  async down(db: AnyDb): Promise<void> {
    await db.schema.alterTable('triggers').dropColumn('revision').execute();
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
  '0010-agent-usage': agentUsage,
  '0011-priorities': priorities,
  '0012-audit-records': auditRecords,
  '0013-trigger-concurrency': triggerConcurrency,
  '0014-console-sessions-forms': consoleAndForms,
  '0015-members': members,
  '0016-mcp-oauth': mcpOAuth,
  '0017-oauth-members': oauthMembers,
  '0018-api-key-roles': apiKeyRoles,
  '0019-credential-owners': credentialOwners,
  '0020-oauth-client-use': oauthClientUse,
  '0021-trigger-webhooks': triggerWebhooks,
  '0022-durable-tool-calls': durableToolCalls,
  '0023-applied-definitions': appliedDefinitions,
  '0025-alert-rules': alertRules,
  '0026-operator-holds': operatorHolds,
  '0030-durable-tool-overrides': durableToolOverrides,
  '0031-trigger-revisions': triggerRevisions,
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
