/**
 * The composition root only wires, and only it builds services (src/app/services.ts): no route,
 * tool server or activity constructs a service of its own, and the rooms below the gateway do not
 * reach up into it. Each case reads the sources (src/, activities/, temporal/) as text and names
 * every offending line.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The repository root (this file runs from dist/test/app/). */
const ROOT = path.resolve(__dirname, '..', '..', '..');

interface SourceLine {
  file: string;
  line: number;
  text: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(relative);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [relative] : [];
  });
}

const FILES = ['src', 'activities', 'temporal'].flatMap(sourceFiles);

function linesMatching(pattern: RegExp, files: readonly string[] = FILES): SourceLine[] {
  return files.flatMap((file) => readFileSync(path.join(ROOT, file), 'utf8').split('\n')
    .map((text, i) => ({ file, line: i + 1, text: text.trim() }))
    .filter(({ text }) => pattern.test(text) && !text.startsWith('*') && !text.startsWith('//')));
}

const where = (found: readonly SourceLine[]): string => found.map((f) => `${f.file}:${f.line}: ${f.text}`).join('\n');

/** Classes whose one instance every door shares (caches, the catalog, the lazily assembled dispatcher). */
const SERVICE_CLASSES = [
  'TriggerService', 'AgentService', 'RunService', 'ScheduleService', 'WebhookSecrets', 'RunRestarts', 'RunWatcher', 'FinishedRunCache',
  'WorkflowTasks', 'CodeAgentTasks', 'WorkflowTools', 'CustomServers',
  'WorkflowAdmin', 'TriggerAdmin', 'KeyAdmin', 'MemberAdmin', 'BudgetAdmin',
];
/** Factories of services and of the keys' users (the dispatcher assembles its catalog and connection store inside createToolDispatcher): called by the composition root only. */
const SERVICE_FACTORIES = ['createToolDispatcher', 'createSigner', 'createApprovalLinks', 'createRuntimeTokens', 'createConnectionCipher'];

describe('the composition root (src/app/services.ts)', () => {
  it('reads sources: the walk finds the routes, the tool servers and the activities', () => {
    for (const file of ['src/app/services.ts', 'src/http/routes/triggers.ts', 'src/tools/servers/agent-management/index.ts', 'activities/resolve-trigger.ts']) {
      assert.ok(FILES.includes(file), `${file} was not found under ${ROOT}`);
    }
  });

  for (const name of SERVICE_CLASSES) {
    it(`is the only place a ${name} is constructed`, () => {
      const found = linesMatching(new RegExp(`\\bnew ${name}\\b`)).filter((f) => !f.file.startsWith('src/app/'));
      assert.deepEqual(found, [], `${name} built outside src/app/ (hand it down through GatewayDeps, ServerKindDeps or createActivities(deps)):\n${where(found)}`);
    });
  }

  for (const name of SERVICE_FACTORIES) {
    it(`is the only caller of ${name}()`, () => {
      const found = linesMatching(new RegExp(`\\b${name}\\(`))
        .filter((f) => !f.file.startsWith('src/app/') && !new RegExp(`function ${name}\\(`).test(f.text));
      assert.deepEqual(found, [], `${name}() called outside src/app/:\n${where(found)}`);
    });
  }

  it('keeps the activities off the tools barrel (src/tools/index.ts loads every server kind)', () => {
    const found = linesMatching(/from '\.\.\/(?:\.\.\/)*src\/tools(?:\/index)?'/, FILES.filter((f) => f.startsWith('activities/')));
    assert.deepEqual(found, [], `import src/tools/errors, src/tools/caller or src/tools/server instead:\n${where(found)}`);
  });

  it('keeps every room below the gateway from importing src/http', () => {
    const below = FILES.filter((f) => !f.startsWith('src/http/') && !f.startsWith('src/app/'));
    const found = linesMatching(/from '(?:\.\.?\/)+(?:src\/)?http\//, below);
    assert.deepEqual(found, [], `a lower layer imports the HTTP layer (give it its own error or type, mapped in src/http):\n${where(found)}`);
  });
});
