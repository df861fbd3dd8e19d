/**
 * The built-in server kinds. Adding a kind is one module under servers/ and one entry here: its
 * `create` gets the gateway's configuration and the catalog, and answers its server (or
 * undefined when the configuration leaves it off, as web-search without a search URL).
 */
import type { ServerKind } from './kind';
import { codeAgentServer } from './codeagent';
import { agentManagementServer } from './agent-management';
import { discoveryServer } from './discovery/index';
import { mailServer } from './mail';
import { webSearchServer } from './web-search/index';

export type { AgentOperations, ServerKind, ServerKindDeps } from './kind';

export const BUILT_IN_SERVER_KINDS: readonly ServerKind[] = [
  { kind: 'discovery', create: (deps) => discoveryServer(deps) },
  { kind: 'web-search', create: ({ config }) => (config.searchUrl === undefined ? undefined : webSearchServer({ url: config.searchUrl })) },
  { kind: 'mail', create: () => mailServer() },
  { kind: 'codeagent', create: () => codeAgentServer() },
  { kind: 'agent-management', create: (deps) => agentManagementServer(deps) },
];
