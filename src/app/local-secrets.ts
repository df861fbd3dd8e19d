/**
 * The start-up warning of a replica that keeps keys or blobs in its own data dir.
 */
import type { Config } from '../config/config';
import type { Logger } from '../observability/logger';

/**
 * A gateway or worker replica that keeps its keys or blobs in its own data dir cannot check the links
 * and tokens another replica signed, open the credentials it sealed or read the files it stored,
 * unless they share that dir.
 */
export function warnAboutLocalSecrets(config: Readonly<Config>, log: Logger): void {
  const local = [
    config.signingKey === undefined ? 'FLOWGATE_SIGNING_KEY' : undefined,
    config.connectionKey === undefined ? 'FLOWGATE_CONNECTION_KEY' : undefined,
    config.dataEncryption.enabled && config.dataEncryption.keys === undefined ? 'FLOWGATE_DATA_KEYS' : undefined,
    config.role === 'gateway' && config.adminToken === undefined ? 'FLOWGATE_ADMIN_TOKEN' : undefined,
    config.blobStore.kind === 'local' ? 'FLOWGATE_BLOB_STORE' : undefined,
  ].filter((name) => name !== undefined);
  if (local.length === 0) return;
  log.warn(`${local.join(', ')} unset: this ${config.role} keeps that in its data dir (${config.dataDir}); replicas that do not share that dir must all be given the same value`);
}
