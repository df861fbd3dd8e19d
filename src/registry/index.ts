export { AgentUsageStore } from './agent-usage';
export type { OrgBudget, UsageCall } from './agent-usage';
export { ApiKeyStore } from './api-keys';
export type { ApiKeyRecord } from './api-keys';
export { AuditStore, auditId } from './audit-records';
export type { AuditDurability, AuditFilter, AuditOutcome, AuditRecord, NewAuditRecord } from './audit-records';
export { ConnectionStore, newConnectionId } from './connections';
export type { ConnectionRecord, CreateConnectionInput } from './connections';
export { createDb, dbErrorCode } from './db';
export { ConsoleSessionStore } from './console-sessions';
export { OAuthStore } from './oauth';
export type { ClientExpiry, OAuthBinding, OAuthClientRecord, OAuthCodeRecord, OAuthGrantRecord, OAuthTokenRecord } from './oauth';
export type { ConsoleSessionRecord } from './console-sessions';
export { TriggerFormStore } from './trigger-forms';
export type { TriggerFormRecord } from './trigger-forms';
export { FinishedRunStore } from './finished-runs';
export type { FinishedRunRecord } from './finished-runs';
export type {
  AdminTokensTable, ApiKeysTable, AuditRecordsTable, ConnectionStatesTable, ConsoleSessionsTable, TriggerFormsTable, ConnectionsTable, Database, DatabaseConfig, FinishedRunsTable, OrgsTable, ToolServersTable, TriggerSchedulesTable, TriggersTable, WebhookSecretsTable, WorkflowsTable,
  WorkflowVersionsTable,
} from './db';
export { MemberStore } from './members';
export type { IdentityProviderRecord, MemberCredentials, MemberRecord, MemberRemoval } from './members';
export { MIGRATIONS, MigrationError, migrateToLatest } from './migrations';
export { DEFAULT_ORG_ID, DEFAULT_ORG_NAME, OrgStore } from './orgs';
export type { AdminTokenGrant, Org } from './orgs';
export { Registry, openRegistry } from './registry';
export { RegistryError } from './store-support';
export type { RegistryErrorCode } from './store-support';
export { ToolServerStore, newToolServerId } from './tool-servers';
export type { ConnectionStateRecord, ConnectionStatus, ToolServerKind, ToolServerRecord } from './tool-servers';
export { TriggerScheduleStore } from './trigger-schedules';
export type { ScheduleWrite, TriggerScheduleRecord } from './trigger-schedules';
export { TriggerStore } from './triggers';
export type { CreateTriggerInput, DesignatedOutput, TriggerConcurrency, TriggerRecord, TriggerTool } from './triggers';
export { WebhookSecretStore } from './webhook-secrets';
export type { WebhookSecretRecord } from './webhook-secrets';
export { WorkflowStore, canonicalJson, nextStepMap } from './workflows';
export type { WorkflowRecord, WorkflowVersion } from './workflows';
