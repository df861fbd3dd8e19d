/**
 * What every Go build of flowgate's cache shares (the Temporal server, its SQL tool and Web UI
 * server, the Temporal CLI): an executable check, a lock so that concurrent starts build once, and
 * a scratch directory renamed into place so an interrupted build never leaves half a binary.
 */
import { execFile } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

export const run = promisify(execFile);

export type Progress = (message: string) => void;

/**
 * The Go toolchain the Temporal server and Web UI server builds take: go.temporal.io/server v1.32
 * needs Go 1.26.10 or later, and the go command fetches this one from the module proxy once (about
 * 76 MB) whatever Go the machine has (docs/dependencies.md).
 */
export const GO_TOOLCHAIN = 'go1.27.3';

export async function isExecutable(file: string): Promise<boolean> {
  try {
    await fs.access(file, constants.X_OK);
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

/** The environment of a `go` command of flowgate's builds: the pinned toolchain, no cgo, a module cache that can be removed. */
export function goEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, GOTOOLCHAIN: GO_TOOLCHAIN, CGO_ENABLED: '0', GOFLAGS: '-modcacherw', ...extra };
}

/** Runs `go` with flowgate's build environment; a failure says what go printed last. */
export async function go(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<string> {
  try {
    const { stdout } = await run('go', args, { cwd: options.cwd, env: goEnv(options.env), maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const stderr = err instanceof Error && 'stderr' in err && typeof err.stderr === 'string' ? err.stderr : '';
    const lines = stderr.trim().split('\n').slice(-6).join(' | ');
    throw new Error(`go ${args.slice(0, 2).join(' ')} failed: ${lines || (err instanceof Error ? err.message : String(err))}`, { cause: err });
  }
}

/**
 * Builds into `targetDir` once: `build(scratch)` fills a scratch directory beside it, which then
 * takes the target's place. Concurrent callers wait on a lock and find the target built.
 * `ready(targetDir)` says whether a build is there already.
 */
export async function buildOnce(targetDir: string, ready: (dir: string) => Promise<boolean>, build: (scratch: string) => Promise<void>): Promise<void> {
  if (await ready(targetDir)) return;
  await fs.mkdir(path.dirname(targetDir), { recursive: true });
  await withLock(`${targetDir}.lock`, async () => {
    if (await ready(targetDir)) return; // another process built it while we waited
    const scratch = await fs.mkdtemp(`${targetDir}.build-`);
    try {
      await build(scratch);
      await fs.rm(targetDir, { recursive: true, force: true });
      await fs.rename(scratch, targetDir);
    } finally {
      await fs.rm(scratch, { recursive: true, force: true });
    }
  });
}

/** A lock directory: creation is atomic; a stale lock (older than the longest build) is broken. */
export async function withLock<T>(lockDir: string, fn: () => Promise<T>): Promise<T> {
  const staleAfterMs = 60 * 60_000;
  for (;;) {
    try {
      await fs.mkdir(lockDir);
      break;
    } catch (err) {
      if (!(err instanceof Error && 'code' in err && err.code === 'EEXIST')) throw err;
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
