/**
 * One real Temporal for the whole suite, started with flowgate's own launcher (temporal/embedded.ts)
 * on a free port, headless: the embedded default (SQLite, in memory) or, with
 * FLOWGATE_TEST_TEMPORAL=postgres, the production-shaped one on PostgreSQL databases of its own
 * (dropped at the end). Each test starts flowgate against it with its own task queue.
 *
 * These are mocha global fixtures, not root hooks: with `--parallel` they run once in the parent
 * process, before any worker exists. The address and the binaries' paths go to the workers through
 * the environment, which each worker copies when it is forked (mocha forks them after global
 * setup). Serial runs read the same variables in the same process.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { z } from 'zod';
import { ensureTemporalCli } from '../../temporal/cli';
import { startEmbeddedTemporal, type EmbeddedPersistence, type EmbeddedTemporal } from '../../temporal/embedded';
import { freeTemporalPort } from '../../temporal/ports';
import { postgresTarget, type PostgresTarget } from '../../temporal/postgres-schema';
import { allPorts, internalPorts } from '../../temporal/server-config';
import { ensureTemporalServer, ensureTemporalUiServer, type ServerBinaries } from '../../temporal/server-binaries';
import { loadConfig } from '../../src/config/config';
import { TEST_POSTGRES_URL } from '../support/registry-dialects';

const ADDRESS_VAR = 'FLOWGATE_TEST_TEMPORAL_ADDRESS';
const CLI_VAR = 'FLOWGATE_TEST_TEMPORAL_CLI';
const BINARIES_VAR = 'FLOWGATE_TEST_TEMPORAL_BINARIES';
const SHAPE_VAR = 'FLOWGATE_TEST_TEMPORAL';

const BinariesSchema = z.object({ server: z.string().min(1), sqlTool: z.string().min(1).optional(), sqliteSchemaDir: z.string().min(1).optional(), uiServer: z.string().min(1) });

const HandOffSchema = z.object({
  [ADDRESS_VAR]: z.string().min(1).optional(),
  [CLI_VAR]: z.string().min(1).optional(),
  [BINARIES_VAR]: z.string().min(1).optional(),
  [SHAPE_VAR]: z.enum(['dev', 'postgres']).default('dev'),
});

/** Read at call time, not at import: in the parent the variables appear only once setup ran. */
function handOff(): z.infer<typeof HandOffSchema> {
  return HandOffSchema.parse(process.env);
}

export function temporalAddress(): string {
  const address = handOff()[ADDRESS_VAR];
  if (!address) throw new Error(`the test Temporal server is not running (${ADDRESS_VAR} is unset: is test/setup/root-hooks.js required?)`);
  return address;
}

export function temporalCliPath(): string {
  const cliPath = handOff()[CLI_VAR];
  if (!cliPath) throw new Error(`the Temporal CLI was not located (${CLI_VAR} is unset: is test/setup/root-hooks.js required?)`);
  return cliPath;
}

/** The embedded Temporal's binaries the suite runs on (the server, its SQL tool and schemas, the Web UI server). */
export function temporalBinaries(): { binaries: ServerBinaries; uiServer: string } {
  const json = handOff()[BINARIES_VAR];
  if (!json) throw new Error(`the Temporal binaries were not located (${BINARIES_VAR} is unset: is test/setup/root-hooks.js required?)`);
  const { uiServer, ...binaries } = BinariesSchema.parse(JSON.parse(json));
  return { binaries, uiServer };
}

/** Which Temporal the suite's shared server is: the embedded default, or the production-shaped one (FLOWGATE_TEST_TEMPORAL=postgres). */
export function temporalShape(): 'dev' | 'postgres' {
  return handOff()[SHAPE_VAR];
}

/** A free frontend port for a test's own Temporal (its derived ports free too). */
export function freeTemporalFrontendPort(): Promise<number> {
  return freeTemporalPort((port) => allPorts(internalPorts(port)));
}

export interface TestTemporalOptions {
  port?: number;
  /** a SQLite file (undefined: in memory) */
  dbFile?: string;
  persistence?: EmbeddedPersistence;
  fairness?: boolean;
  uiPort?: number;
  uiCodecEndpoint?: string;
  notice?: (message: string) => void;
  /** more dynamic configuration (EmbeddedOptions.dynamicConfig) */
  dynamicConfig?: Record<string, unknown>;
}

/** A Temporal of a test's own, on the suite's binaries. */
export async function startTestTemporal(options: TestTemporalOptions = {}): Promise<EmbeddedTemporal> {
  const { binaries, uiServer } = temporalBinaries();
  return startEmbeddedTemporal({
    binaries, uiServer, namespace: 'default',
    port: options.port ?? await freeTemporalFrontendPort(),
    persistence: options.persistence ?? { kind: 'sqlite', file: options.dbFile },
    ...(options.fairness === undefined ? {} : { fairness: options.fairness }),
    ...(options.uiPort === undefined ? {} : { uiPort: options.uiPort }),
    ...(options.uiCodecEndpoint === undefined ? {} : { uiCodecEndpoint: options.uiCodecEndpoint }),
    ...(options.notice ? { notice: options.notice } : {}),
    ...(options.dynamicConfig ? { dynamicConfig: options.dynamicConfig } : {}),
  });
}

/** A PostgreSQL database pair of a test's own for the production-shaped Temporal, and how to drop it. */
export function freshTemporalDatabases(): { target: PostgresTarget; drop(): Promise<void> } {
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/fg_test_temporal_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const target = postgresTarget(url.toString());
  return {
    target,
    async drop() {
      const client = new pg.Client({ host: target.host, port: target.port, user: target.user, password: target.password, database: 'postgres' });
      await client.connect();
      try {
        for (const db of [target.database, target.visibilityDatabase]) await client.query(`drop database if exists "${db}" with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

let server: EmbeddedTemporal | undefined;
let dropDatabases: (() => Promise<void>) | undefined;

/** Global fixtures have no mocha timeout: a first run may spend many minutes building the Temporal server. */
export async function mochaGlobalSetup(): Promise<void> {
  const config = loadConfig({ ...process.env, TEMPORAL_ADDRESS: undefined });
  const progress = (m: string): void => console.log(`      ${m}`);
  const cliPath = await ensureTemporalCli(config.temporal, progress);
  const binaries = await ensureTemporalServer(config.temporal, progress);
  const uiServer = await ensureTemporalUiServer(config.temporal, progress);
  process.env[BINARIES_VAR] = JSON.stringify({ ...binaries, uiServer });
  process.env[CLI_VAR] = cliPath;
  let persistence: EmbeddedPersistence = { kind: 'sqlite' };
  if (temporalShape() === 'postgres') {
    const databases = freshTemporalDatabases();
    dropDatabases = () => databases.drop();
    persistence = { kind: 'postgres', target: databases.target, stateDir: mkdtempSync(path.join(os.tmpdir(), 'flowgate-test-temporal-')) };
    console.log(`      the suite runs on the production-shaped Temporal (PostgreSQL database ${databases.target.database})`);
  }
  server = await startTestTemporal({ persistence });
  process.env[ADDRESS_VAR] = server.address;
}

export async function mochaGlobalTeardown(): Promise<void> {
  await server?.stop();
  await dropDatabases?.();
  delete process.env[ADDRESS_VAR];
  delete process.env[CLI_VAR];
  delete process.env[BINARIES_VAR];
}

/**
 * The suite runs many flowgates in one process and stops each when its file ends. The Temporal
 * client's retry interceptor (@temporalio/client grpc-retry) keeps a call's backoff timer after its
 * connection is closed; when it fires it throws "Channel has been shut down" from a timer, which
 * mocha would pin on whatever test runs then (a flowgate process has one connection, closed only
 * as it exits). Only that error, from that timer, is let go here, with a line saying so.
 *
 * It is caught before any `uncaughtException` listener, through the process's capture callback:
 * between two files a mocha worker has no listener at all (mocha removes them when a file ends),
 * and there the timer's error used to end the worker (exit code 1, "Workerpool Worker terminated
 * Unexpectedly", the file then running lost). Every other error goes on to the listeners (mocha's,
 * during a file) or, with none, ends the process as Node would.
 */
function isRetryAfterClose(error: unknown): boolean {
  return error instanceof Error && error.message === 'Channel has been shut down' && /grpc-retry/.test(error.stack ?? '');
}

function installRetryAfterCloseFilter(): void {
  if (process.hasUncaughtExceptionCaptureCallback()) return; // installed already in this process
  process.setUncaughtExceptionCaptureCallback((error) => {
    if (isRetryAfterClose(error)) {
      console.warn('      (a stopped test instance\'s Temporal client retried a call after its connection closed: ignored)');
      return;
    }
    if (process.listenerCount('uncaughtException') > 0) {
      (process.emit as (event: string, ...args: unknown[]) => boolean)('uncaughtException', error, 'uncaughtException');
      return;
    }
    console.error('Uncaught', error);
    process.exit(1);
  });
}

export const mochaHooks = {
  beforeAll(): void {
    installRetryAfterCloseFilter();
  },
};
