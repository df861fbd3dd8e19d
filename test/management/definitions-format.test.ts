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
import { readFolder, type PlacedError } from '../../src/management/definitions/parse';
import { connectionDocForm, connectionExportForm, connectionRecordForm, resolvedSettings } from '../../src/management/definitions/connection-forms';
import { APPLICATIONS } from '../../src/tools';

const ROOT = path.resolve(__dirname, '..', '..', '..');

describe('definitions format', () => {
  const workflows = new WorkflowAdmin({ registry: {} as never, schedules: {} as never, log: { warn: () => undefined } });
  const admin = new DefinitionAdmin({ registry: {} as never, workflows, triggers: {} as never, servers: {} as never, agents: {} as never, members: {} as never, connections: {} as never });

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
        { path: 'e.yaml', text: 'kind: secret\nname: x\n' },
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

  it('reads members by e-mail (any case) and connections whose secrets are references only', () => {
    const { folder, errors } = readFolder({
      files: [
        { path: 'members.yaml', text: 'kind: member\nemail: Eda@Example.com\nrole: editor\n---\nkind: member\nemail: eda@example.com\nrole: viewer\n---\nkind: member\nemail: bob@example.com\nrole: owner\n' },
        { path: 'mail.yaml', text: 'kind: connection\nname: mail\napplication: mail\nsettings:\n  from: a@example.com\n  smtp: { host: smtp.example.com, user: a, password: { secretRef: { env: MAIL_PASSWORD } } }\n' },
      ],
    }, workflows.definitionSchema);
    assert.deepEqual(errors.map((e) => `${e.file}#${e.path}`), ['members.yaml#2#email', 'members.yaml#3#role'], JSON.stringify(errors));
    assert.deepEqual([...folder.member.keys()], ['eda@example.com']);
    assert.equal(folder.connection.get('mail')?.value.application, 'mail');
  });

  it('checks a connection\'s settings with stand-ins for its secrets, refuses a secret in clear, and never shows one', () => {
    const errors: PlacedError[] = [];
    const doc = { kind: 'connection' as const, name: 'api', application: 'custom', settings: {
      baseUrl: 'https://api.example.com', auth: { kind: 'api_key', name: 'X-Key', value: { secretRef: { env: 'API_KEY' } } },
    } };
    const form = connectionDocForm(doc, 'c.yaml', errors, APPLICATIONS);
    assert.equal(errors.length, 0, JSON.stringify(errors));
    assert.deepEqual(form.settings, { baseUrl: 'https://api.example.com', auth: { kind: 'api_key', name: 'X-Key', value: '(secret)' } });
    // the live connection holding a secret shows the same form: no change
    const live = connectionRecordForm('api', 'custom', { baseUrl: 'https://api.example.com', auth: { kind: 'api_key', name: 'X-Key', value: 'k-123456' } });
    assert.deepEqual(live, form);
    assert.doesNotMatch(JSON.stringify(connectionExportForm(live)), /k-123456/);
    assert.deepEqual(connectionExportForm(live).settings, { baseUrl: 'https://api.example.com', auth: { kind: 'api_key', name: 'X-Key', value: { secretRef: { fromApi: true } } } });

    const clear = { ...doc, settings: { baseUrl: 'ftp://x', auth: { kind: 'api_key', name: { secretRef: { env: 'N' } }, value: 'in-clear' } } };
    const bad: PlacedError[] = [];
    connectionDocForm(clear, 'c.yaml', bad, APPLICATIONS);
    const lines = bad.map((e) => `${e.path}: ${e.message}`);
    assert.ok(lines.includes('settings.auth.value: a secret is given only as a reference: {secretRef: {env: NAME}} or {secretRef: {fromApi: true}}'), lines.join('\n'));
    assert.ok(lines.some((l) => l.startsWith('settings.auth.name: name is not a secret field')), lines.join('\n'));
    assert.ok(lines.some((l) => l.startsWith('settings.baseUrl: ')), lines.join('\n'));
    assert.doesNotMatch(JSON.stringify(bad), /in-clear/, 'an error never repeats a value');
    const unknown: PlacedError[] = [];
    connectionDocForm({ ...doc, application: 'fax' }, 'c.yaml', unknown, APPLICATIONS);
    assert.match(unknown[0]?.message ?? '', /^no application fax; known: /);
  });

  it('fills a connection\'s references from the request (env) or the connection (fromApi), and places a missing one', () => {
    const doc = { kind: 'connection' as const, name: 'api', application: 'custom', settings: {
      baseUrl: 'https://api.example.com', auth: { kind: 'oauth2_client_credentials', tokenUrl: 'https://id.example.com/token', clientId: 'c', clientSecret: { secretRef: { fromApi: true } } },
    } };
    const errors: PlacedError[] = [];
    const filled = resolvedSettings(doc, 'c.yaml', {}, { auth: { clientSecret: 'held-secret' } }, errors);
    assert.equal(errors.length, 0, JSON.stringify(errors));
    assert.deepEqual(filled.auth, { kind: 'oauth2_client_credentials', tokenUrl: 'https://id.example.com/token', clientId: 'c', clientSecret: 'held-secret' });
    resolvedSettings(doc, 'c.yaml', {}, undefined, errors);
    assert.match(errors[0]?.message ?? '', /does not exist yet: a fromApi secret needs it created through the API or the console first/);
    const env = { ...doc, settings: { ...doc.settings, auth: { ...doc.settings.auth, clientSecret: { secretRef: { env: 'CS' } } } } };
    const missing: PlacedError[] = [];
    resolvedSettings(env, 'c.yaml', {}, undefined, missing);
    assert.deepEqual(missing.map((e) => e.path), ['settings.auth.clientSecret']);
    assert.equal(resolvedSettings(env, 'c.yaml', { CS: 's3cret' }, undefined, []).auth && 's3cret', 's3cret');
  });
});
