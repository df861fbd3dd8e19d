/**
 * The processes `npm run bench:scale` measures: an embedded Temporal (the production-shaped one on
 * PostgreSQL databases of its own, or the dev server on SQLite), flowgate gateways and workers as
 * child processes with `FLOWGATE_ROLE` on a PostgreSQL registry of their own, and the raw SDK worker.
 * Also the calls that make an organization, its three workflows, their triggers and an API key.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config/config';
import { startEmbeddedTemporal, type EmbeddedTemporal } from '../../temporal/embedded';
import { postgresTarget, type PostgresTarget } from '../../temporal/postgres-schema';
import { freeTemporalPort } from '../../temporal/ports';
import { allPorts, internalPorts } from '../../temporal/server-config';
import { ensureTemporalServer } from '../../temporal/server-binaries';
import { TEST_POSTGRES_URL } from '../support/registry-dialects';
import { freshPostgresSchema, replicaSecrets, startReplica, type PostgresSchema, type Replica, type Role } from '../support/replicas';
import { KINDS, type Kind } from './scale-load';

export const TASK_QUEUE = 'flowgate-scale';
export const RAW_TASK_QUEUE = 'raw-scale';

export interface TemporalUnderTest {
  server: EmbeddedTemporal;
  /** the databases to read table statistics from (none for the dev server) */
  databases: string[];
  stop(): Promise<void>;
}

export async function startTemporal(kind: 'postgres' | 'dev', shards: number): Promise<TemporalUnderTest> {
  const config = loadConfig({ PATH: process.env.PATH, HOME: process.env.HOME, TEMPORAL_ADDRESS: undefined });
  const binaries = await ensureTemporalServer(config.temporal, (m) => console.log(`  ${m}`));
  const port = await freeTemporalPort((p) => allPorts(internalPorts(p)));
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-scale-temporal-'));
  let target: PostgresTarget | undefined;
  if (kind === 'postgres') {
    const url = new URL(TEST_POSTGRES_URL);
    url.pathname = `/fg_bench_scale_${process.pid}`;
    target = postgresTarget(url.toString());
  }
  const server = await startEmbeddedTemporal({
    binaries, port, namespace: 'default', historyShards: shards,
    persistence: target ? { kind: 'postgres', target, stateDir } : { kind: 'sqlite', file: path.join(stateDir, 'temporal.sqlite') },
  });
  return {
    server,
    databases: target ? [target.database, target.visibilityDatabase] : [],
    async stop() {
      await server.stop();
      rmSync(stateDir, { recursive: true, force: true });
      if (!target) return;
      const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await admin.connect();
      try {
        for (const db of [target.database, target.visibilityDatabase]) await admin.query(`drop database if exists "${db}" with (force)`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** Gateways and workers of one flowgate deployment, sharing a registry, a data dir and secrets. */
export class Deployment {
  readonly replicas: Replica[] = [];
  readonly secrets = replicaSecrets();
  private readonly dataDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-scale-'));

  private constructor(private readonly temporalAddress: string, private readonly schema: PostgresSchema, private readonly env: Record<string, string>) {}

  static async create(temporalAddress: string, env: Record<string, string> = {}): Promise<Deployment> {
    return new Deployment(temporalAddress, await freshPostgresSchema('bench_scale_'), env);
  }

  async add(role: Role, env: Record<string, string> = {}): Promise<Replica> {
    const replica = await startReplica(role, {
      TEMPORAL_ADDRESS: this.temporalAddress, FLOWGATE_TASK_QUEUE: TASK_QUEUE, DATABASE_URL: this.schema.url, ...this.secrets,
      // one load generator, one credential, one address: neither limit may refuse it
      FLOWGATE_RATE_LIMIT_PER_MINUTE: '0', FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS: '0',
      ...this.env, ...env,
    }, { dataDir: this.dataDir });
    this.replicas.push(replica);
    return replica;
  }

  async remove(replica: Replica): Promise<void> {
    this.replicas.splice(this.replicas.indexOf(replica), 1);
    replica.child.process.kill('SIGTERM');
    await replica.child.exited;
  }

  gateways(): Replica[] {
    return this.replicas.filter((r) => r.role !== 'worker');
  }

  pids(role: Role): number[] {
    return this.replicas.filter((r) => r.role === role).flatMap((r) => (r.child.process.pid === undefined ? [] : [r.child.process.pid]));
  }

  async stop(): Promise<void> {
    for (const replica of this.replicas.splice(0)) {
      replica.child.process.kill('SIGTERM');
      await replica.child.exited;
    }
    rmSync(this.dataDir, { recursive: true, force: true });
    await this.schema.drop();
  }
}

/** The workflows of the curve, by kind. */
const DEFINITIONS: Record<Kind, unknown> = {
  'one-step': { name: 'scale-one', steps: [{ name: 'Hello', type: 'template', template: 'Hello {{inputs.name}}' }] },
  'five-step': {
    name: 'scale-five',
    steps: Array.from({ length: 5 }, (_, i) => ({ name: `Step${i + 1}`, type: 'template', template: `step ${i + 1}: {{inputs.name}}` })),
  },
  'forEach-10': {
    name: 'scale-foreach',
    steps: [{ name: 'Each', type: 'forEach', items: 'inputs.items', concurrency: 10, steps: [{ name: 'Item', type: 'template', template: 'item {{item}}' }] }],
  },
};

export interface Tenant {
  apiKey: string;
  triggers: Record<Kind, string>;
}

async function call<T>(base: string, token: string, method: string, pathname: string, body?: unknown): Promise<T> {
  const response = await fetch(`${base}${pathname}`, {
    method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status >= 300) throw new Error(`${method} ${pathname}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** An organization (a new one, or the instance's default with `orgToken` the admin token) with the three workflows. */
export async function makeTenant(base: string, adminToken: string, name?: string): Promise<Tenant> {
  const token = name === undefined ? adminToken : (await call<{ adminToken: string }>(base, adminToken, 'POST', '/api/v1/orgs', { name: `${name}-${randomUUID().slice(0, 8)}` })).adminToken;
  const triggers: Record<Kind, string> = { 'one-step': '', 'five-step': '', 'forEach-10': '' };
  for (const kind of KINDS) {
    const workflow = await call<{ id: string }>(base, token, 'POST', '/api/v1/workflows', DEFINITIONS[kind]);
    await call(base, token, 'POST', `/api/v1/workflows/${workflow.id}/publish`);
    triggers[kind] = (await call<{ id: string }>(base, token, 'POST', '/api/v1/triggers', { workflowId: workflow.id })).id;
  }
  const { key } = await call<{ key: string }>(base, token, 'POST', '/api/v1/api-keys', {});
  return { apiKey: key, triggers };
}

export const INPUTS = JSON.stringify({ name: 'bench', items: Array.from({ length: 10 }, (_, i) => i) });

/** The raw SDK worker in a child process of its own; resolves once it polls. */
export async function startRawWorker(temporalAddress: string): Promise<ChildProcess> {
  const child = fork(path.join(__dirname, 'scale-raw-worker.js'), [], {
    env: { PATH: process.env.PATH ?? '', TEMPORAL_ADDRESS: temporalAddress, RAW_TASK_QUEUE }, stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('raw worker polling')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the raw worker exited (${code})`)));
  });
  return child;
}
