/**
 * The definitions format on its own (no Temporal, no HTTP): the published JSON Schema is the one
 * the zod schemas generate, a folder's problems are placed by file and path, an overlay patches,
 * the diff reads, and a Git source splits at its ref. The end to end is test/cli/definitions.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { splitGitSource } from '../../src/cli/definitions';
import { DefinitionAdmin, WorkflowAdmin } from '../../src/management';
import { diffOf } from '../../src/management/definitions/forms';
import { readFolder } from '../../src/management/definitions/parse';

const ROOT = path.resolve(__dirname, '..', '..', '..');

describe('definitions format', () => {
  const workflows = new WorkflowAdmin({ registry: {} as never, schedules: {} as never, log: { warn: () => undefined } });
  const admin = new DefinitionAdmin({ registry: {} as never, workflows, triggers: {} as never, servers: {} as never, agents: {} as never });

  it('publishes in docs/definitions.schema.json the JSON Schema the zod schemas generate, and it checks files', () => {
    const published: unknown = JSON.parse(readFileSync(path.join(ROOT, 'docs', 'definitions.schema.json'), 'utf8'));
    assert.deepEqual(published, JSON.parse(JSON.stringify(admin.jsonSchema())), 'regenerate docs/definitions.schema.json from DefinitionAdmin.jsonSchema()');
    const validate = new Ajv2020({ strict: false, logger: false }).compile(admin.jsonSchema());
    assert.equal(validate({ kind: 'workflow', name: 'w', steps: [{ name: 'Hi', type: 'template', template: 'hi' }] }), true);
    assert.equal(validate({ kind: 'trigger', name: 't', workflow: 'w', schedule: { cron: '@daily' }, verify: { preset: 'github', secretRefs: ['GH_SECRET'] } }), true);
    assert.equal(validate({ kind: 'trigger', name: 't', workflow: 'w', verify: { preset: 'github', secrets: ['in-clear-secret'] } }), false, 'a secret value is no reference');
    assert.equal(validate({ kind: 'bogus', name: 'x' }), false);
  });

  it('places every problem by file (and document) and path, with the line of a syntax error', () => {
    const { errors } = readFolder({
      files: [
        { path: 'a.yaml', text: 'kind: workflow\nname: a\nsteps:\n  - { name: Hi, type: template }\n' },
        { path: 'b.yaml', text: 'kind: trigger\nname: b\nworkflow: a\n---\nkind: trigger\nname: c\nworkflow: a\npriority: 0\n' },
        { path: 'c.yaml', text: 'kind: agent\nname: [\n' },
        { path: 'd.json', text: '{"kind": "trigger", "name": "b", "workflow": "a"}' },
        { path: 'e.yaml', text: 'kind: connection\nname: x\n' },
      ],
    }, workflows.definitionSchema);
    const lines = errors.map((e) => `${e.file}|${e.path}`);
    assert.ok(lines.includes('a.yaml|steps.0.template'), lines.join('\n'));
    assert.ok(lines.includes('b.yaml#2|priority'), lines.join('\n'));
    assert.ok(lines.some((l) => /^c\.yaml\|line \d+, column \d+$/.test(l)), lines.join('\n'));
    assert.ok(errors.some((e) => e.file === 'd.json' && /trigger\/b is defined twice \(also in b\.yaml#1\)/.test(e.message)), JSON.stringify(errors));
    assert.ok(lines.includes('e.yaml|kind'), lines.join('\n'));
  });

  it('patches the folder with an overlay: objects merge, values replace, null removes; an unknown target is an error', () => {
    const files = [{ path: 't.yaml', text: 'kind: trigger\nname: t\nworkflow: w\ncallbackUrl: https://dev.example.com/done\nschedule: { cron: "0 3 * * *", paused: false }\n' }];
    const overlay = { path: 'prod.yaml', text: 'kind: overlay\npatches:\n  trigger/t:\n    callbackUrl: null\n    schedule: { paused: true }\n' };
    const { folder, errors } = readFolder({ files, overlay }, workflows.definitionSchema);
    assert.deepEqual(errors, []);
    const t = folder.trigger.get('t')?.value;
    assert.equal(t?.callbackUrl, undefined);
    assert.equal(t?.schedule?.paused, true);
    assert.deepEqual(t?.schedule?.config.cron, ['0 3 * * *']);
    const wrong = readFolder({ files, overlay: { path: 'o.yaml', text: 'kind: overlay\npatches:\n  trigger/nope: { disabled: true }\n' } }, workflows.definitionSchema);
    assert.deepEqual(wrong.errors.map((e) => `${e.file}|${e.path}|${e.message}`), ['o.yaml|patches.trigger/nope|the folder has no trigger/nope']);
  });

  it('diffs two forms line by line, removals first, with context', () => {
    const before = { kind: 'workflow', name: 'w', steps: [{ name: 'A', template: 'v1' }, { name: 'B', template: 'same' }] };
    const after = { kind: 'workflow', name: 'w', steps: [{ name: 'A', template: 'v2' }, { name: 'B', template: 'same' }] };
    assert.equal(diffOf(before, after), ['  steps:', '    - name: A', '-     template: v1', '+     template: v2', '    - name: B', '      template: same'].join('\n'));
    assert.equal(diffOf(undefined, { kind: 'agent', name: 'a' }), '+ kind: agent\n+ name: a');
  });

  it('splits a Git URL at its ref, and leaves a path or a URL without one alone', () => {
    assert.deepEqual(splitGitSource('file:///srv/defs.git@main'), { url: 'file:///srv/defs.git', ref: 'main' });
    assert.deepEqual(splitGitSource('https://git.example.com/acme/defs.git@v1.2'), { url: 'https://git.example.com/acme/defs.git', ref: 'v1.2' });
    assert.deepEqual(splitGitSource('https://ci@git.example.com/acme/defs.git@feature/x'), { url: 'https://ci@git.example.com/acme/defs.git', ref: 'feature/x' });
    assert.deepEqual(splitGitSource('https://ci@git.example.com/acme/defs.git'), { url: 'https://ci@git.example.com/acme/defs.git' });
    assert.equal(splitGitSource('./defs'), undefined);
  });
});
