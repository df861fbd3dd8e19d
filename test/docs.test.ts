/**
 * The docs stay walkable and true to the code: README.md short, every link inside the repository
 * (files and headings), and docs/configuration.md listing exactly what the configuration schema
 * accepts, with its defaults. The checks themselves are proven on small fixtures, so neither can
 * pass by accident.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { EnvSchema } from '../src/config/config';
import { configReferenceProblems, findLinks, githubSlug, headingAnchors, linkProblems } from './support/docs-check';

/** The repository root (this file runs from dist/test/). */
const ROOT = path.resolve(__dirname, '..', '..');
const README_MAX_LINES = 150;

/** Markdown files under `dir` (relative to the root), at any depth. */
function markdownUnder(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return markdownUnder(relative);
    return entry.name.endsWith('.md') ? [relative] : [];
  });
}

function lineCount(text: string): number {
  const lines = text.split('\n');
  return text.endsWith('\n') ? lines.length - 1 : lines.length;
}

describe('docs', () => {
  const docs = markdownUnder('docs');
  const checked = ['README.md', 'CONTRIBUTING.md', ...docs];

  it(`keeps README.md within ${README_MAX_LINES} lines`, () => {
    const lines = lineCount(readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines; move reference content into docs/`);
  });

  it('has docs under docs/ to check', () => {
    assert.ok(docs.length >= 5, `found ${docs.join(', ')}`);
  });

  it('resolves every link of README.md, CONTRIBUTING.md and docs/ inside the repository, headings included', () => {
    assert.deepEqual(checked.flatMap((file) => linkProblems(ROOT, file)), []);
  });

  it('indexes every doc under docs/ from README.md', () => {
    const linked = new Set(findLinks(readFileSync(path.join(ROOT, 'README.md'), 'utf8'))
      .map((link) => path.normalize(link.target.split('#')[0] ?? '')));
    assert.deepEqual(docs.filter((doc) => !linked.has(path.normalize(doc))), []);
  });

  it('lists in docs/configuration.md exactly the variables the configuration schema accepts, with their defaults', () => {
    const reference = readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
    assert.deepEqual(configReferenceProblems(EnvSchema.shape, reference), []);
  });
});

describe('docs checks', () => {
  let root: string;

  before(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'flowgate-docs-check-'));
    mkdirSync(path.join(root, 'docs'));
    writeFileSync(path.join(root, 'docs', 'target.md'), '# Target\n\n## Getting `started`: the two commands\n\n## Twice\n\n## Twice\n');
  });
  after(() => {
    rmSync(root, { recursive: true, force: true });
  });

  /** The problems `linkProblems` finds in a README.md at the fixture root holding `markdown`. */
  function problemsOf(markdown: string): string[] {
    writeFileSync(path.join(root, 'README.md'), markdown);
    return linkProblems(root, 'README.md');
  }

  it('accepts links to existing files, folders and headings, and to headings of the file itself', () => {
    assert.deepEqual(problemsOf([
      '# Top',
      'See [the target](docs/target.md), [a heading](docs/target.md#getting-started-the-two-commands),',
      '[the second Twice](docs/target.md#twice-1), [the folder](docs/), [here](#top) and ![img](./docs/target.md).',
      '[ref]: docs/target.md#target',
    ].join('\n')), []);
  });

  it('reports a link to a missing file, to a missing heading, and one that leaves the repository', () => {
    const problems = problemsOf('[gone](docs/gone.md) [bad](docs/target.md#nowhere) [out](../outside.md) [abs](/../x.md)\n');
    assert.equal(problems.length, 4, problems.join('\n'));
    assert.match(problems[0] ?? '', /no such file docs\/gone\.md/);
    assert.match(problems[1] ?? '', /has no heading #nowhere/);
    assert.match(problems[2] ?? '', /resolves outside the repository/);
    assert.match(problems[3] ?? '', /resolves outside the repository/);
  });

  it('reports links with a scheme, autolinks and bare URLs as pointing outside the repository', () => {
    const problems = problemsOf([
      '[site](https://example.com) [plain](http://example.com/x) [mail](mailto:a@example.com)',
      '<https://example.com/auto> and a bare https://example.com/bare and www.example.com too.',
      '[ref]: https://example.com/ref',
      '<a href="https://example.com/html">html</a>',
    ].join('\n'));
    assert.equal(problems.length, 8, problems.join('\n'));
    for (const problem of problems) assert.match(problem, /points outside the repository/);
  });

  it('ignores links and URLs inside fenced code and code spans', () => {
    assert.deepEqual(problemsOf([
      '```sh',
      'curl -s http://127.0.0.1:8080/healthz   # [not a link](https://example.com)',
      '```',
      '~~~',
      '[gone](docs/gone.md)',
      '~~~',
      'Inline `https://example.com` and ``a `[gone](gone.md)` b`` and `a link',
      'across lines [gone](gone.md)` stay code.',
    ].join('\n')), []);
  });

  it('slugs headings the way GitHub anchors them', () => {
    assert.equal(githubSlug('Control flow: conditions, branches, loops'), 'control-flow-conditions-branches-loops');
    assert.equal(githubSlug('`npm run bench:compare`: flowgate against raw Temporal'), 'npm-run-benchcompare-flowgate-against-raw-temporal');
    assert.equal(githubSlug('Discovery: `/tools/mcp`'), 'discovery-toolsmcp');
    assert.equal(githubSlug('`FLOWGATE_ROLE` and [links](x.md)'), 'flowgate_role-and-links');
    assert.deepEqual([...headingAnchors('# A\n```\n# not a heading\n```\n## A\n')], ['a', 'a-1']);
  });

  const shape = {
    PORT: z.coerce.number().default(8080),
    HOST: z.string().default('127.0.0.1'),
    SECRET: z.string().optional(),
    FLAG: z.enum(['true', 'false']).transform((v) => v === 'true').default(false),
    SEARCH: z.string().default(''),
  };
  const table = (rows: string[]): string => ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
  const good = [
    '| `PORT` | `8080` | the port |',
    '| `HOST` | `127.0.0.1` | the address |',
    '| `SECRET` | unset: generated | a secret |',
    '| `FLAG` | `false` | a switch |',
    '| `SEARCH` | `""` | a path |',
  ];

  it('accepts a reference that matches the schema, split over several tables', () => {
    assert.deepEqual(configReferenceProblems(shape, `${table(good.slice(0, 2))}\n\ntext\n\n${table(good.slice(2))}\n`), []);
  });

  it('reports a schema variable without a row, a row the schema lacks, a duplicate and a wrong default', () => {
    const problems = configReferenceProblems(shape, table([
      '| `PORT` | `8081` | the port |',
      '| `HOST` | `127.0.0.1` | the address |',
      '| `HOST` | `127.0.0.1` | again |',
      '| `SECRET` | `abc` | a secret |',
      '| `FLAG` | `false` | |',
      '| `EXTRA` | `1` | not in the schema |',
      '| PLAIN | `1` | no backticks |',
    ]));
    assert.deepEqual(problems.map((p) => p.replace(/^line \d+: /, '')), [
      'PORT defaults to 8080 in the schema, the table shows "`8081`"',
      'SECRET has no default in the schema, so its default cell must start with "unset", found "`abc`"',
      'FLAG has no meaning',
      'EXTRA is not a variable of the configuration schema',
      'the variable cell must be one name in backticks, found "PLAIN"',
      'HOST has 2 rows',
      'SEARCH is accepted by the configuration schema but has no row',
    ]);
  });
});
