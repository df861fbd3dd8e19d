/**
 * The tool gateway's parts, assembled once at start: the built-in servers (web-search when a
 * search URL is configured, mail, the /mcp catalog), the connection store and the dispatcher.
 */
import type { BlobStore } from '../blob-store';
import type { Config } from '../config';
import type { Logger } from '../logger';
import type { Registry } from '../registry';
import type { SignedUrlSigner } from '../signed-urls';
import { connectionKeyFile, createConnectionCipher, parseConnectionKey } from './connection-cipher';
import { ConnectionStore } from './connections';
import { ToolDispatcher } from './dispatcher';
import { discoveryServer } from './servers/discovery';
import { MAIL_APPLICATION, MailCredentialsSchema, mailServer } from './servers/mail';
import { webSearchServer } from './servers/web-search';
import type { OrgServerProvider, ToolServer } from './types';

export { ToolCallError, ToolDispatcher, type CallOptions, type ToolCaller } from './dispatcher';
export { ConnectionStore, type ConnectionSummary } from './connections';
export { createRuntimeTokens, type RuntimePrincipal, type RuntimeTokens } from './runtime-token';
export type { OrgServerProvider, ToolDefinition, ToolResult, ToolServer } from './types';
export { ToolFailure } from './types';

/** Applications a connection can be for, each with the shape of its credentials. */
export const APPLICATIONS = {
  [MAIL_APPLICATION]: MailCredentialsSchema,
} as const;

export interface ToolGatewayDeps {
  config: Pick<Readonly<Config>, 'dataDir' | 'searchUrl' | 'connectionKey' | 'allowPrivateNetwork'>;
  registry: Registry;
  blobs: BlobStore;
  signer: Pick<SignedUrlSigner, 'verify'>;
  log: Logger;
  /** custom servers per organization (tests use it for a conformance profile and scoping checks) */
  orgServers?: OrgServerProvider;
}

export async function createToolDispatcher(deps: ToolGatewayDeps): Promise<ToolDispatcher> {
  const key = deps.config.connectionKey === undefined ? await connectionKeyFile(deps.config.dataDir) : parseConnectionKey(deps.config.connectionKey);
  if (!key) throw new Error('FLOWGATE_CONNECTION_KEY is not a 32-byte key');
  const connections = new ConnectionStore(deps.registry, createConnectionCipher(key));
  const builtIns: ToolServer[] = [];
  const dispatcher = new ToolDispatcher({ builtIns, orgServers: deps.orgServers, connections, log: deps.log });
  builtIns.push(discoveryServer({ servers: (orgId) => dispatcher.servers(orgId), connections }));
  if (deps.config.searchUrl !== undefined) builtIns.push(webSearchServer({ url: deps.config.searchUrl }));
  builtIns.push(mailServer({ blobs: deps.blobs, signer: deps.signer, allowPrivateNetwork: deps.config.allowPrivateNetwork }));
  return dispatcher;
}
