/**
 * The project's own ESLint config (eslint.config.mjs) holds the Temporal boundaries at any folder
 * depth and catches floating promises. Each case lints a small string as if it were a file at the
 * given path; nothing is written to disk.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { ESLint } from 'eslint';

/** The repository root (this file runs from dist/test/). */
const ROOT = path.resolve(__dirname, '..', '..');
const FIXTURES = ['workflows/steps/lint-fixture.ts', 'activities/nested/lint-fixture.ts', 'src/lint-fixture.ts'];

describe('eslint.config.mjs', function () {
  // Type-aware linting builds a TypeScript program first: seconds, not milliseconds.
  this.timeout(120_000);
  let eslint: ESLint;

  before(() => {
    eslint = new ESLint({
      cwd: ROOT,
      overrideConfigFile: path.join(ROOT, 'eslint.config.mjs'),
      // The fixtures exist only as strings, so tsconfig.json does not list them: the type-aware
      // parser is told to give them a default project with the same compiler options.
      overrideConfig: {
        files: ['**/lint-fixture.ts'],
        languageOptions: { parserOptions: { projectService: { allowDefaultProject: FIXTURES, defaultProject: 'tsconfig.json' } } },
      },
    });
  });

  /** The ids of the rules that fire on `code` placed at `file` (relative to the root). */
  async function firedRules(file: string, code: string): Promise<string[]> {
    const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
    assert.ok(result, 'ESLint returned no result');
    const fatal = result.messages.filter((m) => m.fatal);
    assert.deepEqual(fatal, [], 'the fixture must parse');
    return result.messages.map((m) => m.ruleId ?? '');
  }

  for (const [specifier, what] of [
    ['../../activities', 'the activities barrel'],
    ['../../activities/run-step', 'an activity module'],
    ['../../src/http/http-error', 'the HTTP gateway'],
    ['../../src/registry', 'the registry'],
    ['../../src/tools/server', 'the tool gateway'],
    ['../../temporal/worker', 'the Temporal wiring'],
  ] as const) {
    it(`rejects a value import of ${what} from a nested workflows/ folder`, async () => {
      const fired = await firedRules('workflows/steps/lint-fixture.ts', `import * as m from '${specifier}';\nexport const used = m;\n`);
      assert.ok(fired.includes('no-restricted-imports'), `${specifier} passed lint: ${JSON.stringify(fired)}`);
    });
  }

  it('rejects a module-level let or var in workflows/ (its modules are shared by every run), not a const', async () => {
    for (const code of ['let level: number | undefined;\nexport const get = (): number | undefined => level;\n', 'export let count = 0;\n', 'var seen = 0;\nexport const get = (): number => seen;\n']) {
      const fired = await firedRules('workflows/steps/lint-fixture.ts', code);
      assert.ok(fired.includes('no-restricted-syntax'), `${code} passed lint: ${JSON.stringify(fired)}`);
    }
    const fired = await firedRules('workflows/steps/lint-fixture.ts', 'export const LIMIT = 5;\nexport function f(): number {\n  let n = LIMIT;\n  n += 1;\n  return n;\n}\n');
    assert.ok(!fired.includes('no-restricted-syntax'), JSON.stringify(fired));
  });

  it('rejects a Node built-in in a nested workflows/ folder', async () => {
    const fired = await firedRules('workflows/steps/lint-fixture.ts', "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n");
    assert.ok(fired.includes('no-restricted-imports'));
  });

  it('lets a nested workflow import activities as types and src/common helpers as values', async () => {
    const code = [
      "import type { Activities } from '../../activities';",
      "import { durationMs } from '../../src/common/duration';",
      'export const ms: number = durationMs(\'1s\');',
      'export type A = Activities;',
      '',
    ].join('\n');
    assert.deepEqual(await firedRules('workflows/steps/lint-fixture.ts', code), []);
  });

  it('rejects workflows and the HTTP gateway in a nested activities/ folder', async () => {
    for (const specifier of ['../../workflows/steps/chain', '../../workflows', '../../src/http/app']) {
      const fired = await firedRules('activities/nested/lint-fixture.ts', `import * as m from '${specifier}';\nexport const used = m;\n`);
      assert.ok(fired.includes('no-restricted-imports'), `${specifier} passed lint: ${JSON.stringify(fired)}`);
    }
  });

  it('rejects a floating promise and a promise handed where a void callback is expected', async () => {
    const code = [
      'async function work(): Promise<void> {}',
      'export function caller(): void {',
      '  work();',
      '  [1].forEach(async () => { await work(); });',
      '  setTimeout(work, 1);',
      '}',
      '',
    ].join('\n');
    const fired = await firedRules('src/lint-fixture.ts', code);
    assert.ok(fired.includes('@typescript-eslint/no-floating-promises'), JSON.stringify(fired));
    assert.ok(fired.includes('@typescript-eslint/no-misused-promises'), JSON.stringify(fired));
  });
});
