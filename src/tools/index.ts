/**
 * The tool gateway's parts, assembled once at start: the built-in server kinds (servers/index.ts),
 * any extra kinds and per-organization sources, the catalog over them, the connection store and
 * the dispatcher.
 */
import type { Client } from '@temporalio/client';
import type { BlobStore } from '../blobs/blob-store';
import type { Config } from '../config/config';
import type { Logger } from '../observability/logger';
import type { FlowgateMetrics } from '../observability/metrics';
import type { Registry } from '../registry';
import type { SignedUrlSigner } from '../crypto/signed-urls';
import { ToolCatalog } from './catalog';
import type { ConnectionCipher } from '../crypto/connection-cipher';
import { ConnectionStore } from './connections';
import { ToolDispatcher, type DurableRunner } from './dispatcher';
import { BUILT_IN_SERVER_KINDS, type AgentOperations, type ServerKind } from './servers';
import { CUSTOM_APPLICATION, CustomCredentialsSchema } from './custom/credentials';
import { CODEAGENT_APPLICATION, CodeAgentCredentialsSchema } from './servers/codeagent';
import { MAIL_APPLICATION, MailCredentialsSchema } from './servers/mail';
import type { ServerSource, ToolServer } from './server';

export { ToolDispatcher, type CallOptions, type ToolCaller } from './dispatcher';
export { ConnectionStore, type ConnectionSummary } from './connections';
export { CustomServers } from './custom';
export { DurableCalls, durableTaskKind } from './custom/durable';
export { createRuntimeTokens, type RuntimePrincipal, type RuntimeTokens } from '../crypto/runtime-tokens';
export { BUILT_IN_SERVER_KINDS, type AgentOperations, type ServerKind, type ServerKindDeps } from './servers';
export { ToolCallError, ToolFailure } from './errors';
export type { CallContext, ServerSource, ToolEntry, ToolOutput, ToolResult, ToolServer } from './server';

/** Applications a connection can be for, each with the shape of its credentials. */
export const APPLICATIONS = {
  [MAIL_APPLICATION]: MailCredentialsSchema,
  [CODEAGENT_APPLICATION]: CodeAgentCredentialsSchema,
  [CUSTOM_APPLICATION]: CustomCredentialsSchema,
} as const;

export interface ToolGatewayDeps {
  config: Pick<Readonly<Config>, 'searchUrl' | 'allowPrivateNetwork' | 'agentWaitSeconds'>;
  registry: Registry;
  /** seals and opens connections' credentials (one cipher per process, from FLOWGATE_CONNECTION_KEY or the data dir) */
  connectionCipher: ConnectionCipher;
  /** the agent service behind the agent-management server (built once by the composition root) */
  agents?: AgentOperations;
  blobs: BlobStore;
  signer: Pick<SignedUrlSigner, 'sign' | 'verify'>;
  log: Logger;
  temporal?: Client;
  /** tool calls are counted here */
  metrics?: Pick<FlowgateMetrics, 'toolCall'>;
  /** server kinds besides the built-ins (tests register a tiny one) */
  serverKinds?: readonly ServerKind[];
  /** where organizations' own servers come from */
  serverSources?: readonly ServerSource[];
  /** runs calls of durable servers' tools as tasks (src/tools/custom/durable.ts) */
  durable?: DurableRunner;
}

export function createToolDispatcher(deps: ToolGatewayDeps): ToolDispatcher {
  const connections = new ConnectionStore(deps.registry, deps.connectionCipher);
  // kinds get the catalog lazily: the discovery server lists the very catalog it is part of
  const assembled: { dispatcher?: ToolDispatcher } = {};
  const ready = (): ToolDispatcher => {
    if (!assembled.dispatcher) throw new Error('the tool catalog is not assembled yet');
    return assembled.dispatcher;
  };
  const kindDeps = {
    config: deps.config,
    agents: deps.agents,
    servers: (orgId: string) => ready().servers(orgId),
    tools: (server: ToolServer, orgId: string, signal: AbortSignal) => ready().listOf(server, orgId, signal),
  };
  const builtIns = [...BUILT_IN_SERVER_KINDS, ...(deps.serverKinds ?? [])]
    .map((kind) => kind.create(kindDeps))
    .filter((server): server is ToolServer => server !== undefined);
  const dispatcher = new ToolDispatcher({
    catalog: new ToolCatalog(builtIns, deps.serverSources ?? []),
    metrics: deps.metrics,
    ...(deps.durable ? { durable: deps.durable } : {}),
    services: { blobs: deps.blobs, signer: deps.signer, connections, log: deps.log, allowPrivateNetwork: deps.config.allowPrivateNetwork, temporal: deps.temporal },
  });
  assembled.dispatcher = dispatcher;
  return dispatcher;
}
