/**
 * The PostgreSQL databases of the production-shaped embedded Temporal (temporal/embedded.ts): one
 * for persistence, one for visibility, each created when missing and brought to the server's schema
 * with Temporal's own SQL tool (which carries the schemas: `postgresql/v12/temporal` and
 * `postgresql/v12/visibility`). `update-schema` applies only the versions a database lacks, so every
 * start runs it; the visibility schema needs the btree_gin extension (Debian's PostgreSQL has it).
 */
import pg from 'pg';
import { run } from './go-build';

export interface PostgresTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  visibilityDatabase: string;
}

/** FLOWGATE_TEMPORAL_DATABASE_URL as a target: its database (default flowgate_temporal) and `<that>_visibility`. */
export function postgresTarget(url: string): PostgresTarget {
  const parsed = new URL(url);
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') throw new Error(`FLOWGATE_TEMPORAL_DATABASE_URL must be a postgres:// URL, not ${parsed.protocol}`);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || 'flowgate_temporal';
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 5432,
    user: decodeURIComponent(parsed.username) || 'postgres',
    password: decodeURIComponent(parsed.password),
    database,
    visibilityDatabase: `${database}_visibility`,
  };
}

async function withMaintenance<T>(target: PostgresTarget, database: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ host: target.host, port: target.port, user: target.user, password: target.password, database, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function sqlTool(tool: string, target: PostgresTarget, database: string, args: string[]): Promise<void> {
  try {
    await run(tool, ['--ep', target.host, '-p', String(target.port), '-u', target.user, '--pl', 'postgres12', '--db', database, '--quiet', ...args], {
      // the password goes through the environment, never the command line other users can read
      env: { ...process.env, SQL_PASSWORD: target.password },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    const stderr = err instanceof Error && 'stderr' in err && typeof err.stderr === 'string' ? err.stderr.trim().split('\n').slice(-4).join(' | ') : '';
    throw new Error(`Temporal's SQL tool failed on database ${database} (${args[0]}): ${stderr || (err instanceof Error ? err.message : String(err))}`, { cause: err });
  }
}

/** Creates the two databases when missing and brings both to the server's schema. */
export async function ensurePostgresSchema(tool: string, target: PostgresTarget, notice: (message: string) => void = () => undefined): Promise<void> {
  for (const [database, schemaName] of [[target.database, 'postgresql/v12/temporal'], [target.visibilityDatabase, 'postgresql/v12/visibility']] as const) {
    const exists = await withMaintenance(target, 'postgres', async (client) => (await client.query('select 1 from pg_database where datname = $1', [database])).rowCount === 1)
      .catch((err: unknown) => {
        throw new Error(`the embedded Temporal's PostgreSQL at ${target.host}:${target.port} cannot be reached as ${target.user}: ${err instanceof Error ? err.message : String(err)} (FLOWGATE_TEMPORAL_DATABASE_URL)`, { cause: err });
      });
    if (!exists) {
      notice(`creating the PostgreSQL database ${database} for the embedded Temporal`);
      await sqlTool(tool, target, database, ['create-database']);
    }
    const versioned = await withMaintenance(target, database, async (client) => (await client.query("select 1 from information_schema.tables where table_name = 'schema_version'")).rowCount === 1);
    if (!versioned) await sqlTool(tool, target, database, ['setup-schema', '-v', '0.0']);
    await sqlTool(tool, target, database, ['update-schema', '--schema-name', schemaName]);
  }
}
