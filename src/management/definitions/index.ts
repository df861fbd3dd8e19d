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
 * schedule) stops the apply and says which objects were written before it. A changed workflow is
 * published as a new version carrying the source commit (runs started before keep theirs). What
 * each object looked like after the apply is kept as a hash: a later plan reports an object whose
 * live form differs from it as drift (changed outside the folder).
 */
import type { CreateAgentInput, UpdateAgentInput } from '../../registry/agent-records';
import { canonicalJson, type Registry } from '../../registry';
import { done, refused, type Outcome } from '../outcome';
import type { TriggerAdmin } from '../triggers';
import type { WorkflowAdmin } from '../workflows';
import { DEFINITION_KINDS, type ApplyRequest, type DefinitionKind, type Plan, type PlannedChange, definitionsJsonSchema } from './format';
import { readFolder, type Folder, type PlacedError } from './parse';
import { readLive, type Live, type LiveObject } from './live';
import { agentDocForm, agentInput, diffOf, exportForm, hashOf, onlyDiffer, serverForm, sourceText, triggerDocForm, verifyInput, workflowForm, yamlOf, type Form } from './forms';

export { ApplyRequestSchema, ExportSchema, PlanSchema, type ApplyRequest, type Plan } from './format';

/** The custom servers' operations apply needs (src/tools/custom CustomServers). */
export interface ServerPort {
  register(orgId: string, input: ServerWrite): Promise<{ id: string }>;
  replace(orgId: string, id: string, input: ServerWrite): Promise<{ id: string } | undefined>;
  remove(orgId: string, id: string): Promise<boolean>;
}
export type ServerWrite =
  | { kind: 'openapi'; name?: string; description?: string; connection: string; document: unknown }
  | { kind: 'remote'; name?: string; description?: string; connection?: string; url: string };

/** The agent service's operations apply needs (src/agents AgentService). */
export interface AgentPort {
  create(orgId: string, input: CreateAgentInput): Promise<{ id: string }>;
  update(orgId: string, id: string, patch: UpdateAgentInput): Promise<unknown>;
  remove(orgId: string, id: string): Promise<void>;
}

export interface DefinitionAdminDeps {
  registry: Registry;
  workflows: WorkflowAdmin;
  triggers: TriggerAdmin;
  servers: ServerPort;
  agents: AgentPort;
}


/** One object of the plan with what apply does for it. */
interface Step extends PlannedChange { folderForm?: Form; live?: LiveObject; file?: string }

export class DefinitionAdmin {
  constructor(private readonly deps: DefinitionAdminDeps) {}

  /** The JSON Schema of a definitions file, for editors (`# yaml-language-server: $schema=…`). */
  jsonSchema(): Record<string, unknown> {
    return definitionsJsonSchema(this.deps.workflows.definitionSchema);
  }

  /** What apply would do: every change with its diff, the drift since the last apply, or every problem placed by file and path. */
  async plan(orgId: string, request: ApplyRequest): Promise<Plan> {
    const planned = await this.planned(orgId, request);
    return planned.plan;
  }

  /** Applies the folder: all of it checked first; a refusal changes nothing. The answer is the plan carried out. */
  async apply(orgId: string, request: ApplyRequest): Promise<Outcome<Plan>> {
    const { plan, steps, folder, live } = await this.planned(orgId, request, true);
    if (!plan.valid) {
      return refused('INVALID_DEFINITIONS', plan.errors.map((e) => `${e.file}${e.path ? ` ${e.path}` : ''}: ${e.message}`).join('; '),
        plan.errors.map((e) => ({ path: [e.file, ...(e.path ? [e.path] : [])], message: e.message })));
    }
    const written: string[] = [];
    const commit = request.source.commit;
    try {
      await this.write(orgId, request, steps, folder, live, commit, written);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return refused('APPLY_FAILED', `apply stopped: ${message}; written before it: ${written.join(', ') || 'nothing'}`);
    }
    // what each object of the folder looks like now: the base of the next plan's drift
    const after = await readLive(this.deps.registry, orgId);
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
    const live = await readLive(this.deps.registry, orgId);
    const files: { path: string; text: string }[] = [];
    const dirs: Record<DefinitionKind, string> = { workflow: 'workflows', trigger: 'triggers', toolServer: 'servers', agent: 'agents' };
    for (const kind of DEFINITION_KINDS) {
      const used = new Set<string>();
      for (const [name, object] of [...live[kind]].sort(([a], [b]) => a.localeCompare(b))) {
        let slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || kind.toLowerCase();
        for (let n = 2; used.has(slug); n++) slug = `${slug.replace(/-\d+$/, '')}-${n}`;
        used.add(slug);
        files.push({ path: `${dirs[kind]}/${slug}.yaml`, text: yamlOf(exportForm(kind, object.form)) });
      }
    }
    return { files };
  }

  // --- the plan ---

  private async planned(orgId: string, request: ApplyRequest, applying = false): Promise<{ plan: Plan; steps: Step[]; folder: Folder; live: Live }> {
    const { folder, errors } = readFolder(request, this.deps.workflows.definitionSchema);
    const live = await readLive(this.deps.registry, orgId, errors);
    const applied = new Map((await this.deps.registry.appliedDefinitions.list(orgId)).map((r) => [`${r.kind}/${r.name}`, r]));
    const forms = this.folderForms(folder, live, request, errors, applying);
    const steps: Step[] = [];
    for (const kind of DEFINITION_KINDS) {
      const names = new Set([...folder[kind].keys(), ...live[kind].keys()]);
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
    const forms: Record<DefinitionKind, Map<string, Form>> = { workflow: new Map(), trigger: new Map(), toolServer: new Map(), agent: new Map() };
    for (const [name, { value }] of folder.workflow) forms.workflow.set(name, workflowForm(value));
    for (const [name, { value }] of folder.toolServer) {
      const have = live.toolServer.get(name)?.form;
      // a description left out is the server's own (generated from the document or URL)
      forms.toolServer.set(name, serverForm(value, typeof have?.description === 'string' ? have.description : undefined));
    }
    const workflowNames = new Set([...folder.workflow.keys(), ...live.workflow.keys()]);
    const triggerNames = new Set([...folder.trigger.keys(), ...(request.prune ? [] : live.trigger.keys())]);
    for (const [name, { file, value }] of folder.trigger) {
      if (!workflowNames.has(value.workflow)) errors.push({ file, path: 'workflow', message: `no workflow ${JSON.stringify(value.workflow)} in the folder or the organization` });
      const form = triggerDocForm(value, file, errors);
      if (value.verify && applying && !live.trigger.has(name)) {
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

  /** The organization's objects as declarative forms. Two of a kind with one name cannot be told apart: an error. */
  // --- the writes ---

  private async write(orgId: string, request: ApplyRequest, steps: Step[], folder: Folder, live: Live, commit: string | undefined, written: string[]): Promise<void> {
    const of = (kind: DefinitionKind) => steps.filter((s) => s.kind === kind && (s.action === 'create' || s.action === 'change'));
    const ids: Record<DefinitionKind, Map<string, string>> = { workflow: new Map(), trigger: new Map(), toolServer: new Map(), agent: new Map() };
    for (const kind of DEFINITION_KINDS) for (const [name, object] of live[kind]) ids[kind].set(name, object.id);
    const { workflows, triggers, servers, agents } = this.deps;
    const settled = <T>(outcome: Outcome<T>, what: string): T => {
      if (!outcome.ok) throw new Error(`${what}: ${outcome.message}`);
      return outcome.value;
    };

    for (const step of of('workflow')) {
      const definition = folder.workflow.get(step.name)?.value;
      if (!definition) continue;
      let id = ids.workflow.get(step.name);
      if (id) settled(await workflows.updateDraft(orgId, id, definition), `workflow ${step.name}`);
      else id = settled(await workflows.create(orgId, definition), `workflow ${step.name}`).id;
      ids.workflow.set(step.name, id);
      settled(await workflows.publish(orgId, id, commit), `workflow ${step.name}`);
      written.push(`workflow/${step.name}`);
    }
    for (const step of of('toolServer')) {
      const doc = folder.toolServer.get(step.name)?.value;
      if (!doc) continue;
      const input: ServerWrite = doc.document
        ? { kind: 'openapi', name: doc.name, ...(doc.description ? { description: doc.description } : {}), connection: doc.connection ?? '', document: doc.document }
        : { kind: 'remote', name: doc.name, ...(doc.description ? { description: doc.description } : {}), ...(doc.connection ? { connection: doc.connection } : {}), url: doc.url ?? '' };
      const id = ids.toolServer.get(step.name);
      if (id) await servers.replace(orgId, id, input);
      else ids.toolServer.set(step.name, (await servers.register(orgId, input)).id);
      written.push(`toolServer/${step.name}`);
    }
    for (const step of of('trigger')) {
      const doc = folder.trigger.get(step.name)?.value;
      if (!doc) continue;
      const workflowId = ids.workflow.get(doc.workflow);
      if (!workflowId) throw new Error(`trigger ${step.name}: no workflow ${doc.workflow}`);
      const id = ids.trigger.get(step.name);
      const have = step.live?.form;
      const want = step.folderForm;
      if (id && have && want && onlyDiffer(have, want, ['schedule', 'disabled'])) {
        if (canonicalJson(have.schedule) !== canonicalJson(want.schedule)) {
          if (want.schedule === undefined) settled(await triggers.deleteSchedule(orgId, id), `trigger ${step.name}`);
          else settled(await triggers.putSchedule(orgId, id, want.schedule), `trigger ${step.name}`);
        }
        if (Boolean(have.disabled) !== Boolean(want.disabled)) settled(await triggers.setDisabled(orgId, id, Boolean(want.disabled)), `trigger ${step.name}`);
      } else {
        // any other change makes a new trigger (a new ID): the registry has no update of a trigger's other fields
        if (id) settled(await triggers.delete(orgId, id), `trigger ${step.name}`);
        const { verify, schedule: _schedule, disabled, workflow: _w, kind: _k, ...rest } = doc;
        const created = settled(await triggers.create(orgId, {
          ...rest, workflowId,
          ...(want?.schedule === undefined ? {} : { schedule: want.schedule }),
          ...(verify ? { verify: verifyInput(verify, request.secrets) } : {}),
        }), `trigger ${step.name}`);
        ids.trigger.set(step.name, created.id);
        if (disabled) settled(await triggers.setDisabled(orgId, created.id, true), `trigger ${step.name}`);
      }
      written.push(`trigger/${step.name}`);
    }
    // agents: also those whose triggers were made anew (their live form names a trigger ID no longer there)
    const agentSteps = of('agent');
    for (const step of agentSteps) {
      const doc = folder.agent.get(step.name)?.value;
      if (!doc) continue;
      const input = agentInput(doc, ids);
      const id = ids.agent.get(step.name);
      if (id) await agents.update(orgId, id, input);
      else ids.agent.set(step.name, (await agents.create(orgId, input)).id);
      written.push(`agent/${step.name}`);
    }
    for (const [name, { value }] of folder.agent) {
      const id = ids.agent.get(name);
      if (!id || agentSteps.some((s) => s.name === name)) continue;
      if (value.workflows.some((w) => live.trigger.get(w.trigger)?.id !== ids.trigger.get(w.trigger))) {
        await agents.update(orgId, id, agentInput(value, ids));
        written.push(`agent/${name}`);
      }
    }
    // prune: dependents first
    const deletes = steps.filter((s) => s.action === 'delete');
    for (const kind of ['agent', 'trigger', 'toolServer', 'workflow'] as const) {
      for (const step of deletes.filter((s) => s.kind === kind)) {
        const id = step.live?.id;
        if (!id) continue;
        if (kind === 'agent') await agents.remove(orgId, id);
        else if (kind === 'trigger') {
          const gone = await triggers.delete(orgId, id);
          if (!gone.ok && gone.code !== 'UNKNOWN_TRIGGER') throw new Error(`trigger ${step.name}: ${gone.message}`);
        } else if (kind === 'toolServer') await servers.remove(orgId, id);
        else {
          const gone = await workflows.delete(orgId, id);
          if (!gone.ok) throw new Error(`workflow ${step.name}: ${gone.message}`);
        }
        written.push(`deleted ${kind}/${step.name}`);
      }
    }
  }
}
