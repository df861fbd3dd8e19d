/**
 * The registry's two database dialects for tests: each `setUp` makes an isolated database (a
 * SQLite file in a fresh temp dir, a fresh PostgreSQL schema) and `tearDown` removes it again.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { DatabaseConfig } from '../../src/registry';

export const TEST_POSTGRES_URL = process.env.FLOWGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface RegistryDialect {
  name: 'SQLite' | 'PostgreSQL';
  /** Creates an isolated database and returns how to open it. */
  setUp(): Promise<DatabaseConfig>;
  tearDown(): Promise<void>;
}

export interface RegistryDialectOptions {
  /** prefix of the SQLite temp dir */
  tempDirPrefix: string;
  /** prefix of the PostgreSQL schema name (a timestamp and random hex follow) */
  schemaPrefix: string;
  /** the SQLite file, relative to the temp dir; a nested path checks that missing directories are made */
  sqliteFile?: string[];
}

function sqliteDialect(options: RegistryDialectOptions): RegistryDialect {
  let dir: string | undefined;
  return {
    name: 'SQLite',
    async setUp() {
      dir = mkdtempSync(join(tmpdir(), options.tempDirPrefix));
      return { kind: 'sqlite', file: join(dir, ...(options.sqliteFile ?? ['registry.db'])) };
    },
    async tearDown() {
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresDialect(options: RegistryDialectOptions): RegistryDialect {
  const schema = `${options.schemaPrefix}${Date.now()}_${randomBytes(4).toString('hex')}`;
  return {
    name: 'PostgreSQL',
    async setUp() {
      return { kind: 'postgres', url: TEST_POSTGRES_URL, schema };
    },
    async tearDown() {
      const client = new Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`drop schema if exists "${schema}" cascade`);
      } finally {
        await client.end();
      }
    },
  };
}

/** SQLite, then PostgreSQL: a suite runs once against each. */
export function registryDialects(options: RegistryDialectOptions): RegistryDialect[] {
  return [sqliteDialect(options), postgresDialect(options)];
}
