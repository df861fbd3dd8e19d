/**
 * Connections to Temporal for the gateway (client) and the worker (native connection), and the
 * search attributes flowgate writes on every run so visibility can list an organization's runs.
 */
import { readFileSync } from 'node:fs';
import { Client, Connection, type ConnectionLike, type TLSConfig } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { NativeConnection } from '@temporalio/worker';
import { SEARCH_ATTRIBUTES } from '../src/common/search-attributes';
import type { Config } from '../src/config';


export type TemporalSettings = Pick<Config['temporal'], 'namespace' | 'apiKey' | 'tls' | 'tlsCertFile' | 'tlsKeyFile' | 'tlsCaFile' | 'tlsServerName'> & { address: string };

/** The TLS settings of both connections; the PEM files are read when connecting. */
export function tlsOptions(settings: Omit<TemporalSettings, 'namespace' | 'address'>): TLSConfig | undefined {
  if (!settings.tls) return undefined;
  const tls: TLSConfig = {};
  if (settings.tlsServerName) tls.serverNameOverride = settings.tlsServerName;
  if (settings.tlsCaFile) tls.serverRootCACertificate = readFileSync(settings.tlsCaFile);
  if (settings.tlsCertFile && settings.tlsKeyFile) {
    tls.clientCertPair = { crt: readFileSync(settings.tlsCertFile), key: readFileSync(settings.tlsKeyFile) };
  }
  return tls;
}

function connectionOptions(settings: TemporalSettings) {
  return { address: settings.address, tls: tlsOptions(settings), apiKey: settings.apiKey };
}

/** `tracing`: starting, signalling and querying a run carry the caller's trace into the workflow. */
function clientOn(connection: ConnectionLike, namespace: string, options: { tracing?: boolean }): Client {
  return new Client({
    connection, namespace,
    interceptors: options.tracing ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined,
  });
}

export async function connectClient(settings: TemporalSettings, options: { tracing?: boolean } = {}): Promise<Client> {
  return clientOn(await Connection.connect(connectionOptions(settings)), settings.namespace, options);
}

/**
 * A client over the worker's own native connection, for starts that ask for eager execution: the
 * server hands the run's first workflow task back in the start's answer, and this process's worker
 * runs it at once instead of waiting for it to be matched and polled. Only the Rust core's
 * connection can do that. It serves starts only: its calls cannot be cancelled with an AbortSignal,
 * which waiting for a result needs.
 */
export function eagerStartClient(connection: NativeConnection, namespace: string, options: { tracing?: boolean } = {}): Client {
  return clientOn(connection, namespace, options);
}

export async function connectWorker(settings: TemporalSettings): Promise<NativeConnection> {
  return NativeConnection.connect(connectionOptions(settings));
}

/**
 * Registers flowgate's search attributes. On a cluster where this credential may not (Temporal
 * Cloud), they must already exist; start fails with their names otherwise.
 */
export async function ensureSearchAttributes(client: Client, namespace: string): Promise<void> {
  const wanted = Object.values(SEARCH_ATTRIBUTES).map((key) => key.name);
  const { customAttributes } = await client.connection.operatorService.listSearchAttributes({ namespace });
  const missing = wanted.filter((name) => !(name in (customAttributes ?? {})));
  if (missing.length === 0) return;
  try {
    await client.connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((name) => [name, 2 /* INDEXED_VALUE_TYPE_KEYWORD */])),
    });
  } catch (err) {
    throw new Error(`flowgate needs the Keyword search attributes ${missing.join(', ')} in namespace ${namespace} and could not add them (${(err as Error).message}); add them with \`temporal operator search-attribute create\``);
  }
}
