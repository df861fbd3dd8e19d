/**
 * The import-graph rules of `npm run lint:deps` (.dependency-cruiser.cjs): each case writes a few
 * small modules into a scratch tree laid out like the repository, runs dependency-cruiser over it
 * with the project's configuration, and checks which rule each import breaks, if any. Each rule
 * gets a probe that breaks it: the scratch tree lives in the system's temporary folder (its
 * node_modules a link to the clone's), so the suite writes nothing into the clone.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';

/** The repository root (this file runs from dist/test/). */
const ROOT = path.resolve(__dirname, '..', '..');
const DEPCRUISE = path.join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');

const PathsSchema = z.union([z.string(), z.array(z.string())]).optional();
const ConfigSchema = z.object({
  forbidden: z.array(z.object({
    name: z.string(),
    from: z.object({ path: PathsSchema, pathNot: PathsSchema }),
    to: z.object({ path: PathsSchema, pathNot: PathsSchema }).loose(),
  })),
});

/** A route module's file pattern as the configuration writes it → the module's name. */
function routeName(pattern: string): string {
  const name = /^\^src\/http\/routes\/([a-z-]+)\\\.ts\$$/.exec(pattern)?.[1];
  assert.ok(name, `not a route module's pattern: ${pattern}`);
  return name;
}

/** The route → route imports the configuration still lets through (ROUTE_IMPORTS_TO_REMOVE), as `from → to`. */
function routeExceptions(): string[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the configuration is CommonJS, as dependency-cruiser reads it
  const config = ConfigSchema.parse(require(CONFIG));
  const perModule = config.forbidden.filter((r) => r.name === 'routes-import-no-routes' && typeof r.from.path === 'string' && r.to.pathNot !== undefined);
  return perModule.flatMap((r) => [r.to.pathNot ?? []].flat().map((to) => `${routeName(String(r.from.path))} → ${routeName(to)}`)).sort();
}

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

/** The `from → to: rule` lines dependency-cruiser reports for `files` (path → source). */
async function violations(files: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-depcruise-'));
  try {
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'node20', moduleResolution: 'node16', strict: true } }));
    for (const [file, source] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), source);
    }
    const roots = [...new Set(Object.keys(files).map((f) => f.split('/')[0] ?? f))];
    const { stdout } = await promisify(execFile)(process.execPath,
      [DEPCRUISE, '--config', CONFIG, '--output-type', 'json', ...roots],
      { cwd: dir, maxBuffer: 64 * 1024 * 1024 }).catch((error: { stdout?: string }) => {
      // a run that found violations exits non-zero; its report is still on stdout
      if (typeof error.stdout === 'string' && error.stdout.startsWith('{')) return { stdout: error.stdout };
      throw error;
    });
    const report = JSON.parse(stdout) as { summary: { violations: Violation[] } };
    // a package resolves through the link to the repository's node_modules: name it from there
    const shown = (to: string): string => to.replace(/^(\.\.\/)+.*?\/node_modules\//, 'node_modules/');
    return report.summary.violations.map((v) => `${v.from} → ${shown(v.to)}: ${v.rule.name}`).sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('.dependency-cruiser.cjs', function () {
  // a TypeScript program per run, in a child process
  this.timeout(120_000);

  it('reports an import circle, also one closed by a type-only import', async () => {
    const found = await violations({
      'src/runs/view.ts': "import type { Cache } from './cache';\nexport interface View { cache?: Cache }\n",
      'src/runs/cache.ts': "import type { View } from './view';\nexport class Cache { last?: View }\n",
      'src/runs/free.ts': "import type { View } from './view';\nexport const none: View | undefined = undefined;\n",
    });
    assert.equal(found.length, 1, JSON.stringify(found));
    assert.match(found[0] ?? '', /^src\/runs\/(cache|view)\.ts → src\/runs\/(view|cache)\.ts: no-circular$/);
  });

  it('forbids src/ importing workflows/, even for a type', async () => {
    const found = await violations({
      'workflows/index.ts': 'export async function runAutomation(): Promise<void> {}\n',
      'src/runs/service.ts': "import type { runAutomation } from '../../workflows';\nexport type Run = typeof runAutomation;\n",
    });
    assert.deepEqual(found, ['src/runs/service.ts → workflows/index.ts: src-imports-no-workflows']);
  });

  it('forbids activities importing the tools barrel, not a module of src/tools', async () => {
    const found = await violations({
      'src/tools/index.ts': "export { ToolCallError } from './errors';\n",
      'src/tools/errors.ts': 'export class ToolCallError extends Error {}\n',
      'activities/barrel.ts': "import { ToolCallError } from '../src/tools';\nexport const e = ToolCallError;\n",
      'activities/direct.ts': "import { ToolCallError } from '../src/tools/errors';\nexport const e = ToolCallError;\n",
    });
    assert.deepEqual(found, ['activities/barrel.ts → src/tools/index.ts: activities-import-no-tools-barrel']);
  });

  it('lets only src/http, src/app and tests import the HTTP layer', async () => {
    const found = await violations({
      'src/http/http-error.ts': 'export class HttpError extends Error {}\n',
      'src/http/routes/runs.ts': "import { HttpError } from '../http-error';\nexport const e = HttpError;\n",
      'src/app/start.ts': "import { HttpError } from '../http/http-error';\nexport const e = HttpError;\n",
      'test/http.test.ts': "import { HttpError } from '../src/http/http-error';\nexport const e = HttpError;\n",
      'src/net/http-client.ts': "import type { HttpError } from '../http/http-error';\nexport type E = HttpError;\n",
      'activities/step.ts': "import { HttpError } from '../src/http/http-error';\nexport const e = HttpError;\n",
    });
    assert.deepEqual(found, [
      'activities/step.ts → src/http/http-error.ts: only-http-and-app-import-http',
      'src/net/http-client.ts → src/http/http-error.ts: only-http-and-app-import-http',
    ]);
  });

  it('forbids a service room importing the HTTP layer, even for a type', async () => {
    const found = await violations({
      'src/http/http-error.ts': 'export class HttpError extends Error {}\n',
      'src/management/workflows.ts': "import { HttpError } from '../http/http-error';\nexport const e = HttpError;\n",
      'src/runs/run-service.ts': "import type { HttpError } from '../http/http-error';\nexport type E = HttpError;\n",
      'src/attachments/receive.ts': "import type { HttpError } from '../http/http-error';\nexport type E = HttpError;\n",
    });
    assert.deepEqual(found, [
      'src/attachments/receive.ts → src/http/http-error.ts: service-rooms-import-no-http',
      'src/management/workflows.ts → src/http/http-error.ts: service-rooms-import-no-http',
      'src/runs/run-service.ts → src/http/http-error.ts: service-rooms-import-no-http',
    ]);
  });

  it('forbids a route module importing another', async () => {
    const found = await violations({
      'src/http/routes/servers.ts': "export const OAUTH_CALLBACK_PATH = '/oauth/callback';\n",
      'src/http/routes/triggers.ts': 'export function triggerBody(): object { return {}; }\n',
      'src/http/run-access.ts': 'export function ownRun(): boolean { return true; }\n',
      'src/http/routes/connections.ts': [
        "import { OAUTH_CALLBACK_PATH } from './servers';",
        "import { triggerBody } from './triggers';",
        'export const used = [OAUTH_CALLBACK_PATH, triggerBody];', '',
      ].join('\n'),
      'src/http/routes/runs.ts': [
        "import type { triggerBody } from './triggers';",
        "import { ownRun } from '../run-access';",
        'export const used: [typeof triggerBody, typeof ownRun] | undefined = undefined;', '',
      ].join('\n'),
    });
    assert.deepEqual(found, [
      'src/http/routes/connections.ts → src/http/routes/servers.ts: routes-import-no-routes',
      'src/http/routes/connections.ts → src/http/routes/triggers.ts: routes-import-no-routes',
      'src/http/routes/runs.ts → src/http/routes/triggers.ts: routes-import-no-routes',
    ]);
  });

  it('lists as exceptions only route imports the tree still holds (delete a pair when its import goes)', () => {
    const exceptions = routeExceptions();
    const gone = exceptions.filter((pair) => {
      const [from, to] = pair.split(' → ');
      const source = readFileSync(path.join(ROOT, 'src', 'http', 'routes', `${from}.ts`), 'utf8');
      return !new RegExp(`from '\\./${to}'`).test(source);
    });
    assert.deepEqual(gone, [], 'these imports are gone: delete their pairs from ROUTE_IMPORTS_TO_REMOVE in .dependency-cruiser.cjs');
  });

  it('forbids a store room importing a service room, even for a type', async () => {
    const found = await violations({
      'src/schedules/schedule-spec.ts': 'export interface ScheduleConfig { cron: string[] }\n',
      'src/runs/run-service.ts': 'export class RunService {}\n',
      'src/people/roles.ts': "export type Role = 'admin';\n",
      'src/contracts/roles.ts': "export type Role = 'admin';\n",
      'src/config/config.ts': 'export const config = {};\n',
      'src/registry/trigger-schedules.ts': [
        "import type { ScheduleConfig } from '../schedules/schedule-spec';",
        "import { RunService } from '../runs/run-service';",
        "import type { Role } from '../contracts/roles';",
        "import { config } from '../config/config';",
        'export const used: [ScheduleConfig?, Role?] = [];',
        'export const values = [RunService, config];', '',
      ].join('\n'),
      'src/crypto/runtime-tokens.ts': "import type { Role } from '../people/roles';\nexport type R = Role;\n",
    });
    assert.deepEqual(found, [
      'src/crypto/runtime-tokens.ts → src/people/roles.ts: store-rooms-import-no-services',
      'src/registry/trigger-schedules.ts → src/runs/run-service.ts: store-rooms-import-no-services',
      'src/registry/trigger-schedules.ts → src/schedules/schedule-spec.ts: store-rooms-import-no-services',
    ]);
  });

  it('keeps src/common sandbox-safe: no Node built-in, no registry, no package the sandbox lacks', async () => {
    const found = await violations({
      'src/registry/index.ts': 'export interface Registry { name: string }\n',
      'src/common/narrow.ts': 'export const isString = (v: unknown): v is string => typeof v === \'string\';\n',
      'src/common/probe.ts': [
        "import { readFileSync } from 'node:fs';",
        "import { LRUCache } from 'lru-cache';",
        "import type { Registry } from '../registry';",
        "import { z } from 'zod';",
        "import { ApplicationFailure } from '@temporalio/common';",
        "import { sleep } from '@temporalio/workflow';",
        "import { isString } from './narrow';",
        'export const used = [readFileSync, LRUCache, z, ApplicationFailure, sleep, isString];',
        'export type R = Registry;', '',
      ].join('\n'),
    });
    assert.equal(found.length, 3, JSON.stringify(found));
    assert.equal(found[0], 'src/common/probe.ts → fs: common-stays-sandbox-safe');
    assert.match(found[1] ?? '', /^src\/common\/probe\.ts → node_modules\/lru-cache\/\S+: common-stays-sandbox-safe$/);
    assert.equal(found[2], 'src/common/probe.ts → src/registry/index.ts: common-stays-sandbox-safe');
  });

  it('keeps the generic MCP layer free of server kinds', async () => {
    const found = await violations({
      'src/tools/server.ts': 'export interface ToolServer { name: string }\n',
      'src/tools/servers/mail/index.ts': "export const kind = 'mail';\n",
      'src/tools/custom/openapi-server.ts': "export const kind = 'openapi';\n",
      'src/tools/mcp/task-kind.ts': 'export interface TaskKind { server: string }\n',
      'src/tools/mcp/endpoint.ts': [
        "import type { ToolServer } from '../server';",
        "import type { TaskKind } from './task-kind';",
        "import { kind } from '../servers/mail';",
        "import type { kind as custom } from '../custom/openapi-server';",
        'export const used: [ToolServer?, TaskKind?, (typeof custom)?] = [];',
        'export const mail = kind;', '',
      ].join('\n'),
    });
    assert.deepEqual(found, [
      'src/tools/mcp/endpoint.ts → src/tools/custom/openapi-server.ts: mcp-layer-imports-no-server-kind',
      'src/tools/mcp/endpoint.ts → src/tools/servers/mail/index.ts: mcp-layer-imports-no-server-kind',
    ]);
  });

  it('lets workflow code import values from @temporalio/workflow, workflows/ and src/common/, types also from activities/', async () => {
    const found = await violations({
      'src/common/interpolate.ts': "export const interpolate = (s: string): string => s;\n",
      'src/registry/index.ts': 'export interface Registry { name: string }\n',
      'activities/index.ts': "export const createActivities = (): { run(): Promise<void> } => ({ run: async () => undefined });\nexport type Activities = ReturnType<typeof createActivities>;\n",
      'workflows/steps/helper.ts': 'export const two = 2;\n',
      'workflows/steps/ok.ts': [
        "import { proxyActivities } from '@temporalio/workflow';",
        "import type { Activities } from '../../activities';",
        "import { interpolate } from '../../src/common/interpolate';",
        "import { two } from './helper';",
        'export const used = [proxyActivities<Activities>, interpolate, two];', '',
      ].join('\n'),
      'workflows/steps/bad.ts': [
        "import { readFileSync } from 'node:fs';",
        "import { ApplicationFailure } from '@temporalio/common';",
        "import { createActivities } from '../../activities';",
        "import type { Registry } from '../../src/registry';",
        'export const used = [readFileSync, ApplicationFailure, createActivities] as unknown as Registry;', '',
      ].join('\n'),
    });
    assert.deepEqual(found, [
      'workflows/steps/bad.ts → activities/index.ts: workflows-import-only-sandbox-safe-values',
      'workflows/steps/bad.ts → fs: workflows-import-only-sandbox-safe-values',
      'workflows/steps/bad.ts → node_modules/@temporalio/common/lib/index.js: workflows-import-only-sandbox-safe-values',
      'workflows/steps/bad.ts → src/registry/index.ts: workflows-import-types-only-from-activities',
    ]);
  });
});
