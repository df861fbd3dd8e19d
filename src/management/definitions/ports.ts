/**
 * What apply writes through (definitions as code, write.ts and restore.ts): the management
 * operations and services the API uses, each narrowed to what apply needs and composed in
 * src/app/services.ts (connections: src/app/definition-ports.ts).
 */
import type { z } from 'zod';
import type { DurablePolicy } from '../../common/durable-call';
import type { DurableTools } from '../../common/durable-tools';
import type { CreateAgentInput, UpdateAgentInput } from '../../registry/agent-records';
import type { Registry } from '../../registry';
import type { Role } from '../../people/roles';
import type { Outcome } from '../outcome';
import type { TriggerAdmin } from '../triggers';
import type { WorkflowAdmin } from '../workflows';
import type { ConnectionOpener } from './live';

/** The custom servers' operations apply needs (src/tools/custom CustomServers). */
export interface ServerPort {
  register(orgId: string, input: ServerWrite): Promise<{ id: string }>;
  replace(orgId: string, id: string, input: ServerWrite): Promise<{ id: string } | undefined>;
  remove(orgId: string, id: string): Promise<boolean>;
}
/** `durable`, `durableTools`: the server's durable policy (a replace without them makes its calls plain proxied ones). */
export type ServerWrite = (
  | { kind: 'openapi'; name?: string; description?: string; connection: string; document: unknown }
  | { kind: 'remote'; name?: string; description?: string; connection?: string; url: string }
) & { durable?: DurablePolicy; durableTools?: DurableTools };

/** The agent service's operations apply needs (src/agents AgentService). */
export interface AgentPort {
  create(orgId: string, input: CreateAgentInput): Promise<{ id: string }>;
  update(orgId: string, id: string, patch: UpdateAgentInput): Promise<unknown>;
  remove(orgId: string, id: string): Promise<void>;
}

/** The connections' operations apply needs (src/tools ConnectionStore, composed in src/app/definition-ports.ts). */
export interface ConnectionPort {
  /** each application with the schema of its credentials */
  applications: Readonly<Record<string, z.ZodType>>;
  open: ConnectionOpener;
  create(orgId: string, application: string, name: string, credentials: Record<string, unknown>): Promise<{ id: string }>;
  /** new credentials (and name) for the connection, sealed again under its PCID */
  replace(orgId: string, id: string, name: string, credentials: Record<string, unknown>): Promise<boolean>;
  remove(orgId: string, id: string): Promise<boolean>;
}

/** The members' operations apply needs (MemberAdmin). */
export interface MemberPort {
  add(orgId: string, input: { email: string; role: Role }): Promise<Outcome<{ id: string }>>;
  update(orgId: string, id: string, change: { role: Role }): Promise<Outcome<unknown>>;
  remove(orgId: string, id: string): Promise<Outcome<unknown>>;
}

export interface DefinitionWriteDeps {
  registry: Registry;
  workflows: WorkflowAdmin;
  triggers: TriggerAdmin;
  servers: ServerPort;
  agents: AgentPort;
  connections: ConnectionPort;
  members: MemberPort;
}
