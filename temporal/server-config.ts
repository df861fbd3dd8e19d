/**
 * The configuration files of the embedded Temporal server (temporal/embedded.ts): the server's
 * static YAML (persistence, the four services and their ports, cluster metadata) and its dynamic
 * configuration file, and the Web UI server's YAML. One machine, loopback only, no auth: the server
 * listens on the host flowgate gives it (127.0.0.1 by default) and nowhere else.
 */
import { stringify } from 'yaml';

/** Where the server keeps its state. */
export type Persistence =
  | { kind: 'sqlite'; /** undefined: in memory (tests) */ file?: string; memoryName: string }
  | { kind: 'postgres'; host: string; port: number; user: string; password: string; database: string; visibilityDatabase: string; maxConns: number };

/** The ports of one embedded server: the frontend's, and the ones derived from it (internalPorts). */
export interface ServerPorts {
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  metrics: number;
  /** ringpop's, one per service; PostgreSQL keeps them in a smallint column, so below 32768 */
  membership: { frontend: number; history: number; matching: number; worker: number };
}

/**
 * The ports a server on `frontend` uses. Temporal's own defaults around 7233 (history 7234, matching
 * 7235, worker 7239, membership 6933-6939, HTTP 7243); elsewhere the next four ports and a
 * membership block below 32768. Fixed by the frontend port, so that a server restarted on the same
 * database finds its services where the membership table left them.
 */
export function internalPorts(frontend: number): ServerPorts {
  if (frontend === 7233) {
    return {
      frontend, history: 7234, matching: 7235, worker: 7239, frontendHttp: 7243, metrics: 7244,
      membership: { frontend: 6933, history: 6934, matching: 6935, worker: 6939 },
    };
  }
  const base = frontend - 300 >= 1024 && frontend - 300 + 3 < 32768 ? frontend - 300 : 1024 + (frontend % 30_000);
  return {
    frontend, history: frontend + 1, matching: frontend + 2, worker: frontend + 3, frontendHttp: frontend + 4, metrics: frontend + 5,
    membership: { frontend: base, history: base + 1, matching: base + 2, worker: base + 3 },
  };
}

/** Every port the server binds, for a check that they are free before it starts. */
export function allPorts(ports: ServerPorts): number[] {
  return [ports.frontend, ports.frontendHttp, ports.history, ports.matching, ports.worker, ports.metrics, ...Object.values(ports.membership)];
}

export interface ServerConfigOptions {
  ip: string;
  ports: ServerPorts;
  persistence: Persistence;
  /** fixed at a database's first start (the server refuses another count later) */
  historyShards: number;
  dynamicConfigFile: string;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
}

function host(ip: string): string {
  return ip.includes(':') ? `[${ip}]` : ip;
}

function sqlStore(persistence: Persistence, visibility: boolean): Record<string, unknown> {
  if (persistence.kind === 'sqlite') {
    return {
      pluginName: 'sqlite',
      databaseName: persistence.file ?? persistence.memoryName,
      connectAddr: 'localhost',
      connectProtocol: 'tcp',
      // `setup`: the schema is made on first use of a new file; WAL, because the default journal
      // makes file persistence an order of magnitude slower; one connection, as the CLI's dev
      // server has it (SQLite has one writer)
      connectAttributes: persistence.file === undefined
        ? { mode: 'memory', cache: 'shared' }
        : { mode: 'rwc', setup: 'true', journal_mode: 'wal', synchronous: 'NORMAL', busy_timeout: '10000' },
      maxConns: 1,
      maxIdleConns: 1,
    };
  }
  return {
    pluginName: 'postgres12',
    databaseName: visibility ? persistence.visibilityDatabase : persistence.database,
    connectAddr: `${host(persistence.host)}:${persistence.port}`,
    connectProtocol: 'tcp',
    user: persistence.user,
    password: persistence.password,
    maxConns: visibility ? Math.max(2, Math.ceil(persistence.maxConns / 5)) : persistence.maxConns,
    maxIdleConns: visibility ? Math.max(2, Math.ceil(persistence.maxConns / 5)) : persistence.maxConns,
    maxConnLifetime: '1h',
  };
}

/** The server's static configuration (`server --config-file <file> start`). */
export function serverConfigYaml(options: ServerConfigOptions): string {
  const { ip, ports, persistence } = options;
  const rpc = (grpcPort: number, membershipPort: number, httpPort?: number): Record<string, unknown> => ({
    rpc: { grpcPort, membershipPort, bindOnIP: ip, ...(httpPort === undefined ? {} : { httpPort }) },
  });
  const stores = persistence.kind === 'sqlite'
    ? { defaultStore: 'default', visibilityStore: 'default', datastores: { default: { sql: sqlStore(persistence, false) } } }
    : { defaultStore: 'default', visibilityStore: 'visibility', datastores: { default: { sql: sqlStore(persistence, false) }, visibility: { sql: sqlStore(persistence, true) } } };
  const frontend = `${host(ip)}:${ports.frontend}`;
  return stringify({
    log: { stdout: true, level: options.logLevel ?? 'warn' },
    persistence: { ...stores, numHistoryShards: options.historyShards },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: ip },
      metrics: { prometheus: { listenAddress: `${host(ip)}:${ports.metrics}`, handlerPath: '/metrics', timerType: 'histogram' } },
    },
    services: {
      frontend: rpc(ports.frontend, ports.membership.frontend, ports.frontendHttp),
      history: rpc(ports.history, ports.membership.history),
      matching: rpc(ports.matching, ports.membership.matching),
      worker: rpc(ports.worker, ports.membership.worker),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: { active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: frontend, httpAddress: `${host(ip)}:${ports.frontendHttp}` } },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
    publicClient: { hostPort: frontend },
    dynamicConfigClient: { filepath: options.dynamicConfigFile, pollInterval: '10s' },
  });
}

export interface DynamicConfigOptions {
  /** fair dispatch across fairness keys (organizations): `matching.enableFairness` */
  fairness: boolean;
  /** how often a queue's progress is written (a server that defers fairness for a backlog writes it often) */
  ackInterval?: string;
  /** more keys, each with one unconstrained value (EmbeddedOptions.dynamicConfig) */
  extra?: Record<string, unknown>;
}

/** The dynamic configuration: what the CLI's dev server set, and flowgate's fairness. */
export function dynamicConfigYaml(options: DynamicConfigOptions): string {
  const value = (v: unknown): { value: unknown }[] => [{ value: v }];
  return stringify({
    // search attributes visible at once when flowgate adds its own at start
    'system.forceSearchAttributesCacheRefreshOnRead': value(true),
    // with that cache off, persistence takes more reads (the CLI's dev server's figures)
    'frontend.persistenceMaxQPS': value(10_000),
    'history.persistenceMaxQPS': value(45_000),
    'matching.persistenceMaxQPS': value(10_000),
    'history.hostLevelCacheMaxSize': value(8096),
    'frontend.namespaceRPS.visibility': value(100),
    // a namespace registered at start is usable by every service within seconds, not the default 10 s
    'system.namespaceCacheRefreshInterval': value('2s'),
    ...(options.fairness ? { 'matching.enableFairness': value(true) } : {}),
    ...(options.ackInterval ? { 'matching.updateAckInterval': value(options.ackInterval) } : {}),
    ...Object.fromEntries(Object.entries(options.extra ?? {}).map(([key, v]) => [key, value(v)])),
  });
}

export interface UiConfigOptions {
  ip: string;
  port: number;
  temporalAddress: string;
  namespace: string;
  /** flowgate's `/codec`; the browser sends the sign-in cookie with each call */
  codecEndpoint?: string;
}

/** The Web UI server's configuration (`ui-server --root <dir> --env flowgate start`: <dir>/config/flowgate.yaml). */
export function uiConfigYaml(options: UiConfigOptions): string {
  return stringify({
    temporalGrpcAddress: options.temporalAddress,
    host: options.ip,
    port: options.port,
    enableUi: true,
    defaultNamespace: options.namespace,
    notifyOnNewVersion: false,
    showTemporalSystemNamespace: false,
    // the codec sign-in cookie is HttpOnly and SameSite=Strict; the UI's calls must carry it. The UI
    // shows the error message and link when the codec refuses it (no sign-in): back to the console.
    codec: options.codecEndpoint ? {
      endpoint: options.codecEndpoint, includeCredentials: true, passAccessToken: false,
      defaultErrorMessage: 'Not signed in to flowgate\'s codec: open the run from the flowgate console ("Open in the Temporal Web UI"), signed in as the instance administrator',
      defaultErrorLink: `${options.codecEndpoint.replace(/\/codec$/, '')}/console/runs`,
    } : {},
    cors: { cookieInsecure: true },
  });
}
