/**
 * The import-graph rules of `npm run lint:deps` (.dependency-cruiser.cjs): each case writes a few
 * small modules into a scratch tree laid out like the repository, runs dependency-cruiser over it
 * with the project's configuration, and checks which rule each import breaks, if any.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/** The repository root (this file runs from dist/test/). */
const ROOT = path.resolve(__dirname, '..', '..');
const DEPCRUISE = path.join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');

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
      [DEPCRUISE, '--config', path.join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'json', ...roots],
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
      'src/attachments/receive.ts': "import type { HttpError } from '../http/http-error';\nexport type E = HttpError;\n",
    });
    assert.deepEqual(found, ['src/attachments/receive.ts → src/http/http-error.ts: only-http-and-app-import-http']);
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
