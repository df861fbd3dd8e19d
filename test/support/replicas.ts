/**
 * Gateway and worker replicas as child flowgate processes (`FLOWGATE_ROLE`), each with a data dir
 * of its own: what they must agree on comes from the environment (`replicaSecrets`), never from a
 * shared directory. Also a PostgreSQL schema of a test's own that child processes can be pointed
 * at through DATABASE_URL alone.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startMain, type Child } from './processes';
import { TEST_POSTGRES_URL } from './registry-dialects';

/** `all`: a gateway with a worker in the same process (eager starts go through the worker's connection) */
export type Role = 'gateway' | 'worker' | 'all';

export interface Replica {
  role: Role;
  /** `http://127.0.0.1:<port>` of a gateway (or `all`); undefined for a worker */
  url?: string;
  dataDir: string;
  child: Child;
  /** SIGKILL: no clean-up, as a crash; the data dir stays */
  kill(): Promise<void>;
  /** SIGTERM, then the data dir is removed (also after a kill) */
  stop(): Promise<void>;
}

/** The values every replica must share: the URL-signing key, the connection key, the admin token. */
export function replicaSecrets(): { FLOWGATE_SIGNING_KEY: string; FLOWGATE_CONNECTION_KEY: string; FLOWGATE_ADMIN_TOKEN: string } {
  return {
    FLOWGATE_SIGNING_KEY: randomBytes(32).toString('base64'),
    FLOWGATE_CONNECTION_KEY: randomBytes(32).toString('hex'),
    FLOWGATE_ADMIN_TOKEN: `fga_test_${randomUUID()}`,
  };
}

/**
 * Starts one replica with `env` (TEMPORAL_ADDRESS, FLOWGATE_TASK_QUEUE, DATABASE_URL, the secrets…)
 * in a fresh data dir (or `dataDir`, to share one with an in-process flowgate), a gateway on a free
 * port; resolves once it listens or polls.
 */
export async function startReplica(role: Role, env: Record<string, string>, options: { dataDir?: string; startTimeoutMs?: number } = {}): Promise<Replica> {
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), `flowgate-${role}-`));
  const child = startMain({ PORT: '0', ...env, FLOWGATE_ROLE: role, FLOWGATE_DATA_DIR: dataDir });
  const removeDir = (): void => {
    if (ownDir) rmSync(dataDir, { recursive: true, force: true });
  };
  let url: string | undefined;
  try {
    // a worker bundles the workflow code first: on a loaded machine that alone can take a minute
    const timeoutMs = options.startTimeoutMs ?? 240_000;
    if (role === 'worker') await child.waitForLine(/worker polling task queue/, timeoutMs);
    else url = (await child.waitForLine(/gateway listening on (\S+)/, timeoutMs))[1];
  } catch (err) {
    child.process.kill('SIGKILL');
    await child.exited;
    removeDir();
    throw err;
  }
  const ended = (): boolean => child.process.exitCode !== null || child.process.signalCode !== null;
  return {
    role, url, dataDir, child,
    async kill() {
      if (!ended()) child.process.kill('SIGKILL');
      await child.exited;
    },
    async stop() {
      if (!ended()) child.process.kill('SIGTERM');
      await child.exited;
      removeDir();
    },
  };
}

/**
 * A gateway or a worker process beside a test flowgate: its Temporal, task queue, admin token and
 * data dir (registry, blobs, keys), private upstreams allowed and no rate limit (the kill tests').
 */
export function startBeside(fg: { taskQueue: string; adminToken: string; dataDir: string }, temporalAddress: string, role: Role): Promise<Replica> {
  return startReplica(role, {
    TEMPORAL_ADDRESS: temporalAddress, FLOWGATE_TASK_QUEUE: fg.taskQueue, FLOWGATE_ADMIN_TOKEN: fg.adminToken,
    FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true', FLOWGATE_RATE_LIMIT_PER_MINUTE: '0',
  }, { dataDir: fg.dataDir });
}

export interface PostgresSchema {
  /** DATABASE_URL whose sessions work in the schema (`options=-c search_path=…`) */
  url: string;
  schema: string;
  drop(): Promise<void>;
}

async function withClient<T>(use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh schema in the test database: the registry's tables and the shared rate-limit table of
 * the processes given `url` land there, apart from every other test's.
 */
export async function freshPostgresSchema(prefix: string): Promise<PostgresSchema> {
  const schema = `${prefix}${Date.now()}_${randomBytes(4).toString('hex')}`;
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`not a plain schema name: ${schema}`);
  await withClient((client) => client.query(`create schema "${schema}"`));
  const url = new URL(TEST_POSTGRES_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(), schema,
    drop: () => withClient(async (client) => {
      await client.query(`drop schema if exists "${schema}" cascade`);
    }),
  };
}
