/**
 * The suite's layers (CONTRIBUTING.md, "Layers"): `npm test` runs every test file through
 * .mocharc.json; `npm run test:<layer>` runs one layer through .mocharc.<layer>.json. Every test
 * file belongs to exactly one layer, so running the four layers runs the whole suite. CI's run on
 * the lowest Node line (.mocharc.node-line.json, `npm run test:node-line`) is no layer: the unit and
 * fast layers plus the tests that depend on the Node line.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/** The clone (this file runs from dist/test/). */
const ROOT = path.resolve(__dirname, '..', '..');
const LAYERS = ['unit', 'fast', 'integration', 'e2e'] as const;

const MocharcSchema = z.object({ spec: z.array(z.string()).min(1), ignore: z.array(z.string()).optional(), require: z.array(z.string()).optional() });
const PackageSchema = z.object({ scripts: z.record(z.string(), z.string()) });

/** A mocha config; mocha reads comments in it, so whole-line `//` comments are dropped first. */
function mocharc(file: string): z.infer<typeof MocharcSchema> {
  const text = readFileSync(path.join(ROOT, file), 'utf8').replace(/^\s*\/\/.*$/gm, '');
  return MocharcSchema.parse(JSON.parse(text));
}

/** A mocha spec glob as a regular expression: `**` any folders, `*` within one path segment. */
export function globToRegExp(glob: string): RegExp {
  let pattern = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      pattern += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') {
      pattern += '[^/]*';
    } else {
      pattern += /[\\^$.|?+()[\]{}]/.test(c) ? `\\${c}` : c;
    }
  }
  return new RegExp(`^${pattern}$`);
}

function testFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return testFiles(relative);
    return entry.name.endsWith('.test.js') ? [relative] : [];
  });
}

function runs(config: z.infer<typeof MocharcSchema>, file: string): boolean {
  return config.spec.some((g) => globToRegExp(g).test(file)) && !(config.ignore ?? []).some((g) => globToRegExp(g).test(file));
}

describe('test layers', () => {
  it('reads spec globs as mocha does: ** spans folders, * stays in one', () => {
    assert.ok(globToRegExp('dist/test/**/*.test.js').test('dist/test/docs.test.js'));
    assert.ok(globToRegExp('dist/test/**/*.test.js').test('dist/test/fast/support/x.test.js'));
    assert.ok(!globToRegExp('dist/test/*.test.js').test('dist/test/fast/x.test.js'));
    assert.ok(globToRegExp('dist/test/fast/**').test('dist/test/fast/x.test.js'));
    assert.ok(!globToRegExp('dist/test/docs.test.js').test('dist/test/docsXtest.js'));
  });

  it('puts every test file in exactly one layer, and npm test runs them all', () => {
    const files = testFiles('dist/test');
    assert.ok(files.length > 100, `only ${files.length} test files found under dist/test`);
    const all = mocharc('.mocharc.json');
    const layers = LAYERS.map((layer) => ({ layer, config: mocharc(`.mocharc.${layer}.json`) }));
    const problems = files.flatMap((file) => {
      const within = layers.filter(({ config }) => runs(config, file)).map(({ layer }) => layer);
      const problem = [];
      if (within.length !== 1) problem.push(`${file} is in ${within.length === 0 ? 'no layer' : `the layers ${within.join(', ')}`}`);
      if (!runs(all, file)) problem.push(`${file} is not run by npm test`);
      return problem;
    });
    assert.deepEqual(problems, []);
  });

  it('gives each layer an npm script, and the unit layer needs no Temporal server', () => {
    const { scripts } = PackageSchema.parse(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')));
    for (const layer of LAYERS) assert.match(scripts[`test:${layer}`] ?? '', new RegExp(`--config \\.mocharc\\.${layer}\\.json`), `npm run test:${layer}`);
    assert.equal(mocharc('.mocharc.unit.json').require, undefined, 'the unit layer starts no Temporal dev server (test/setup/root-hooks.js)');
    assert.deepEqual(mocharc('.mocharc.fast.json').require, mocharc('.mocharc.json').require);
  });

  it('runs the unit and fast layers and the named Node-line tests on the lowest line, and CI runs it', () => {
    const nodeLine = mocharc('.mocharc.node-line.json');
    const files = testFiles('dist/test');
    const layer = (name: string): string[] => files.filter((file) => runs(mocharc(`.mocharc.${name}.json`), file));
    const missing = [...layer('unit'), ...layer('fast')].filter((file) => !runs(nodeLine, file));
    assert.deepEqual(missing, [], 'files of the unit and fast layers that .mocharc.node-line.json does not run');
    const named = nodeLine.spec.filter((glob) => !glob.includes('*'));
    assert.ok(named.length > 0);
    assert.deepEqual(named.filter((file) => !existsSync(path.join(ROOT, file))), [], 'tests .mocharc.node-line.json names that do not exist');
    assert.deepEqual(nodeLine.require, mocharc('.mocharc.json').require, 'the fast layer needs the Temporal dev server');
    const { scripts } = PackageSchema.parse(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')));
    assert.match(scripts['test:node-line'] ?? '', /--config \.mocharc\.node-line\.json/);
    const ci = readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8');
    assert.match(ci, /with-node\.sh "\$highest" npm test\n/, '.ci/run runs the whole suite on .node-version\'s line');
    assert.match(ci, /with-node\.sh "\$lowest" npm run test:node-line\n/, '.ci/run runs the Node-line tests on the lowest line');
  });
});
