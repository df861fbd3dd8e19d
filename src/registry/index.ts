export { createDb, dbErrorCode } from './db';
export type {
  AdminTokensTable, ApiKeysTable, ConnectionsTable, Database, DatabaseConfig, OrgsTable, TriggersTable, WorkflowsTable,
  WorkflowVersionsTable,
} from './db';
export { MIGRATIONS, MigrationError, migrateToLatest } from './migrations';
export {
  DEFAULT_ORG_ID, DEFAULT_ORG_NAME, Registry, RegistryError, canonicalJson, newConnectionId, nextStepMap, openRegistry,
} from './registry';
export type {
  AdminTokenGrant, ApiKeyRecord, ConnectionRecord, CreateTriggerInput, DesignatedOutput, Org, RegistryErrorCode, TriggerRecord,
  WorkflowRecord, WorkflowVersion,
} from './registry';
export { ToolServerStore, newToolServerId } from './tool-servers';
export type { ConnectionStateRecord, ConnectionStatus, ToolServerKind, ToolServerRecord } from './tool-servers';
