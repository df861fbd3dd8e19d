/**
 * What a tool-server kind is and what it is given: the types every kind's folder imports, apart
 * from the list of built-in kinds (index.ts), which imports every kind.
 */
import type { AgentService } from '../../agents/service';
import type { Config } from '../../config/config';
import type { ToolEntry, ToolServer } from '../server';

/**
 * What the agent-management server asks of the agent service, which the composition root builds
 * once (src/app/services.ts) for every door: the tools, /api/v1/agents and MCP tasks.
 */
export type AgentOperations = Pick<AgentService,
  'create' | 'list' | 'read' | 'update' | 'remove' | 'invoke' | 'status' | 'createChat' | 'listChats' | 'resetChat' | 'artifacts'>;

export interface ServerKindDeps {
  config: Pick<Readonly<Config>, 'searchUrl' | 'agentWaitSeconds'>;
  /** the agent service, where the process has one; without it there is no agent-management server */
  agents?: AgentOperations;
  /** every server an organization may use (the catalog) */
  servers(orgId: string): Promise<ToolServer[]>;
  /** the tools one server lists for an organization */
  tools(server: ToolServer, orgId: string, signal: AbortSignal): Promise<readonly ToolEntry[]>;
}

export interface ServerKind {
  kind: string;
  create(deps: ServerKindDeps): ToolServer | undefined;
}
