/**
 * Definitions as code (issue 53, docs/definitions-as-code.md), the management operation behind
 * `POST /api/v1/apply`, its plan and `GET /api/v1/apply/export`: an organization's workflows,
 * triggers, custom tool servers and agents compared, by name, with a folder of declarative files
 * (format.ts), and brought to it.
 *
 * Each object has a declarative form (the folder's, and the live one read back from the registry);
 * a plan compares the two as canonical JSON and shows a line diff of their YAML. Apply checks the
 * whole folder (schemas, references, schedules against the workflow's inputs, secrets) before it
 * writes anything; a write refused after that (a remote server unreachable, Temporal refusing a
 * schedule) stops the apply and rolls back what was written before it (undo.ts), newest first;
 * deletes (prune) come after every other write and are not undone. A changed workflow is
 * published as a new version carrying the source commit (runs started before keep theirs). What
 * each object looked like after the apply is kept as a hash: a later plan reports an object whose
 * live form differs from it as drift (changed outside the folder).
 */
import { canonicalJson, type WorkflowRecord } from '../../registry';

import { roleHas, type Permission, type Role } from '../../people/roles';
import { done, refused, type Outcome } from '../outcome';
import { DEFINITION_KINDS, type ApplyRequest, type DefinitionKind, type Plan, definitionsJsonSchema } from './format';
import { readFolder, type Folder, type PlacedError } from './parse';
import { readLive, type Live, type Step } from './live';
import { agentDocForm, diffOf, exportForm, hashOf, serverForm, sourceText, triggerDocForm, workflowForm, yamlOf, type Form } from './forms';
import { connectionDocForm, connectionExportForm, memberDocForm, resolvedSettings } from './connection-forms';
import { prune, pruneProblem, writeAll, type WriteContext } from './write';
import type { DefinitionWriteDeps } from './ports';
import { applyFailure, UndoList } from './undo';

export { ApplyRequestSchema, ExportSchema, PlanSchema, type ApplyRequest, type Plan } from './format';
export type { AgentPort, ConnectionPort, MemberPort, ServerPort, ServerWrite } from './ports';

/** What the caller's role must hold to write each kind (POST /api/v1/apply itself needs workflows.write). */
const WRITE_PERMISSION: Record<DefinitionKind, Permission> = {
  workflow: 'workflows.write', trigger: 'triggers.write', toolServer: 'servers.write', agent: 'agents.write', connection: 'connections.write', member: 'members.manage',
};
/** Kinds an organization has more of than a folder may care for: their objects not in the folder are left alone (not listed, never pruned) unless the folder names at least one of the kind. */
const OPT_IN_KINDS: ReadonlySet<DefinitionKind> = new Set(['member', 'connection']);

export type DefinitionAdminDeps = DefinitionWriteDeps;

/** The last apply that wrote a workflow, and whether it changed outside the folder since. */
export interface WorkflowAsCode { source: string | null; commit: string | null; appliedAt: string; drifted: boolean }

export class DefinitionAdmin {
  constructor(private readonly deps: DefinitionAdminDeps) {}

  /** The JSON Schema of a definitions file, for editors (`# yaml-language-server: $schema=…`). */
  jsonSchema(): Record<string, unknown> {
    return definitionsJsonSchema(this.deps.workflows.definitionSchema);
  }

  /**
   * A workflow as code (the console's workflow page): the last apply that wrote it (source,
   * commit, when) and whether it was changed outside the folder since (drift, as a plan tells it);
   * undefined when no apply wrote it.
   */
  async workflowAsCode(orgId: string, workflow: WorkflowRecord): Promise<WorkflowAsCode | undefined> {
    const applied = (await this.deps.registry.appliedDefinitions.list(orgId)).find((r) => r.kind === 'workflow' && r.name === workflow.name);
    if (!applied) return undefined;
    const published = workflow.publishedVersion === null ? undefined : await this.deps.registry.workflows.getVersion(workflow.id, workflow.publishedVersion);
    const drifted = hashOf(workflowForm(published?.definition ?? workflow.draft)) !== applied.hash;
    return { source: applied.source, commit: applied.sourceCommit, appliedAt: applied.appliedAt, drifted };
  }

  /** What apply would do: every change with its diff, the drift since the last apply, or every problem placed by file and path. */
  async plan(orgId: string, request: ApplyRequest): Promise<Plan> {
    const planned = await this.planned(orgId, request);
    return planned.plan;
  }

  /**
   * Applies the folder: all of it checked first (the files, the references, the caller's role for
   * each kind written, every secret reference's value); a refusal changes nothing. The answer is
   * the plan carried out.
   */
  async apply(orgId: string, request: ApplyRequest, role: Role = 'admin'): Promise<Outcome<Plan>> {
    const { plan, steps, folder, live } = await this.planned(orgId, request, true);
    const connectionSettings = new Map<string, Record<string, unknown>>();
    if (plan.valid) {
      // the connections' credentials to write, each reference filled (a missing value is an error placed at it)
      for (const step of steps) {
        const doc = step.kind === 'connection' && (step.action === 'create' || step.action === 'change') ? folder.connection.get(step.name) : undefined;
        if (!doc) continue;
        const present = step.live ? (await this.deps.connections.open(orgId, step.live.id))?.credentials : undefined;
        connectionSettings.set(step.name, resolvedSettings(doc.value, doc.file, request.secrets, present, plan.errors));
      }
      plan.valid = plan.errors.length === 0;
    }
    if (!plan.valid) {
      return refused('INVALID_DEFINITIONS', plan.errors.map((e) => `${e.file}${e.path ? ` ${e.path}` : ''}: ${e.message}`).join('; '),
        plan.errors.map((e) => ({ path: [e.file, ...(e.path ? [e.path] : [])], message: e.message })));
    }
    const needs = [...new Set(steps.filter((s) => s.action === 'create' || s.action === 'change' || s.action === 'delete').map((s) => WRITE_PERMISSION[s.kind]))];
    const lacking = needs.filter((p) => !roleHas(role, p));
    if (lacking.length > 0) return refused('FORBIDDEN', `the role ${role} lacks ${lacking.join(', ')}, which this apply needs (it writes ${steps.filter((s) => lacking.includes(WRITE_PERMISSION[s.kind])).map((s) => `${s.kind}/${s.name}`).join(', ')})`);
    const commit = request.source.commit;
    const context: WriteContext = { orgId, request, steps, folder, live, connectionSettings, written: [], undo: new UndoList() };
    let after: Live;
    try {
      await writeAll(this.deps, context);
      const problem = await pruneProblem(this.deps, context);
      if (problem) throw problem;
      // what each object of the folder looks like now (the base of the next plan's drift), read before the deletes: once they start, only a delete can fail
      after = await readLive(this.deps.registry, orgId, this.deps.connections.open);
      await prune(this.deps, context);
    } catch (error) {
      const deletedBefore = context.written.filter((w) => w.startsWith('deleted ')).map((w) => w.slice('deleted '.length));
      const { facts, message } = applyFailure(error, await context.undo.rollback(), deletedBefore);
      return refused('APPLY_FAILED', message, undefined, { ...facts, ...(sourceText(request) ? { source: sourceText(request) } : {}), ...(commit ? { commit } : {}) });
    }
    const record = [];
    for (const kind of DEFINITION_KINDS) {
      for (const name of folder[kind].keys()) {
        const object = after[kind].get(name);
        if (object) record.push({ kind, name, hash: hashOf(object.form), source: sourceText(request) ?? null, sourceCommit: commit ?? null });
      }
    }
    const deleted = steps.filter((s) => s.action === 'delete').map((s) => ({ kind: s.kind, name: s.name }));
    await this.deps.registry.appliedDefinitions.record(orgId, record, deleted);
    return done({ ...plan, applied: true });
  }

  /** The organization's registry as a folder of files in the declarative format (export, then plan: no changes). */
  async export(orgId: string): Promise<{ files: { path: string; text: string }[] }> {
    const live = await readLive(this.deps.registry, orgId, this.deps.connections.open);
    const files: { path: string; text: string }[] = [];
    // members in one file (a YAML stream): a review reads who holds which role at a glance
    const members = [...live.member.values()].sort((a, b) => String(a.form.email).localeCompare(String(b.form.email)));
    if (members.length > 0) files.push({ path: 'members.yaml', text: members.map((m) => yamlOf(m.form)).join('---\n') });
    const dirs: Record<DefinitionKind, string> = { workflow: 'workflows', trigger: 'triggers', toolServer: 'servers', agent: 'agents', connection: 'connections', member: 'members' };
    for (const kind of DEFINITION_KINDS) {
      if (kind === 'member') continue;
      const used = new Set<string>();
      for (const [name, object] of [...live[kind]].sort(([a], [b]) => a.localeCompare(b))) {
        let slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || kind.toLowerCase();
        for (let n = 2; used.has(slug); n++) slug = `${slug.replace(/-\d+$/, '')}-${n}`;
        used.add(slug);
        files.push({ path: `${dirs[kind]}/${slug}.yaml`, text: yamlOf(kind === 'connection' ? connectionExportForm(object.form) : exportForm(kind, object.form)) });
      }
    }
    return { files };
  }

  // --- the plan ---

  private async planned(orgId: string, request: ApplyRequest, applying = false): Promise<{ plan: Plan; steps: Step[]; folder: Folder; live: Live }> {
    const { folder, errors } = readFolder(request, this.deps.workflows.definitionSchema);
    const live = await readLive(this.deps.registry, orgId, this.deps.connections.open, errors);
    const applied = new Map((await this.deps.registry.appliedDefinitions.list(orgId)).map((r) => [`${r.kind}/${r.name}`, r]));
    const forms = this.folderForms(folder, live, request, errors, applying);
    const steps: Step[] = [];
    for (const kind of DEFINITION_KINDS) {
      const managed = !OPT_IN_KINDS.has(kind) || folder[kind].size > 0;
      const names = new Set([...folder[kind].keys(), ...(managed ? live[kind].keys() : [])]);
      for (const name of [...names].sort()) {
        const want = forms[kind].get(name);
        const have = live[kind].get(name);
        const before = applied.get(`${kind}/${name}`);
        const drift = before !== undefined && (have === undefined || hashOf(have.form) !== before.hash);
        const file = folder[kind].get(name)?.file;
        if (want && !have) {
          steps.push({ kind, name, action: 'create', diff: diffOf(undefined, want), drift, folderForm: want, ...(file ? { file } : {}), ...(drift ? { note: 'deleted outside the folder since the last apply' } : {}) });
        } else if (want && have) {
          const same = canonicalJson(want) === canonicalJson(have.form);
          if (same && !drift) continue;
          const note = drift ? `changed outside the folder since the last apply${before?.sourceCommit ? ` (of ${before.sourceCommit})` : ''}` : undefined;
          steps.push({ kind, name, action: same ? 'unchanged' : 'change', diff: same ? '' : diffOf(have.form, want), drift, folderForm: want, live: have, ...(file ? { file } : {}), ...(note ? { note } : {}) });
        } else if (have) {
          steps.push({
            kind, name, action: request.prune ? 'delete' : 'delete-skipped', diff: diffOf(have.form, undefined), drift, live: have,
            note: request.prune ? (drift ? 'changed outside the folder since the last apply' : undefined) : 'not in the folder; deleted only with prune',
          });
        }
      }
    }
    const count = (action: string) => steps.filter((s) => s.action === action).length;
    const plan: Plan = {
      valid: errors.length === 0, errors,
      changes: steps.map(({ kind, name, action, diff, drift, note }) => ({ kind, name, action, diff, drift, ...(note ? { note } : {}) })),
      created: count('create'), changed: count('change'), deleted: count('delete'), drifted: steps.filter((s) => s.drift).length,
      ...(sourceText(request) ? { source: sourceText(request) } : {}), ...(request.source.commit ? { commit: request.source.commit } : {}),
      applied: false,
    };
    return { plan, steps, folder, live };
  }

  /** The folder's objects as declarative forms (what the live forms are compared with), and every reference checked. */
  private folderForms(folder: Folder, live: Live, request: ApplyRequest, errors: PlacedError[], applying: boolean): Record<DefinitionKind, Map<string, Form>> {
    const forms: Record<DefinitionKind, Map<string, Form>> = { workflow: new Map(), trigger: new Map(), toolServer: new Map(), agent: new Map(), connection: new Map(), member: new Map() };
    for (const [name, { value }] of folder.member) forms.member.set(name, memberDocForm(value));
    for (const [name, { file, value }] of folder.connection) {
      const form = connectionDocForm(value, file, errors, this.deps.connections.applications);
      const have = live.connection.get(name)?.form;
      if (have && have.application !== value.application) errors.push({ file, path: 'application', message: `connection ${name} is for ${String(have.application)}: its application cannot change (give the new one another name)` });
      forms.connection.set(name, form);
    }
    for (const [name, { value }] of folder.workflow) forms.workflow.set(name, workflowForm(value));
    // a server names its connection by name; a PCID of a named connection is shown by the name
    const connectionNames = new Map([...live.connection].map(([name, c]) => [c.id, name]));
    const connectionKnown = new Set([...folder.connection.keys(), ...live.connection.keys()]);
    for (const [name, { file, value }] of folder.toolServer) {
      const have = live.toolServer.get(name)?.form;
      if (value.connection !== undefined && !connectionKnown.has(value.connection) && !/^pc_/.test(value.connection)) {
        errors.push({ file, path: 'connection', message: `no connection ${JSON.stringify(value.connection)} in the folder or the organization` });
      }
      // a description left out is the server's own (generated from the document or URL)
      forms.toolServer.set(name, serverForm(value, typeof have?.description === 'string' ? have.description : undefined, connectionNames));
    }
    const workflowNames = new Set([...folder.workflow.keys(), ...live.workflow.keys()]);
    const triggerNames = new Set([...folder.trigger.keys(), ...(request.prune ? [] : live.trigger.keys())]);
    for (const [name, { file, value }] of folder.trigger) {
      if (!workflowNames.has(value.workflow)) errors.push({ file, path: 'workflow', message: `no workflow ${JSON.stringify(value.workflow)} in the folder or the organization` });
      const form = triggerDocForm(value, file, errors);
      // a value is needed by a new verified trigger, or one made verified; a verified one keeps its secrets
      if (value.verify && applying && live.trigger.get(name)?.form.verify === undefined) {
        for (const ref of value.verify.secretRefs) {
          if (request.secrets[ref] === undefined) errors.push({ file, path: 'verify.secretRefs', message: `no value for the secret reference ${ref}: set the environment variable (flowgate apply) or give it in secrets` });
        }
      }
      forms.trigger.set(name, form);
    }
    for (const [name, { file, value }] of folder.agent) {
      value.workflows.forEach((w, i) => {
        if (!triggerNames.has(w.trigger)) errors.push({ file, path: `workflows.${i}.trigger`, message: `no trigger ${JSON.stringify(w.trigger)} in the folder or the organization` });
      });
      forms.agent.set(name, agentDocForm(value));
    }
    return forms;
  }

}
