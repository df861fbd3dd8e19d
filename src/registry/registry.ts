/**
 * The registry: one store per table family, all over the same Kysely `db` (SQLite or PostgreSQL,
 * see db.ts). Records are plain objects with camelCase fields; JSON columns come back parsed and
 * timestamps as ISO-8601 strings.
 *
 * Adding a table family:
 *   1. its table interface in db.ts, added to the `Database` type;
 *   2. a migration appended to MIGRATIONS in migrations.ts (never edit one that has shipped);
 *   3. `src/registry/<family>.ts` with `export class XStore { constructor(private readonly db: Kysely<Database>) {} }`
 *      and its record types (shared helpers in store-support.ts);
 *   4. a readonly property on Registry below, set in the constructor, and its exports in index.ts.
 */
import { sql, type Kysely } from 'kysely';
import { AlertRuleStore } from './alert-rules';
import { OperatorHoldStore } from './operator-holds';
import { ApiKeyStore } from './api-keys';
import { AppliedDefinitionStore } from './applied-definitions';
import { AuditStore } from './audit-records';
import { ConnectionStore } from './connections';
import { ConsoleSessionStore } from './console-sessions';
import { TriggerFormStore } from './trigger-forms';
import { FinishedRunStore } from './finished-runs';
import { createDb, sqliteFileOf, type Database, type DatabaseConfig } from './db';
import { AgentStore } from './agents';
import { AgentUsageStore } from './agent-usage';
import { MemberStore } from './members';
import { migrateToLatest } from './migrations';
import { OAuthStore } from './oauth';
import { OrgStore } from './orgs';
import { ToolServerStore } from './tool-servers';
import { TriggerScheduleStore } from './trigger-schedules';
import { TriggerStore } from './triggers';
import { TriggerWebhookStore } from './trigger-webhooks';
import { WebhookSecretStore } from './webhook-secrets';
import { WorkflowStore } from './workflows';

export async function openRegistry(config: DatabaseConfig): Promise<Registry> {
  const db = createDb(config);
  let registry: Registry;
  try {
    await migrateToLatest(db, config.kind);
    const file = sqliteFileOf(config);
    registry = new Registry(db, { auditJournalDir: file === undefined ? undefined : `${file}-audit-journal` });
    // tool-call records a crashed process journaled and did not insert (audit-journal.ts)
    await registry.audit.recover();
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return registry;
}

export interface RegistryOptions {
  /** where the audit trail journals tool-call records (a registry in a SQLite file; audit-journal.ts) */
  auditJournalDir?: string;
}

export class Registry {
  /** organizations and their admin tokens */
  readonly orgs: OrgStore;
  readonly apiKeys: ApiKeyStore;
  /** workflows and their published versions */
  readonly workflows: WorkflowStore;
  readonly triggers: TriggerStore;
  /** verified triggers' sealed secrets and last deliveries */
  readonly triggerWebhooks: TriggerWebhookStore;
  /** schedules of triggers (the Temporal schedules follow them: src/schedules/) */
  readonly schedules: TriggerScheduleStore;
  readonly connections: ConnectionStore;
  /** closed runs' views, written once (src/runs/run-views.ts) */
  readonly finishedRuns: FinishedRunStore;
  /** agents, their chats and artifacts */
  readonly agents: AgentStore;
  /** custom tool servers, and the state of custom connections (OAuth consent, errors) */
  readonly toolServers: ToolServerStore;
  /** each organization's completion-callback signing secret (sealed) */
  readonly webhookSecrets: WebhookSecretStore;
  /** agents' token usage and cost per call and per organization and month, and monthly budgets */
  readonly agentUsage: AgentUsageStore;
  /** the audit trail: appended, read newest first, pruned by the retention sweep */
  readonly audit: AuditStore;
  /** console sign-ins (hashed session IDs) */
  readonly consoleSessions: ConsoleSessionStore;
  /** triggers' hosted form URLs (hashed) */
  readonly triggerForms: TriggerFormStore;
  /** the tool gateway's OAuth clients, codes, grants and tokens (hashed) */
  readonly oauth: OAuthStore;
  /** people with a role, their personal access tokens (hashed) and the organization's identity provider */
  readonly members: MemberStore;
  /** organizations' alert rules on run outcomes */
  readonly alertRules: AlertRuleStore;
  /** paused workflows and triggers: their new runs wait PENDING */
  readonly holds: OperatorHoldStore;
  /** what the last apply of definitions as code wrote of each object (drift) */
  readonly appliedDefinitions: AppliedDefinitionStore;

  constructor(private readonly db: Kysely<Database>, options: RegistryOptions = {}) {
    this.orgs = new OrgStore(db);
    this.apiKeys = new ApiKeyStore(db);
    this.workflows = new WorkflowStore(db);
    this.triggers = new TriggerStore(db);
    this.triggerWebhooks = new TriggerWebhookStore(db);
    this.schedules = new TriggerScheduleStore(db);
    this.connections = new ConnectionStore(db);
    this.finishedRuns = new FinishedRunStore(db);
    this.agents = new AgentStore(db);
    this.toolServers = new ToolServerStore(db);
    this.webhookSecrets = new WebhookSecretStore(db);
    this.agentUsage = new AgentUsageStore(db);
    this.audit = new AuditStore(db, options.auditJournalDir);
    this.consoleSessions = new ConsoleSessionStore(db);
    this.triggerForms = new TriggerFormStore(db);
    this.oauth = new OAuthStore(db);
    this.members = new MemberStore(db);
    this.alertRules = new AlertRuleStore(db);
    this.holds = new OperatorHoldStore(db);
    this.appliedDefinitions = new AppliedDefinitionStore(db);
  }

  async close(): Promise<void> {
    // journaled audit records go into the table while the connection is open
    await this.audit.close();
    await this.db.destroy();
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }
}
