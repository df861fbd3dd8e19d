/**
 * The built-in server kinds. Adding a kind is one module under servers/ and one entry here: its
 * `create` gets the gateway's configuration and the catalog, and answers its server (or
 * undefined when the configuration leaves it off, as web-search without a search URL).
 */
import type { Config } from '../../config/config';
import type { Registry } from '../../registry';
import type { ToolEntry, ToolServer } from '../server';
import { codeAgentServer } from './codeagent';
import { agentManagementServer } from './agent-management';
import { discoveryServer } from './discovery/index';
import { mailServer } from './mail';
import { webSearchServer } from './web-search/index';

export interface ServerKindDeps {
  config: Pick<Readonly<Config>, 'searchUrl'> & Partial<Pick<Readonly<Config>, 'llm' | 'agentWaitSeconds' | 'temporal'>>;
  /** the registry, where the process has one (agents are stored there) */
  registry?: Registry;
  /** every server an organization may use (the catalog) */
  servers(orgId: string): Promise<ToolServer[]>;
  /** the tools one server lists for an organization */
  tools(server: ToolServer, orgId: string, signal: AbortSignal): Promise<readonly ToolEntry[]>;
}

export interface ServerKind {
  kind: string;
  create(deps: ServerKindDeps): ToolServer | undefined;
}

export const BUILT_IN_SERVER_KINDS: readonly ServerKind[] = [
  { kind: 'discovery', create: (deps) => discoveryServer(deps) },
  { kind: 'web-search', create: ({ config }) => (config.searchUrl === undefined ? undefined : webSearchServer({ url: config.searchUrl })) },
  { kind: 'mail', create: () => mailServer() },
  { kind: 'codeagent', create: () => codeAgentServer() },
  { kind: 'agent-management', create: (deps) => agentManagementServer(deps) },
];
