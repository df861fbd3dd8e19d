/**
 * One Kysely query builder over two dialects: SQLite (node:sqlite, the embedded default) and
 * PostgreSQL (pg). Column types are the lowest common denominator of both, so a single migration
 * and a single set of queries serve either: JSON is text, timestamps are ISO-8601 text, booleans
 * are integer 0/1.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { openSqlite, type SqliteDatabase } from './sqlite';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { Pool } from 'pg';

export type DatabaseConfig =
  | { kind: 'sqlite'; file: string }
  | { kind: 'postgres'; url: string; schema?: string };

export interface OrgsTable {
  id: string;
  name: string;
  created_at: string;
}

export interface AdminTokensTable {
  token_hash: string;
  org_id: string;
  /** 0 or 1. */
  instance_admin: number;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  org_id: string;
  name: string | null;
  key_hash: string;
  created_at: string;
  revoked_at: string | null;
}

export interface WorkflowsTable {
  id: string;
  org_id: string;
  name: string;
  /** JSON of a WorkflowDefinition. */
  draft: string;
  published_version: number | null;
  created_at: string;
  updated_at: string;
}

export interface WorkflowVersionsTable {
  workflow_id: string;
  version: number;
  name: string;
  /** JSON of a WorkflowDefinition. */
  definition: string;
  /** JSON of Record<string, number>. */
  step_map: string;
  created_at: string;
}

export interface TriggersTable {
  id: string;
  org_id: string;
  workflow_id: string;
  name: string | null;
  /** JSON of {stepIndex, fileName?}, or null. */
  designated_output: string | null;
  created_at: string;
  /** set when the trigger is offered as a tool of its organization's `workflows` server */
  tool_name: string | null;
  tool_description: string | null;
  /** ISO time the trigger was disabled; null while it is enabled */
  disabled_at: string | null;
  /** where a run's final status is POSTed (Standard Webhooks), unless the call names its own */
  callback_url: string | null;
}

/** An organization's Standard Webhooks signing secret, sealed like connection credentials. */
export interface WebhookSecretsTable {
  org_id: string;
  secret: string;
  /** the secret before the last rotation, still signed with for a while */
  previous_secret: string | null;
  created_at: string;
  rotated_at: string | null;
}

export interface ConnectionsTable {
  id: string;
  org_id: string;
  /** which application server may use it, e.g. `mail` */
  application: string;
  name: string | null;
  /** AES-256-GCM ciphertext of the credentials JSON (see src/crypto/connection-cipher.ts) */
  credentials: string;
  created_at: string;
}

export interface AgentsTable {
  id: string;
  org_id: string;
  name: string;
  description: string;
  instructions: string;
  /** JSON of a JSON Schema object, or null */
  output_schema: string | null;
  /** JSON of AgentServer[] */
  servers: string;
  /** JSON of AgentWorkflow[] */
  workflows: string;
  /** JSON of AgentModel */
  model: string;
  /** JSON of AgentLimits */
  limits: string;
  created_at: string;
  updated_at: string;
}

export interface ToolServersTable {
  /** short opaque token, also the server's path under the tool base path */
  id: string;
  org_id: string;
  /** `openapi` (generated) or `remote` (a proxied MCP server) */
  kind: string;
  name: string;
  description: string;
  /** the custom connection whose credentials calls use; required for `openapi` */
  connection_id: string | null;
  /** `openapi`: the document as JSON text; `remote`: the server's URL */
  source: string;
  created_at: string;
  updated_at: string;
}

export interface AgentChatsTable {
  id: string;
  org_id: string;
  agent_id: string;
  title: string | null;
  created_at: string;
  updated_at: string;
}

/** Files the agent's tools produced in a chat; the bytes are in the blob store under `key`. */
export interface AgentArtifactsTable {
  chat_id: string;
  name: string;
  key: string;
  mime_type: string;
  size: number;
  created_at: string;
}

/** What a custom connection has learned since it was created: consent, tokens, the last failure. */
export interface ConnectionStatesTable {
  connection_id: string;
  org_id: string;
  /** `connected`, `pending` or `error` */
  status: string;
  /** the provider's reason, when status is `error` */
  error: string | null;
  /** sealed JSON (refresh token, a pending consent's state and PKCE verifier), or null */
  secret: string | null;
  updated_at: string;
}

export interface FinishedRunsTable {
  run_id: string;
  org_id: string;
  automation_id: string;
  /** JSON of the closed run's view (src/runs/run-views.ts) */
  view: string;
  created_at: string;
}

export interface TriggerSchedulesTable {
  /** the trigger's ID; the Temporal schedule's ID is derived from it (src/schedules/schedule-ids.ts) */
  trigger_id: string;
  org_id: string;
  /** JSON of the schedule as the API took it (src/schedules/schedule-spec.ts) */
  spec: string;
  /** 0/1: the paused state to create the Temporal schedule with; Temporal holds the live state */
  paused: number;
  note: string | null;
  /** one more on every change of `spec`; the Temporal schedule's action carries the revision it was built from */
  revision: number;
  created_at: string;
  updated_at: string;
}

export interface Database {
  orgs: OrgsTable;
  admin_tokens: AdminTokensTable;
  api_keys: ApiKeysTable;
  workflows: WorkflowsTable;
  workflow_versions: WorkflowVersionsTable;
  triggers: TriggersTable;
  connections: ConnectionsTable;
  finished_runs: FinishedRunsTable;
  trigger_schedules: TriggerSchedulesTable;
  agents: AgentsTable;
  agent_chats: AgentChatsTable;
  agent_artifacts: AgentArtifactsTable;
  tool_servers: ToolServersTable;
  connection_states: ConnectionStatesTable;
  webhook_secrets: WebhookSecretsTable;
}

const SQLITE_BUSY_TIMEOUT_MS = 5_000;

// The schema name is spliced into DDL (identifiers cannot be bound), so only plain names pass.
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** PostgreSQL's codes for a schema created by a concurrent session between our check and create. */
const PG_ALREADY_EXISTS_CODES = new Set(['42P06', '23505']);

export function createDb(config: DatabaseConfig): Kysely<Database> {
  return config.kind === 'sqlite' ? createSqliteDb(config.file) : createPostgresDb(config.url, config.schema);
}

function createSqliteDb(file: string): Kysely<Database> {
  const dialect = new SqliteDialect({
    // Opened lazily so that constructing the registry does no IO; errors surface on the first query.
    database: async () => {
      if (file !== ':memory:' && !file.startsWith('file:')) mkdirSync(dirname(file), { recursive: true });
      const db = openSqlite(file);
      // WAL lets readers in other processes (CLI, a second worker) proceed while we write.
      db.exec('pragma journal_mode = WAL');
      // SQLite ignores REFERENCES clauses unless this is set on each connection.
      db.exec('pragma foreign_keys = ON');
      db.exec(`pragma busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
      return keepingStatements(db);
    },
  });
  return new Kysely<Database>({ dialect });
}

/** How many prepared statements one SQLite connection keeps (the registry's queries are a few dozen shapes). */
const KEPT_STATEMENTS = 500;

/**
 * The connection as kysely sees it, with prepared statements kept by their SQL: kysely prepares
 * every query anew, which costs more than running a small one (a trigger call's lookups, a tool
 * call's server lookup). A statement is reusable once its run returned: kysely runs them with
 * all() or run(), which finish at once (the registry never streams a query).
 */
function keepingStatements(db: SqliteDatabase): Pick<SqliteDatabase, 'close' | 'prepare'> {
  const statements = new Map<string, ReturnType<SqliteDatabase['prepare']>>();
  return {
    close: () => db.close(),
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = db.prepare(sql);
        if (statements.size >= KEPT_STATEMENTS) statements.delete(statements.keys().next().value!);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

function createPostgresDb(url: string, schema: string | undefined): Kysely<Database> {
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new Error(`invalid PostgreSQL schema name: ${JSON.stringify(schema)}`);
  }
  const dialect = new PostgresDialect({
    pool: new Pool({ connectionString: url }),
    // search_path is per session, so every pooled connection must be pointed at the schema.
    onCreateConnection: schema === undefined ? undefined : async (connection) => {
      try {
        await connection.executeQuery(CompiledQuery.raw(`create schema if not exists "${schema}"`));
      } catch (error) {
        if (!PG_ALREADY_EXISTS_CODES.has(dbErrorCode(error) ?? '')) throw error;
      }
      await connection.executeQuery(CompiledQuery.raw(`set search_path to "${schema}"`));
    },
  });
  return new Kysely<Database>({ dialect });
}

/** The SQLSTATE of a pg error or the result code of a SQLite one (sqlite.ts); undefined for anything else. */
export function dbErrorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') {
    return error.code;
  }
  return undefined;
}
