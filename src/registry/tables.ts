/**
 * The registry's tables as Kysely sees them, one interface per table, the same on SQLite and
 * PostgreSQL (src/registry/db.ts): JSON is text, timestamps are ISO-8601 text, booleans integer
 * 0/1, bigint columns answered as strings by PostgreSQL.
 */
import type { ConsoleSessionsTable, TriggerFormsTable } from './console-tables';
import type { OAuthClientsTable, OAuthCodesTable, OAuthGrantsTable, OAuthTokensTable } from './oauth-tables';

export type { ConsoleSessionsTable, TriggerFormsTable } from './console-tables';
import type { TriggerDeliveriesTable, TriggerSecretsTable } from './webhook-tables';
import type { AlertRulesTable, OperatorHoldsTable } from './alert-tables';
export type { AlertRulesTable, OperatorHoldsTable } from './alert-tables';
export type { TriggerDeliveriesTable, TriggerSecretsTable } from './webhook-tables';
import type { IdentityProvidersTable, MembersTable, MemberTokensTable } from './member-tables';

export type { IdentityProvidersTable, MembersTable, MemberTokensTable } from './member-tables';

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
  /** the member who minted it (rotated the organization's token; migration 0019); null: no member did. Removing the member deletes it */
  member_id: string | null;
}

export interface ApiKeysTable {
  id: string;
  org_id: string;
  name: string | null;
  key_hash: string;
  created_at: string;
  revoked_at: string | null;
  /** the role the key is limited to (src/people/roles.ts); null: the key's full reach */
  role: string | null;
  /** the member who created it (migration 0019); null: an admin token did. Removing the member revokes it */
  member_id: string | null;
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
  /** the Git commit (or other source revision) of the definitions applied as this version (migration 0023); null: published otherwise */
  source_commit: string | null;
}

/** What the last apply of definitions as code wrote, per object (migration 0023): drift is a live object whose hash differs. */
export interface AppliedDefinitionsTable {
  org_id: string;
  /** workflow | trigger | toolServer | agent */
  kind: string;
  name: string;
  /** sha256 of the object's canonical declarative form as applied */
  hash: string;
  source: string | null;
  source_commit: string | null;
  applied_at: string;
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
  /** Temporal priority key (1..5) of its runs; null: the default */
  priority: number | null;
  /** JSON of {limit, mode?} (TriggerConcurrency): at most `limit` of its runs in progress; null: no limit */
  concurrency: string | null;
  /** JSON of {preset, ...options} (TriggerVerify, migration 0021): calls are verified by signature, not API key; null: an API key trigger */
  verify: string | null;
  /** JSON of {debounce} or {batch} (TriggerShaping, migration 0021); null: a run per call */
  shaping: string | null;
  /** 1, one more at each change in place (migration 0031): a kept copy of an older revision is stale */
  revision: number;
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
  /** Temporal priority key (1..5) of its invocations; null: the default */
  priority: number | null;
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
  /** the server's durable settings as JSON text (src/common/durable-call.ts); null: calls are plain proxied calls */
  durable: string | null;
  /** per tool, its own durable settings or false, as JSON text (src/common/durable-tools.ts); null: the server's for every tool */
  durable_tools: string | null;
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

/** Agents' usage (src/registry/agent-usage.ts): bigint columns, which PostgreSQL answers as strings. */
export interface AgentUsageCallsTable {
  invocation_id: string; turn: number; attempt: number; org_id: string; agent_id: string; month: string; model: string;
  prompt_tokens: number | string; completion_tokens: number | string; cached_prompt_tokens: number | string; cost_nano_usd: number | string | null; created_at: string;
}
export interface OrgUsageMonthsTable { org_id: string; month: string; tokens: number | string; cost_nano_usd: number | string; updated_at: string }
export interface OrgBudgetsTable { org_id: string; monthly_max_tokens: number | string | null; monthly_max_cost_nano_usd: number | string | null; updated_at: string }
/** How an audited action ended (the column holds only these: audit-records.ts writes them). */
export type AuditOutcome = 'success' | 'refused' | 'failed';
/** One audit record (audit-records.ts), never updated; `details`: a JSON object, never a secret. */
export interface AuditRecordsTable {
  id: string; org_id: string; at: string; actor: string; actor_name: string | null; credential_kind: string; credential_id: string;
  action: string; target_type: string | null; target_id: string | null; outcome: AuditOutcome; status: number;
  source_ip: string | null; user_agent: string | null; request_id: string | null; details: string;
}

export interface Database {
  oauth_clients: OAuthClientsTable;
  oauth_codes: OAuthCodesTable;
  oauth_grants: OAuthGrantsTable;
  oauth_tokens: OAuthTokensTable;
  console_sessions: ConsoleSessionsTable;
  trigger_secrets: TriggerSecretsTable;
  trigger_deliveries: TriggerDeliveriesTable;
  alert_rules: AlertRulesTable;
  operator_holds: OperatorHoldsTable;
  members: MembersTable;
  member_tokens: MemberTokensTable;
  identity_providers: IdentityProvidersTable;
  trigger_forms: TriggerFormsTable;
  orgs: OrgsTable;
  admin_tokens: AdminTokensTable;
  api_keys: ApiKeysTable;
  workflows: WorkflowsTable;
  workflow_versions: WorkflowVersionsTable;
  applied_definitions: AppliedDefinitionsTable;
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
  agent_usage_calls: AgentUsageCallsTable;
  org_usage_months: OrgUsageMonthsTable;
  org_budgets: OrgBudgetsTable;
  audit_records: AuditRecordsTable;
}
