/**
 * Connections to Temporal for the gateway (client) and the worker (native connection), and the
 * search attributes flowgate writes on every run so visibility can list an organization's runs.
 * Every client carries flowgate's data converter (the run-data codec, src/crypto/payload-codec.ts).
 */
import { readFileSync } from 'node:fs';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, ServiceError, type ConnectionLike, type TLSConfig } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry-v2';
import { NativeConnection } from '@temporalio/worker';
import { SEARCH_ATTRIBUTES } from '../src/common/search-attributes';
import type { Config } from '../src/config/config';
import type { DataConverter } from '@temporalio/common';


export type TemporalSettings = Pick<Config['temporal'], 'namespace' | 'apiKey' | 'tls' | 'tlsCertFile' | 'tlsKeyFile' | 'tlsCaFile' | 'tlsServerName'> & { address: string };

/** How the gateway's connection behaves while Temporal is unreachable (FLOWGATE_TEMPORAL_UNREACHABLE_MS, FLOWGATE_TEMPORAL_RECONNECT_MS). */
export type ReachSettings = Pick<Config['temporal'], 'unreachableMs' | 'reconnectMs'>;

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

type GrpcInterceptor = ReturnType<typeof makeGrpcRetryInterceptor>;

/**
 * Temporal's own retry of a failed call (UNAVAILABLE and the other codes it retries, with its
 * backoff), cut off `budgetMs` after the call began, or at the call's deadline if that is sooner.
 * Temporal's makes ten attempts over about 20 s, so while Temporal was down a trigger call hung
 * 24-28 s before its 503. A call that Temporal answers is never cut short by this: only the pauses
 * between attempts are bounded.
 */
export function boundedRetryInterceptor(budgetMs: number): GrpcInterceptor {
  const temporalDefault = defaultGrpcRetryOptions();
  return (options, nextCall) => {
    const deadline = options.deadline === undefined ? Infinity : Number(options.deadline);
    const giveUpAt = Math.min(Date.now() + budgetMs, deadline);
    return makeGrpcRetryInterceptor({
      retryableDecider: (attempt, status) => Date.now() < giveUpAt && temporalDefault.retryableDecider(attempt, status),
      delayFunction: (attempt, status) => Math.min(temporalDefault.delayFunction(attempt, status), Math.max(0, giveUpAt - Date.now())),
    })(options, nextCall);
  };
}

/**
 * gRPC channel settings for a connection that must come back soon after Temporal does. gRPC waits
 * ever longer between reconnection attempts (up to 120 s): a gateway stayed unable to reach
 * Temporal for 80-95 s after it returned. Here the pause stays at most `reconnectMs`, and a host
 * name is looked up again as often (its address may have changed with the restart).
 */
export function reconnectChannelArgs(reconnectMs: number): Record<string, number> {
  return {
    'grpc.initial_reconnect_backoff_ms': Math.min(1000, reconnectMs),
    'grpc.max_reconnect_backoff_ms': reconnectMs,
    'grpc.dns_min_time_between_resolutions_ms': reconnectMs,
  };
}

/** gRPC status codes flowgate tells apart. */
export const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_RESOURCE_EXHAUSTED = 8;

/** The gRPC status code of a Temporal call that failed, if it failed with one. */
export function temporalStatusCode(err: unknown): number | undefined {
  return err instanceof ServiceError ? (err.cause as { code?: number } | undefined)?.code : undefined;
}

/** gRPC UNAVAILABLE / DEADLINE_EXCEEDED from Temporal: the service is down or unreachable. */
export function isTemporalUnavailable(err: unknown): boolean {
  const code = temporalStatusCode(err);
  return code === GRPC_UNAVAILABLE || code === GRPC_DEADLINE_EXCEEDED;
}

/**
 * gRPC RESOURCE_EXHAUSTED from Temporal: it is up but refuses the call for now (a namespace's rate
 * limit, Temporal Cloud's actions per second, a busy workflow or shard). Temporal's client retries
 * it within the same bounded budget as UNAVAILABLE; what is still refused after that is the
 * caller's to retry.
 */
export function isTemporalBusy(err: unknown): boolean {
  return temporalStatusCode(err) === GRPC_RESOURCE_EXHAUSTED;
}

/** @grpc/grpc-js ConnectivityState.READY: the channel has a live connection. */
const CHANNEL_READY = 2;

/**
 * Whether the client connection has a live connection to Temporal now. An idle channel is asked to
 * connect (so the next look may find it ready). Connections without a gRPC channel count as ready.
 */
export function channelReady(connection: ConnectionLike): boolean {
  // Connection keeps its grpc.Client protected; getChannel() and getConnectivityState() are grpc-js's public API.
  const grpcClient = (connection as unknown as { client?: { getChannel?(): { getConnectivityState(tryToConnect: boolean): number } } }).client;
  const channel = grpcClient?.getChannel?.();
  return channel === undefined || channel.getConnectivityState(true) === CHANNEL_READY;
}

export interface ClientOptions {
  /** starting, signalling and querying a run carry the caller's trace into the workflow */
  tracing?: boolean;
  /** the run-data codec every payload passes through (src/app/start.ts builds it) */
  dataConverter?: DataConverter;
}

function clientOn(connection: ConnectionLike, namespace: string, options: ClientOptions): Client {
  return new Client({
    connection, namespace, dataConverter: options.dataConverter,
    interceptors: options.tracing ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined,
  });
}

/**
 * The gateway's connection: its calls give up on an unreachable Temporal after `unreachableMs`
 * (the caller's 503), and it reconnects within about `reconnectMs` of Temporal's return.
 */
export async function connectClient(settings: TemporalSettings & ReachSettings, options: ClientOptions = {}): Promise<Client> {
  const connection = await Connection.connect({
    ...connectionOptions(settings),
    channelArgs: reconnectChannelArgs(settings.reconnectMs),
    interceptors: [boundedRetryInterceptor(settings.unreachableMs)],
  });
  return clientOn(connection, settings.namespace, options);
}

/**
 * A client over the worker's own native connection, for starts that ask for eager execution: the
 * server hands the run's first workflow task back in the start's answer, and this process's worker
 * runs it at once instead of waiting for it to be matched and polled. Only the Rust core's
 * connection can do that. It serves starts only: its calls cannot be cancelled with an AbortSignal,
 * which waiting for a result needs, and the Rust core retries an unreachable Temporal for about
 * 10 s whatever deadline a call carries (RunService bounds the wait for such a start itself).
 */
export function eagerStartClient(connection: NativeConnection, namespace: string, options: ClientOptions = {}): Client {
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
    throw new Error(`flowgate needs the Keyword search attributes ${missing.join(', ')} in namespace ${namespace} and could not add them (${(err as Error).message}); add them with \`temporal operator search-attribute create\``, { cause: err });
  }
}
