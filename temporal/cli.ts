/**
 * Finds or builds the official Temporal CLI, which carries the dev server (ARCHITECTURE.md,
 * "Getting the Temporal CLI"). Order: an explicit path; `temporal` on PATH; a cached build;
 * `go install` of the pinned tag into the cache; the official release archive.
 */
import { execFile } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Later tags carry a `replace` directive in go.mod, which `go install pkg@version` refuses. */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const GO_PACKAGE = 'github.com/temporalio/cli/cmd/temporal';

export interface CliLocation {
  cliPath?: string;
  cacheDir: string;
  searchPath: string;
}

export type Progress = (message: string) => void;

export async function isExecutable(file: string): Promise<boolean> {
  try {
    await fs.access(file, constants.X_OK);
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

export function cachedCliPath(cacheDir: string): string {
  return path.join(cacheDir, `temporal-${TEMPORAL_CLI_VERSION}`, 'temporal');
}

async function onPath(searchPath: string): Promise<string | undefined> {
  for (const dir of searchPath.split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'temporal');
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** Returns the path of a usable Temporal CLI, building or downloading it when needed. */
export async function ensureTemporalCli(where: CliLocation, progress: Progress = () => undefined): Promise<string> {
  if (where.cliPath) {
    if (await isExecutable(where.cliPath)) return where.cliPath;
    throw new Error(`TEMPORAL_CLI_PATH ${where.cliPath} is not an executable file`);
  }
  const found = await onPath(where.searchPath);
  if (found) return found;
  const cached = cachedCliPath(where.cacheDir);
  if (await isExecutable(cached)) return cached;

  await fs.mkdir(path.dirname(cached), { recursive: true });
  return withLock(`${path.dirname(cached)}.lock`, async () => {
    if (await isExecutable(cached)) return cached; // another process built it while we waited
    const failures: string[] = [];
    try {
      await goInstall(path.dirname(cached), progress);
      return cached;
    } catch (err) {
      failures.push(`go install: ${(err as Error).message.split('\n').slice(-5).join(' ')}`);
    }
    try {
      await downloadRelease(cached, progress);
      return cached;
    } catch (err) {
      failures.push(`release archive: ${(err as Error).message}`);
    }
    throw new Error(`could not obtain the Temporal CLI ${TEMPORAL_CLI_VERSION}; set TEMPORAL_CLI_PATH or TEMPORAL_ADDRESS. Tried: ${failures.join(' | ')}`);
  });
}

async function goInstall(targetDir: string, progress: Progress): Promise<void> {
  progress(`building the Temporal CLI ${TEMPORAL_CLI_VERSION} with go install (a few minutes, once) into ${targetDir}`);
  // Build into a scratch dir and rename, so an interrupted build never leaves a half-written binary.
  const scratch = await fs.mkdtemp(`${targetDir}.build-`);
  try {
    await run('go', ['install', `${GO_PACKAGE}@${TEMPORAL_CLI_VERSION}`], {
      env: { ...process.env, GOBIN: scratch, CGO_ENABLED: '0' },
      maxBuffer: 64 * 1024 * 1024,
    });
    await fs.rename(path.join(scratch, 'temporal'), path.join(targetDir, 'temporal'));
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

async function downloadRelease(target: string, progress: Progress): Promise<void> {
  const arch = process.arch === 'arm64' ? 'arm64' : 'amd64';
  const url = `https://temporal.download/cli/archive/${TEMPORAL_CLI_VERSION}?platform=${process.platform}&arch=${arch}`;
  progress(`downloading the Temporal CLI from ${url}`);
  const response = await fetch(url, { signal: AbortSignal.timeout(120_000) });
  if (!response.ok) throw new Error(`HTTP ${response.status} from ${new URL(url).host}`);
  const scratch = await fs.mkdtemp(`${path.dirname(target)}.download-`);
  try {
    const archive = path.join(scratch, 'temporal.tar.gz');
    await fs.writeFile(archive, Buffer.from(await response.arrayBuffer()));
    await run('tar', ['-xzf', archive, '-C', scratch, 'temporal']);
    await fs.chmod(path.join(scratch, 'temporal'), 0o755);
    await fs.rename(path.join(scratch, 'temporal'), target);
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

/** A lock directory: creation is atomic; a stale lock (older than the longest build) is broken. */
async function withLock<T>(lockDir: string, fn: () => Promise<T>): Promise<T> {
  const staleAfterMs = 30 * 60_000;
  for (;;) {
    try {
      await fs.mkdir(lockDir);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const stat = await fs.stat(lockDir).catch(() => undefined);
      if (stat && Date.now() - stat.mtimeMs > staleAfterMs) await fs.rm(lockDir, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lockDir, { recursive: true, force: true });
  }
}
