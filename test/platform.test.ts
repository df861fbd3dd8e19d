/**
 * The platform flowgate promises: the Node lines of `engines`, the Node the launcher picks
 * (scripts/with-node.sh, .node-version), the entry points' guard (src/app/node-line.ts), and a lockfile
 * with one SQLite driver (none native), one zod major and OpenTelemetry packages of one major.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { supportedNode } from '../src/app/node-line';

const ROOT = path.resolve(__dirname, '..', '..');
const packageJson = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string }; dependencies: Record<string, string>; devDependencies: Record<string, string>;
};
const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; dev?: boolean }> };

/** Whether x.y.z satisfies `engines.node`, a `||` of caret ranges (^a.b.c, a > 0). */
function satisfiesEngines(version: string, range: string): boolean {
  const [major, minor, patch] = version.split('.').map(Number) as [number, number, number];
  return range.split('||').some((term) => {
    const match = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(term.trim());
    assert.ok(match, `engines term ${term} is not a caret range`);
    const [want, wantMinor, wantPatch] = match.slice(1).map(Number) as [number, number, number];
    return major === want && (minor > wantMinor || (minor === wantMinor && patch >= wantPatch));
  });
}

/** Installed packages by name (every copy in the lockfile), with their versions. */
function installed(): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const [where, entry] of Object.entries(lock.packages)) {
    const name = where.split('node_modules/').pop();
    if (!where || !name || !entry.version) continue;
    byName.set(name, [...(byName.get(name) ?? []), entry.version]);
  }
  return byName;
}

const major = (version: string): number => Number(version.split('.')[0]);

describe('platform', () => {
  const VERSIONS = ['20.20.2', '21.7.3', '22.12.0', '22.18.0', '22.19.0', '22.23.3', '23.11.0', '24.0.0', '24.21.0', '25.1.0', '26.0.0', '26.10.0', '27.0.0'];

  it('supports the same Node lines in engines, the launcher and the entry points\' guard (22.19+, 24, 26)', async () => {
    for (const version of VERSIONS) {
      const engines = satisfiesEngines(version, packageJson.engines.node);
      assert.equal(supportedNode(version), engines, `src/app/node-line.ts on ${version}`);
      const launcher = await promisify(execFile)('bash', [path.join(ROOT, 'scripts', 'with-node.sh'), '--supported', version]).then(() => true, () => false);
      assert.equal(launcher, engines, `scripts/with-node.sh --supported ${version}`);
    }
    assert.deepEqual(VERSIONS.filter((v) => supportedNode(v)), ['22.19.0', '22.23.3', '24.0.0', '24.21.0', '26.0.0', '26.10.0']);
  });

  it('runs this suite on a supported line, pins an exact supported Node in .node-version, and types Node as the lowest line', () => {
    assert.ok(supportedNode(process.versions.node), `the suite runs on Node ${process.version}`);
    const pinned = readFileSync(path.join(ROOT, '.node-version'), 'utf8').trim();
    assert.match(pinned, /^\d+\.\d+\.\d+$/);
    assert.ok(supportedNode(pinned), `.node-version ${pinned}`);
    const lowest = Math.min(...packageJson.engines.node.split('||').map((term) => Number(/\^(\d+)/.exec(term)?.[1])));
    assert.equal(lowest, 22);
    assert.equal(major(packageJson.devDependencies['@types/node']?.replace(/^\^/, '') ?? ''), lowest);
    assert.equal(major(installed().get('@types/node')?.[0] ?? ''), lowest);
  });

  /**
   * A machine whose node is unsupported (a stand-in `node` that answers v20.20.2, first on PATH):
   * the launcher runs the command on .node-version's Node instead (installing it once into the
   * cache when missing, as `npm start` would), and so does the `flowgate` command.
   */
  it('runs commands and the flowgate CLI on .node-version\'s Node where the machine\'s node is unsupported', async function () {
    this.timeout(600_000);
    const dir = mkdtempSync(path.join(tmpdir(), 'flowgate-node20-'));
    try {
      writeFileSync(path.join(dir, 'node'), '#!/bin/sh\necho v20.20.2\n', { mode: 0o755 });
      const env = { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` };
      const pinned = readFileSync(path.join(ROOT, '.node-version'), 'utf8').trim();
      const { stdout } = await promisify(execFile)('bash', [path.join(ROOT, 'scripts', 'with-node.sh'), 'auto', 'node', '--version'], { env, timeout: 590_000 });
      assert.equal(stdout.trim(), `v${pinned}`);
      const help = await promisify(execFile)(path.join(ROOT, 'scripts', 'flowgate'), ['--help'], { env, timeout: 60_000 });
      assert.match(help.stdout, /operate and call a flowgate instance/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('installs one SQLite driver (node:sqlite, built in), one zod major, one copy of each @temporalio package at the SDK version and OpenTelemetry of one major', () => {
    const packages = installed();
    for (const name of ['better-sqlite3', 'sqlite3', 'better-sqlite3-v13']) assert.equal(packages.get(name), undefined, `${name} is installed`);
    assert.deepEqual([...new Set(packages.get('zod')?.map(major))], [4]);
    // the OpenTelemetry v2 interceptors exist only at 1.23.0; every other package is the SDK's 1.24.0, one copy each (docs/dependencies.md)
    const temporal = [...packages].filter(([name]) => name.startsWith('@temporalio/') && name !== '@temporalio/interceptors-opentelemetry-v2');
    assert.deepEqual([...new Set(temporal.flatMap(([, versions]) => versions))], ['1.24.0']);
    for (const [name, versions] of temporal) assert.equal(versions.length, 1, `one copy of ${name}`);
    assert.deepEqual(packages.get('@temporalio/interceptors-opentelemetry-v2'), ['1.23.0']);
    // the stable OpenTelemetry packages: not the API (its 1.x is SDK 2's), the semantic conventions
    // (versioned apart) or the 0.x experimental ones (the OTLP exporter's 0.223 goes with SDK 2.12)
    const versioned = new Set(['@opentelemetry/api', '@opentelemetry/semantic-conventions']);
    const stable = [...packages].filter(([name]) => name.startsWith('@opentelemetry/') && !versioned.has(name))
      .flatMap(([, versions]) => versions).filter((v) => major(v) >= 1);
    assert.ok(stable.length > 0);
    assert.deepEqual([...new Set(stable.map(major))], [2]);
    assert.equal(packages.get('@temporalio/interceptors-opentelemetry'), undefined, 'the OpenTelemetry 1 interceptors');
  });

  it('declares what it imports and nothing it does not', () => {
    const declared = { ...packageJson.dependencies };
    assert.ok(declared['@temporalio/proto'], '@temporalio/proto is imported by src/runs/run-service.ts');
    for (const unused of ['@opentelemetry/semantic-conventions', 'protobufjs', '@types/busboy', 'better-sqlite3']) {
      assert.equal(declared[unused], undefined, `${unused} in dependencies`);
    }
  });
});
