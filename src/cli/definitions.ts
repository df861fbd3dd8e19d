/**
 * Definitions as code (docs/definitions-as-code.md): `flowgate plan <dir | git-url@ref>`,
 * `flowgate apply …` and `flowgate export <dir>`. The folder is read here (a local path, or a Git
 * repository cloned with the `git` binary at a branch, tag or commit into a temporary directory)
 * and sent whole to the server, which checks, plans and applies it. `plan` exits 0 when nothing
 * would change, 2 when something would, 1 when a file is invalid (every error by file and path).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { parseAllDocuments } from 'yaml';
import { scrubCredentials, withoutCredentials } from '../common/url-credentials';
import { contextOf } from './context';
import { CliError, EXIT } from './errors';
import { printJson } from './output';

const run = promisify(execFile);
const GIT_TIMEOUT_MS = 120_000;
const FILE_PATTERN = /\.(ya?ml|json)$/i;

/** Exit codes of `plan` (beside EXIT's): changes pending. */
export const PLAN_CHANGES = 2;

interface Source { dir: string; url?: string; ref?: string; commit?: string; cleanup?: () => void }

/** The answer of POST /api/v1/apply/plan and /api/v1/apply (the server's PlanSchema). */
export interface PlanBody {
  valid: boolean;
  errors: { file: string; path: string; message: string }[];
  changes: { kind: string; name: string; action: string; diff: string; drift: boolean; note?: string }[];
  created: number;
  changed: number;
  deleted: number;
  drifted: number;
  source?: string;
  commit?: string;
  applied: boolean;
}

/** `url@ref` for a Git URL (file://, http(s)://, ssh://): the ref after the last `@` that follows the URL's path. */
export function splitGitSource(text: string): { url: string; ref?: string } | undefined {
  const scheme = /^(file|https?|ssh|git):\/\//.exec(text);
  if (!scheme) return undefined;
  const at = text.lastIndexOf('@');
  const rest = text.slice(scheme[0].length);
  const authorityEnd = rest.indexOf('/');
  if (at > scheme[0].length + authorityEnd && authorityEnd >= 0) return { url: text.slice(0, at), ref: text.slice(at + 1) || undefined };
  return { url: text };
}

async function git(args: string[], cwd?: string): Promise<string> {
  try {
    const { stdout } = await run('git', args, { cwd, timeout: GIT_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
    return stdout.trim();
  } catch (err) {
    const stderr = typeof err === 'object' && err !== null && 'stderr' in err ? String(err.stderr).trim() : '';
    // err.message holds the command line, and with it a token written into the URL
    const message = scrubCredentials(stderr || (err instanceof Error ? err.message : String(err)));
    throw new CliError(`git ${args[0] ?? ''}: ${message}${hintFor(message)}`, EXIT.FAILURE);
  }
}

/** What to do about the two failures of a private Git host that Git's own words leave open (docs/definitions-as-code.md#git-sources). */
function hintFor(message: string): string {
  if (/certificate/i.test(message)) return '; a certificate of your own CA: set GIT_SSL_CAINFO to the CA\'s certificate file (PEM)';
  if (/could not read (Username|Password)|Authentication failed/i.test(message)) {
    return '; a private repository: put a token in the URL (https://x-access-token:$TOKEN@host/repo.git@ref) or an Authorization http.extraHeader in GIT_CONFIG_* variables';
  }
  return '';
}

/** The folder to read: a local path (its commit when it is in a Git work tree), or a clone of a Git URL at a ref. */
async function resolveSource(text: string, subdir: string | undefined): Promise<Source> {
  const remote = splitGitSource(text);
  if (!remote) {
    const dir = path.resolve(text);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new CliError(`${text}: not a directory (or a file://, http(s):// Git URL at @ref)`, EXIT.USAGE);
    let commit: string | undefined;
    try {
      commit = await git(['rev-parse', 'HEAD'], dir);
    } catch {
      commit = undefined; // not in a Git work tree
    }
    return { dir: subdir ? path.join(dir, subdir) : dir, url: dir, ...(commit ? { commit } : {}) };
  }
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'flowgate-defs-'));
  const cleanup = () => rmSync(tmp, { recursive: true, force: true });
  try {
    const { url, ref } = remote;
    const cloned = ref
      ? await git(['clone', '--quiet', '--depth', '1', '--branch', ref, url, tmp]).then(() => true, () => false)
      : await git(['clone', '--quiet', '--depth', '1', url, tmp]).then(() => true);
    if (!cloned && ref) {
      // a commit: fetched by its SHA (shallow when the server allows it, else the whole history)
      await git(['init', '--quiet', tmp]);
      await git(['remote', 'add', 'origin', url], tmp);
      const fetched = await git(['fetch', '--quiet', '--depth', '1', 'origin', ref], tmp).then(() => true, () => false);
      if (!fetched) await git(['fetch', '--quiet', 'origin'], tmp);
      await git(['checkout', '--quiet', fetched ? 'FETCH_HEAD' : ref], tmp);
    }
    const commit = await git(['rev-parse', 'HEAD'], tmp);
    // the URL is recorded (the plan, the audit trail, each published version): a token in it stays here
    return { dir: subdir ? path.join(tmp, subdir) : tmp, url: withoutCredentials(url), ...(ref ? { ref } : {}), commit, cleanup };
  } catch (err) {
    cleanup();
    throw err;
  }
}

/** The folder's YAML and JSON files, by their path in it (`/`-separated); dot entries (.git, .github) are skipped. */
export function folderFiles(dir: string, skip?: string): { path: string; text: string }[] {
  const files: { path: string; text: string }[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && FILE_PATTERN.test(entry.name) && full !== skip) files.push({ path: path.relative(dir, full).split(path.sep).join('/'), text: readFileSync(full, 'utf8') });
    }
  };
  if (!existsSync(dir)) throw new CliError(`${dir}: no such folder`, EXIT.USAGE);
  walk(dir);
  return files;
}

/**
 * The values of every secret reference the files name (a trigger's `secretRefs`, a connection's
 * `secretRef: {env}`), from the environment; a reference not set is left out: the server says
 * which it needs.
 */
function secretsOf(files: { text: string }[]): Record<string, string> {
  const refs = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (typeof value === 'object' && value !== null) {
      for (const [key, v] of Object.entries(value)) {
        if (key === 'secretRefs' && Array.isArray(v)) for (const r of v) if (typeof r === 'string') refs.add(r);
        if (key === 'secretRef' && typeof v === 'object' && v !== null && 'env' in v && typeof v.env === 'string') refs.add(v.env);
        visit(v);
      }
    }
  };
  for (const f of files) for (const doc of parseAllDocuments(f.text)) if ('toJS' in doc && doc.errors.length === 0) visit(doc.toJS());
  const secrets: Record<string, string> = {};
  for (const ref of refs) {
    const value = process.env[ref];
    if (value) secrets[ref] = value;
  }
  return secrets;
}

const MARK: Record<string, string> = { create: '+', change: '~', delete: '-', unchanged: '=', 'delete-skipped': '?' };

function printPlan(plan: PlanBody, verb: string): void {
  const out: string[] = [];
  for (const c of plan.changes) {
    out.push(`${MARK[c.action] ?? ' '} ${c.action} ${c.kind}/${c.name}${c.drift ? ' [drift]' : ''}${c.note ? ` (${c.note})` : ''}`);
    if (c.diff) out.push(...c.diff.split('\n').map((l) => `    ${l}`));
  }
  out.push(`${verb}: ${plan.created} to create, ${plan.changed} to change, ${plan.deleted} to delete; ${plan.drifted} drifted${plan.commit ? ` (commit ${plan.commit})` : ''}`);
  process.stdout.write(`${out.join('\n')}\n`);
}

function printErrors(plan: PlanBody): void {
  for (const e of plan.errors) process.stderr.write(`${e.file}${e.path ? `: ${e.path}` : ''}: ${e.message}\n`);
}

interface DefinitionOptions { overlay?: string; prune?: boolean; dir?: string }

async function withSource<T>(text: string, o: DefinitionOptions, work: (request: Record<string, unknown>) => Promise<T>): Promise<T> {
  const source = await resolveSource(text, o.dir);
  try {
    const overlayPath = o.overlay ? path.resolve(o.overlay) : undefined;
    const files = folderFiles(source.dir, overlayPath);
    const overlay = overlayPath ? { path: path.basename(overlayPath), text: readFileSync(overlayPath, 'utf8') } : undefined;
    return await work({
      files, ...(overlay ? { overlay } : {}), prune: Boolean(o.prune), secrets: secretsOf(overlay ? [...files, overlay] : files),
      source: { ...(source.url ? { url: source.url } : {}), ...(source.ref ? { ref: source.ref } : {}), ...(source.commit ? { commit: source.commit } : {}) },
    });
  } finally {
    source.cleanup?.();
  }
}

export function definitionCommands(program: Command): void {
  const common = (cmd: Command) => cmd
    .option('--overlay <file>', 'an overlay file (kind: overlay) for this organization: what differs from the folder')
    .option('--prune', 'delete the objects the folder does not name')
    .option('--dir <subdir>', 'the folder inside the repository or path');

  common(program.command('plan <source>').description('what apply would create, change and delete, and the drift since the last apply; <source>: a folder, or a file:// or http(s):// Git URL at @branch, @tag or @commit. Exit 0: no change, 2: changes, 1: invalid'))
    .action(async (text: string, o: DefinitionOptions, cmd: Command) => {
      const c = contextOf(cmd);
      const plan = await withSource(text, o, async (request) => (await c.client.request<PlanBody>('POST', '/api/v1/apply/plan', { body: request, timeoutMs: 120_000 })).body);
      if (c.json) printJson(plan);
      if (!plan.valid) {
        printErrors(plan);
        throw new CliError(`${plan.errors.length} error${plan.errors.length === 1 ? '' : 's'} in the definitions; nothing planned`, EXIT.FAILURE);
      }
      if (!c.json) printPlan(plan, 'Plan');
      process.exitCode = plan.created + plan.changed + plan.deleted > 0 ? PLAN_CHANGES : EXIT.OK;
    });

  common(program.command('apply <source>').description('apply the folder to the organization as one operation (all of it, or nothing: an invalid file changes nothing, and a write refused after the checks is rolled back); references in secretRefs are read from the environment'))
    .action(async (text: string, o: DefinitionOptions, cmd: Command) => {
      const c = contextOf(cmd);
      const plan = await withSource(text, o, async (request) => {
        const planned = (await c.client.request<PlanBody>('POST', '/api/v1/apply/plan', { body: request, timeoutMs: 120_000 })).body;
        if (!planned.valid) return planned;
        return (await c.client.request<PlanBody>('POST', '/api/v1/apply', { body: request, timeoutMs: 300_000 })).body;
      });
      if (c.json) printJson(plan);
      if (!plan.valid) {
        printErrors(plan);
        throw new CliError(`${plan.errors.length} error${plan.errors.length === 1 ? '' : 's'} in the definitions; nothing applied`, EXIT.FAILURE);
      }
      if (!c.json) printPlan(plan, 'Applied');
    });

  program.command('export <dir>').description('write the organization\'s workflows, triggers, custom servers and agents into <dir> as definition files')
    .action(async (dir: string, _o, cmd: Command) => {
      const c = contextOf(cmd);
      const body = await c.client.get<{ files: { path: string; text: string }[] }>('/api/v1/apply/export');
      const root = path.resolve(dir);
      for (const f of body.files) {
        const target = path.resolve(root, f.path);
        if (!target.startsWith(`${root}${path.sep}`)) throw new CliError(`the server named a file outside ${dir}: ${f.path}`, EXIT.FAILURE);
        mkdirSync(path.dirname(target), { recursive: true });
        writeFileSync(target, f.text);
      }
      if (c.json) printJson({ dir: root, files: body.files.map((f) => f.path) });
      else process.stdout.write(`wrote ${body.files.length} file${body.files.length === 1 ? '' : 's'} into ${root}\n`);
    });
}
