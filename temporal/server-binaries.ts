/**
 * The Temporal binaries behind the embedded Temporal (temporal/embedded.ts), built once from the Go
 * module proxy into flowgate's cache outside any clone (docs/dependencies.md says why these):
 * - the Temporal server `go.temporal.io/server/cmd/server` and its SQL tool (which carries the
 *   PostgreSQL schemas), with the server's SQLite schemas copied beside them from the module (the
 *   embedded default's database is upgraded from them, temporal/sqlite-upgrade.ts);
 * - the Temporal Web UI server `github.com/temporalio/ui-server/v2`, built from the small module in
 *   temporal/ui-server/ (its go.mod raises two dependencies to versions the proxy serves).
 * `TEMPORAL_SERVER_PATH` and `TEMPORAL_UI_SERVER_PATH` name binaries to use instead.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { buildOnce, go, isExecutable, type Progress } from './go-build';

export const TEMPORAL_SERVER_VERSION = 'v1.32.2';
export const TEMPORAL_UI_SERVER_VERSION = 'v2.58.1';
const SERVER_MODULE = 'go.temporal.io/server';
const UI_PACKAGE = 'github.com/temporalio/ui-server/v2/cmd/server';
/** The module that builds the Web UI server (go.mod and go.sum), in the repository. */
const UI_MODULE_DIR = path.join(__dirname, '..', '..', 'temporal', 'ui-server');

export interface ServerBinaries {
  /** the Temporal server (`server --config-file … start`) */
  server: string;
  /** the SQL schema tool (`sql … setup-schema`, `update-schema`); absent beside a TEMPORAL_SERVER_PATH binary */
  sqlTool?: string;
  /** the server's SQLite schema files (`v3/temporal/…`, `v3/visibility/…`); absent beside a TEMPORAL_SERVER_PATH binary */
  sqliteSchemaDir?: string;
}

export interface BinaryLocation {
  /** where builds are cached, outside any clone */
  cacheDir: string;
  /** TEMPORAL_SERVER_PATH */
  serverPath?: string;
  /** TEMPORAL_UI_SERVER_PATH */
  uiServerPath?: string;
}

export function serverCacheDir(cacheDir: string): string {
  return path.join(cacheDir, `temporal-server-${TEMPORAL_SERVER_VERSION}`);
}

export function uiServerCacheDir(cacheDir: string): string {
  return path.join(cacheDir, `temporal-ui-server-${TEMPORAL_UI_SERVER_VERSION}`);
}

/** The server, its SQL tool and schemas: from TEMPORAL_SERVER_PATH, the cache, or a build (about 20 minutes on 2 cores, once). */
export async function ensureTemporalServer(where: BinaryLocation, progress: Progress = () => undefined): Promise<ServerBinaries> {
  if (where.serverPath) {
    if (!(await isExecutable(where.serverPath))) throw new Error(`TEMPORAL_SERVER_PATH ${where.serverPath} is not an executable file`);
    const beside = path.dirname(where.serverPath);
    const sqlTool = path.join(beside, 'sql');
    const sqliteSchemaDir = path.join(beside, 'schema', 'sqlite');
    return {
      server: where.serverPath,
      ...(await isExecutable(sqlTool) ? { sqlTool } : {}),
      ...(await exists(path.join(sqliteSchemaDir, 'v3')) ? { sqliteSchemaDir } : {}),
    };
  }
  const dir = serverCacheDir(where.cacheDir);
  const built = (d: string): ServerBinaries => ({ server: path.join(d, 'server'), sqlTool: path.join(d, 'sql'), sqliteSchemaDir: path.join(d, 'schema', 'sqlite') });
  const ready = async (d: string): Promise<boolean> => {
    const b = built(d);
    return await isExecutable(b.server) && await isExecutable(b.sqlTool ?? '') && exists(path.join(b.sqliteSchemaDir ?? '', 'v3', 'temporal', 'schema.sql'));
  };
  await buildOnce(dir, ready, async (scratch) => {
    progress(`building the Temporal server ${TEMPORAL_SERVER_VERSION} and its SQL tool with go install (about 20 minutes on 2 cores, once) into ${dir}`);
    await go(['install', `${SERVER_MODULE}/cmd/server@${TEMPORAL_SERVER_VERSION}`, `${SERVER_MODULE}/cmd/tools/sql@${TEMPORAL_SERVER_VERSION}`], { env: { GOBIN: scratch } });
    // the SQLite schemas are not in the binaries' reach for an upgrade: take them from the module just built
    const modCache = (await go(['env', 'GOMODCACHE'])).trim();
    await fs.cp(path.join(modCache, `${SERVER_MODULE}@${TEMPORAL_SERVER_VERSION}`, 'schema', 'sqlite'), path.join(scratch, 'schema', 'sqlite'), { recursive: true });
    await makeWritable(path.join(scratch, 'schema'));
  });
  return built(dir);
}

/** The Web UI server: from TEMPORAL_UI_SERVER_PATH, the cache, or a build (a minute or two, once). */
export async function ensureTemporalUiServer(where: BinaryLocation, progress: Progress = () => undefined): Promise<string> {
  if (where.uiServerPath) {
    if (!(await isExecutable(where.uiServerPath))) throw new Error(`TEMPORAL_UI_SERVER_PATH ${where.uiServerPath} is not an executable file`);
    return where.uiServerPath;
  }
  const dir = uiServerCacheDir(where.cacheDir);
  const binary = (d: string): string => path.join(d, 'ui-server');
  await buildOnce(dir, (d) => isExecutable(binary(d)), async (scratch) => {
    progress(`building the Temporal Web UI server ${TEMPORAL_UI_SERVER_VERSION} (a minute or two, once) into ${dir}`);
    const moduleDir = path.join(scratch, 'module');
    await fs.mkdir(moduleDir);
    for (const file of ['go.mod', 'go.sum']) await fs.copyFile(path.join(UI_MODULE_DIR, file), path.join(moduleDir, file));
    await go(['build', '-mod=mod', '-o', binary(scratch), UI_PACKAGE], { cwd: moduleDir });
    await fs.rm(moduleDir, { recursive: true, force: true });
  });
  return binary(dir);
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(() => true, () => false);
}

/** Files copied out of Go's read-only module cache stay read-only; the cache must be removable. */
async function makeWritable(dir: string): Promise<void> {
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    await fs.chmod(path.join(entry.parentPath, entry.name), entry.isDirectory() ? 0o755 : 0o644);
  }
  await fs.chmod(dir, 0o755);
}
