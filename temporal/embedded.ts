/**
 * The embedded Temporal: the Temporal server binary (temporal/server-binaries.ts) with its four
 * services in one process, and its Web UI server, started by `npm start` when TEMPORAL_ADDRESS is
 * unset (and by the test suite). Two shapes (FLOWGATE_EMBEDDED_TEMPORAL, docs/operations.md):
 * - `dev`, the default: SQLite in the data dir (WAL), one history shard; a file left by an older
 *   Temporal is upgraded first (temporal/sqlite-upgrade.ts); in memory for tests;
 * - `postgres`: PostgreSQL persistence and visibility in databases of their own, created or upgraded
 *   with Temporal's SQL tool (temporal/postgres-schema.ts), several history shards.
 * Both with fairness across organizations on, the namespace registered and the Web UI decoding
 * through flowgate's codec endpoint.
 *
 * Each process runs under a guardian (temporal/guardian.ts) that stops it within seconds of this
 * process ending, however it ends; a server whose guardian died too is found through its pid file
 * and stopped by the next start (temporal/orphan.ts). A server that exits on its own while
 * flowgate runs (a crash, a kill) is started again on the same ports and database.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnGuarded, STOP_GRACE_MS, type Guarded } from './guarded-process';
import { queuedLegacyTasks } from './legacy-backlog';
import { reclaimOrphan } from './orphan';
import { portFreeSoon } from './ports';
import { ensurePostgresSchema, type PostgresTarget } from './postgres-schema';
import { allPorts, dynamicConfigYaml, internalPorts, serverConfigYaml, uiConfigYaml, type Persistence } from './server-config';
import type { ServerBinaries } from './server-binaries';
import { ExitedDuringStart, untilHttp, untilReady } from './readiness';
import { upgradeSqliteSchema } from './sqlite-upgrade';

/** How often a server that defers fairness for a backlog (temporal/legacy-backlog.ts) records its queues' progress. */
const LEGACY_ACK_INTERVAL = '5s';
/** How many times a server that exits on its own is started again within RESTART_WINDOW_MS before flowgate gives up on it. */
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 5 * 60_000;

export type EmbeddedKind = 'dev' | 'postgres';

export type EmbeddedPersistence =
  /** `file` undefined: in memory (tests) */
  | { kind: 'sqlite'; file?: string }
  | { kind: 'postgres'; target: PostgresTarget; /** where the config and pid files go */ stateDir: string };

export interface EmbeddedOptions {
  binaries: ServerBinaries;
  /** the Web UI server binary; with uiPort */
  uiServer?: string;
  ip?: string;
  /** the frontend's gRPC port; the others derive from it (internalPorts) */
  port: number;
  /** undefined: no Web UI */
  uiPort?: number;
  /** where the Web UI decodes payloads (flowgate's `/codec`); the operator signs in there first */
  uiCodecEndpoint?: string;
  persistence: EmbeddedPersistence;
  namespace: string;
  /** fixed at a database's first start; default 1 on SQLite, 4 on PostgreSQL */
  historyShards?: number;
  startTimeoutMs?: number;
  /** told of orphans stopped, fairness deferred, schema upgrades and restarts */
  notice?: (message: string) => void;
  /**
   * Fair dispatch across fairness keys (organizations) on the task queues, `matching.enableFairness`
   * (src/common/priority.ts); default true. A SQLite database holding tasks queued without it starts
   * without it once more (temporal/legacy-backlog.ts).
   */
  fairness?: boolean;
  /**
   * More dynamic configuration, over flowgate's own (temporal/server-config.ts): a test's or a
   * benchmark's limits (a namespace's rate, history cache sizes); unset in production use.
   */
  dynamicConfig?: Record<string, unknown>;
}

export interface EmbeddedTemporal {
  kind: EmbeddedKind;
  address: string;
  uiUrl?: string;
  /** the server's own Prometheus metrics */
  metricsUrl: string;
  /** whether it dispatches fairly across fairness keys */
  fairness: boolean;
  /** the server's process now (benchmarks read its CPU time; tests kill it) */
  pid(): number | undefined;
  /** how many times the server was started again after it exited on its own */
  restarts(): number;
  stop(): Promise<void>;
}

/** The files of one embedded server: its configuration, its dynamic configuration, its pid file. */
interface StateFiles {
  config: string;
  dynamicConfig: string;
  pidFile: string;
  uiRoot: string;
  uiPidFile: string;
  /** a directory to remove at stop (an in-memory server's) */
  scratch?: string;
}

/** Beside the database (or the PostgreSQL shape's state dir): names the server running on it, its guardian and the flowgate that started them. */
export function serverPidFile(stateKey: string): string {
  return `${stateKey}.pid`;
}

/** The key an embedded server's files are named after: the SQLite file, or `<state dir>/temporal-postgres`. */
export function stateKeyOf(persistence: EmbeddedPersistence): string | undefined {
  if (persistence.kind === 'sqlite') return persistence.file;
  return path.join(persistence.stateDir, 'temporal-postgres');
}

async function stateFiles(persistence: EmbeddedPersistence): Promise<StateFiles> {
  const key = stateKeyOf(persistence);
  if (key !== undefined) {
    return { config: `${key}.server.yaml`, dynamicConfig: `${key}.dynamic.yaml`, pidFile: serverPidFile(key), uiRoot: `${key}.ui`, uiPidFile: `${key}.ui.pid` };
  }
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'flowgate-temporal-'));
  return { config: path.join(scratch, 'server.yaml'), dynamicConfig: path.join(scratch, 'dynamic.yaml'), pidFile: '-', uiRoot: path.join(scratch, 'ui'), uiPidFile: '-', scratch };
}

/** How many times a start is tried when the server exits before it is ready. */
const START_ATTEMPTS = 3;

export async function startEmbeddedTemporal(options: EmbeddedOptions): Promise<EmbeddedTemporal> {
  const ip = options.ip ?? '127.0.0.1';
  const kind: EmbeddedKind = options.persistence.kind === 'sqlite' ? 'dev' : 'postgres';
  const ports = internalPorts(options.port);
  const files = await stateFiles(options.persistence);
  const persistent = files.scratch === undefined;
  const notice = options.notice ?? (() => undefined);
  try {
    if (persistent) await reclaimOrphan({ pidFile: files.pidFile, configFile: files.config, graceMs: STOP_GRACE_MS, notice });
    if (persistent && options.uiPort !== undefined) await reclaimOrphan({ pidFile: files.uiPidFile, configFile: files.uiRoot, graceMs: STOP_GRACE_MS, notice });
    await preparePersistence(options, notice);
    const persistence: Persistence = options.persistence.kind === 'sqlite'
      ? { kind: 'sqlite', file: options.persistence.file, memoryName: `flowgate-${process.pid}-${Date.now()}` }
      : { kind: 'postgres', ...options.persistence.target, maxConns: 20 };
    const wanted = options.fairness ?? true;
    const fairness = wanted && await fairnessSafe(options.persistence, notice);
    await fs.mkdir(path.dirname(files.config), { recursive: true });
    await fs.writeFile(files.dynamicConfig, dynamicConfigYaml({ fairness, ...(wanted && !fairness ? { ackInterval: LEGACY_ACK_INTERVAL } : {}), ...(options.dynamicConfig ? { extra: options.dynamicConfig } : {}) }), { mode: 0o600 });
    // the configuration names the database's password, when PostgreSQL has one
    await fs.writeFile(files.config, serverConfigYaml({
      ip, ports, persistence, historyShards: options.historyShards ?? (kind === 'dev' ? 1 : 4), dynamicConfigFile: path.resolve(files.dynamicConfig),
    }), { mode: 0o600 });

    const address = `${ip.includes(':') ? `[${ip}]` : ip}:${ports.frontend}`;
    const startServer = (): Promise<Guarded> => withRetries(notice, async () => {
      for (const port of allPorts(ports)) {
        if (!(await portFreeSoon(port, ip, persistent ? 5000 : 0))) {
          throw new Error(port === options.port
            ? `port ${port} on ${ip} is taken: set TEMPORAL_ADDRESS=${address} to use the Temporal server already there, or TEMPORAL_DEV_PORT to another port`
            : `port ${port} on ${ip}, which the embedded Temporal server derives from TEMPORAL_DEV_PORT ${options.port}, is taken: set TEMPORAL_DEV_PORT to another port`);
        }
      }
      const server = spawnGuarded(files.pidFile, options.binaries.server, ['--config-file', files.config, '--allow-no-auth', 'start']);
      await untilReady(server, address, options.namespace, kind, options.startTimeoutMs ?? 120_000);
      return server;
    });
    let server = await startServer();

    let ui: Guarded | undefined;
    let uiUrl: string | undefined;
    if (options.uiPort !== undefined && options.uiServer) {
      if (!(await portFreeSoon(options.uiPort, ip, persistent ? 5000 : 0))) {
        await server.stop();
        throw new Error(`Temporal UI port ${options.uiPort} on ${ip} is taken: set TEMPORAL_UI_PORT to another port`);
      }
      await fs.mkdir(path.join(files.uiRoot, 'config'), { recursive: true });
      await fs.writeFile(path.join(files.uiRoot, 'config', 'flowgate.yaml'), uiConfigYaml({
        ip, port: options.uiPort, temporalAddress: address, namespace: options.namespace, ...(options.uiCodecEndpoint ? { codecEndpoint: options.uiCodecEndpoint } : {}),
      }));
      ui = spawnGuarded(files.uiPidFile, options.uiServer, ['--root', files.uiRoot, '--env', 'flowgate', 'start']);
      uiUrl = `http://${ip.includes(':') ? `[${ip}]` : ip}:${options.uiPort}`;
      await untilHttp(ui, uiUrl, 60_000).catch(async (err: unknown) => {
        await server.stop();
        throw err;
      });
    }

    // Started again when it exits on its own, on the same ports and database; given up after
    // MAX_RESTARTS within RESTART_WINDOW_MS (flowgate's health then says Temporal is down).
    let stopping = false;
    let restarts = 0;
    const recent: number[] = [];
    const supervise = (current: Guarded): void => {
      void current.exited.then(async (how) => {
        if (stopping) return;
        const now = Date.now();
        recent.push(now);
        while (recent.length > 0 && recent[0]! < now - RESTART_WINDOW_MS) recent.shift();
        if (recent.length > MAX_RESTARTS) {
          notice(`the embedded Temporal server exited (${how}) ${recent.length} times within ${RESTART_WINDOW_MS / 60_000} minutes: not starting it again; restart flowgate`);
          return;
        }
        notice(`the embedded Temporal server exited on its own (${how}): starting it again`);
        try {
          server = await startServer();
          restarts++;
          notice(`the embedded Temporal server is back at ${address}`);
          if (stopping) await server.stop();
          else supervise(server);
        } catch (err) {
          notice(`the embedded Temporal server could not be started again: ${err instanceof Error ? err.message : String(err)}`);
        }
      });
    };
    supervise(server);

    return {
      kind,
      address,
      uiUrl,
      metricsUrl: `http://${ip.includes(':') ? `[${ip}]` : ip}:${ports.metrics}/metrics`,
      fairness,
      pid: () => server.pid(),
      restarts: () => restarts,
      async stop() {
        stopping = true;
        await ui?.stop();
        await server.stop();
        if (files.scratch) await fs.rm(files.scratch, { recursive: true, force: true });
      },
    };
  } catch (err) {
    if (files.scratch) await fs.rm(files.scratch, { recursive: true, force: true });
    throw err;
  }
}

async function withRetries<T>(notice: (message: string) => void, attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof ExitedDuringStart) || n >= START_ATTEMPTS) throw err;
      notice(`${err.message}; starting it again (try ${n + 1} of ${START_ATTEMPTS})`);
      await new Promise((resolve) => setTimeout(resolve, 500 * n));
    }
  }
}

/** Brings the database up to this server's schema before it starts. */
async function preparePersistence(options: EmbeddedOptions, notice: (message: string) => void): Promise<void> {
  const persistence = options.persistence;
  if (persistence.kind === 'postgres') {
    if (!options.binaries.sqlTool) throw new Error('the PostgreSQL-backed embedded Temporal needs Temporal\'s SQL tool beside the server binary (`sql`)');
    await ensurePostgresSchema(options.binaries.sqlTool, persistence.target, notice);
    return;
  }
  if (persistence.file === undefined || !(await fs.stat(persistence.file).catch(() => undefined))) return;
  if (!options.binaries.sqliteSchemaDir) {
    notice(`no SQLite schema files beside ${options.binaries.server}: ${persistence.file} is used as it is`);
    return;
  }
  const upgraded = await upgradeSqliteSchema(persistence.file, options.binaries.sqliteSchemaDir);
  if (upgraded.created.length > 0 || upgraded.visibilityRows !== undefined) {
    notice(`upgraded ${persistence.file} to this Temporal's schema: ${[
      ...(upgraded.created.length > 0 ? [`created ${upgraded.created.join(', ')}`] : []),
      ...(upgraded.visibilityRows !== undefined ? [`rebuilt the visibility table (${upgraded.visibilityRows} workflow executions)`] : []),
    ].join('; ')}`);
  }
}

/** False while the SQLite database holds tasks queued without fairness (temporal/legacy-backlog.ts). */
async function fairnessSafe(persistence: EmbeddedPersistence, notice: (message: string) => void): Promise<boolean> {
  if (persistence.kind !== 'sqlite' || persistence.file === undefined) return true;
  let queued: number;
  try {
    queued = await queuedLegacyTasks(persistence.file);
  } catch (err) {
    notice(`could not read the queued tasks of ${persistence.file} (${err instanceof Error ? err.message : String(err)}): the embedded Temporal starts without fairness across organizations`);
    return false;
  }
  if (queued === 0) return true;
  notice(`${persistence.file} holds ${queued} task(s) queued before fairness across organizations was enabled: the embedded Temporal starts without it this time so that they run; the next start enables it`);
  return false;
}
