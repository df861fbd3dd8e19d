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
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { z } from 'zod';
import type { WorkflowDefinition } from '../../common/definition';
import { isRecord } from '../../common/narrow';
import { DEFAULT_LIMITS } from '../../registry/agent-limits';
import type { AgentRecord, AgentServer, CreateAgentInput, UpdateAgentInput } from '../../registry/agent-records';
import { canonicalJson, type Registry, type ToolServerRecord, type TriggerRecord, type TriggerScheduleRecord } from '../../registry';
import { VerifySchema, verifyOptions } from '../../triggers/webhooks/config';
import { done, refused, type Outcome } from '../outcome';
import type { TriggerAdmin } from '../triggers';
import type { WorkflowAdmin } from '../workflows';
import {
  AgentDocSchema, DEFINITION_KINDS, OverlayDocSchema, ToolServerDocSchema, TriggerDocSchema,
  type AgentDoc, type ApplyRequest, type DefinitionKind, type Plan, type PlannedChange, type ToolServerDoc, type TriggerDoc,
} from './format';
import { readFolder, type Folder, type PlacedError } from './parse';

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

type Form = Record<string, unknown>;

/** One live object: its registry ID and declarative form. */
interface LiveObject { id: string; form: Form }

/** The organization as declarative forms, by kind and name. */
type Live = Record<DefinitionKind, Map<string, LiveObject>>;

/** One object of the plan with what apply does for it. */
interface Step extends PlannedChange { folderForm?: Form; live?: LiveObject; file?: string }

export class DefinitionAdmin {
  constructor(private readonly deps: DefinitionAdminDeps) {}

  /** The JSON Schema of a definitions file, for editors (`# yaml-language-server: $schema=…`). */
  jsonSchema(): Record<string, unknown> {
    const opts = { io: 'input', unrepresentable: 'any' } as const;
    const $defs: Record<string, unknown> = {};
    // each kind's $defs move to the root, prefixed with the kind, so that their $refs resolve there
    const hoisted = (kind: string, schema: Record<string, unknown>): Record<string, unknown> => {
      const moved: unknown = JSON.parse(JSON.stringify(schema).replaceAll('"#/$defs/', `"#/$defs/${kind}.`));
      if (!isRecord(moved)) return {};
      const { $schema: _s, $defs: defs, ...body } = moved;
      if (isRecord(defs)) for (const [name, def] of Object.entries(defs)) $defs[`${kind}.${name}`] = def;
      return { title: kind, ...body };
    };
    const workflow = hoisted('workflow', z.toJSONSchema(this.deps.workflows.definitionSchema, opts));
    const properties = isRecord(workflow.properties) ? workflow.properties : {};
    const kinds = [
      { ...workflow, properties: { kind: { const: 'workflow' }, ...properties }, required: ['kind', ...(Array.isArray(workflow.required) ? workflow.required : [])] },
      hoisted('trigger', z.toJSONSchema(TriggerDocSchema, opts)),
      hoisted('toolServer', z.toJSONSchema(ToolServerDocSchema, opts)),
      hoisted('agent', z.toJSONSchema(AgentDocSchema, opts)),
      hoisted('overlay', z.toJSONSchema(OverlayDocSchema, opts)),
    ];
    return {
      $schema: 'https://json-schema.org/draft/2020-12/schema', title: 'flowgate definitions file',
      description: 'one object of a definitions folder (docs/definitions-as-code.md), chosen by its kind', oneOf: kinds, $defs,
    };
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
    const after = await this.live(orgId);
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
    const live = await this.live(orgId);
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
    const live = await this.live(orgId, errors);
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
  private async live(orgId: string, errors?: PlacedError[]): Promise<Live> {
    const { registry } = this.deps;
    const live: Live = { workflow: new Map(), trigger: new Map(), toolServer: new Map(), agent: new Map() };
    const twice = (kind: DefinitionKind, name: string) => errors?.push({ file: '(organization)', path: `${kind}/${name}`, message: `the organization has two ${kind}s named ${JSON.stringify(name)}: rename one first` });
    const workflowNames = new Map<string, string>();
    for (const listed of await registry.workflows.list(orgId)) {
      const record = await registry.workflows.get(orgId, listed.id);
      if (!record) continue;
      const latest = record.publishedVersion ? await registry.workflows.getVersion(record.id, record.publishedVersion) : undefined;
      if (live.workflow.has(record.name)) twice('workflow', record.name);
      live.workflow.set(record.name, { id: record.id, form: workflowForm(latest?.definition ?? record.draft) });
      workflowNames.set(record.id, record.name);
    }
    const schedules = new Map((await registry.schedules.list(orgId)).map((s) => [s.triggerId, s]));
    const triggerNames = new Map<string, string>();
    for (const trigger of await registry.triggers.list(orgId)) {
      const name = trigger.name ?? trigger.id;
      if (live.trigger.has(name)) twice('trigger', name);
      live.trigger.set(name, { id: trigger.id, form: triggerRecordForm(trigger, workflowNames.get(trigger.workflowId) ?? trigger.workflowId, schedules.get(trigger.id)) });
      triggerNames.set(trigger.id, name);
    }
    const serverNames = new Map<string, string>();
    for (const server of await registry.toolServers.list(orgId)) {
      if (live.toolServer.has(server.name)) twice('toolServer', server.name);
      live.toolServer.set(server.name, { id: server.id, form: serverRecordForm(server) });
      serverNames.set(server.id, server.name);
    }
    for (const agent of await registry.agents.list(orgId)) {
      if (live.agent.has(agent.name)) twice('agent', agent.name);
      live.agent.set(agent.name, { id: agent.id, form: agentRecordForm(agent, serverNames, triggerNames) });
    }
    return live;
  }

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

// --- declarative forms: the folder's and the registry's, made alike ---

function stripUndefined(value: object): Form {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null));
}

function workflowForm(definition: WorkflowDefinition): Form {
  return { kind: 'workflow', ...JSON.parse(JSON.stringify(definition)) };
}

function scheduleForm(config: Record<string, unknown>, paused: boolean, note: string | null): Form {
  return stripUndefined({ ...config, paused, ...(note ? { note } : {}) });
}

function triggerDocForm(doc: TriggerDoc, file: string, errors: PlacedError[]): Form {
  let verify: Form | undefined;
  if (doc.verify) {
    const { secretRefs, ...options } = doc.verify;
    // the preset's options checked as POST /api/v1/triggers checks them, with a stand-in for each secret
    const parsed = VerifySchema.safeParse({ ...options, secrets: secretRefs.map(() => 'whsec_c3RhbmRpbmdpbg==') });
    if (parsed.success) verify = { ...verifyOptions(parsed.data) };
    else for (const issue of parsed.error.issues) errors.push({ file, path: ['verify', ...issue.path.map(String)].join('.'), message: issue.message });
  }
  return stripUndefined({
    kind: 'trigger', name: doc.name, workflow: doc.workflow,
    designatedOutput: doc.designatedOutput, tool: doc.tool, callbackUrl: doc.callbackUrl, priority: doc.priority, concurrency: doc.concurrency,
    schedule: doc.schedule ? scheduleForm(doc.schedule.config, doc.schedule.paused, doc.schedule.note) : undefined,
    disabled: doc.disabled ? true : undefined,
    verify, debounce: doc.debounce, batch: doc.batch,
  });
}

function triggerRecordForm(trigger: TriggerRecord, workflowName: string, schedule: TriggerScheduleRecord | undefined): Form {
  return JSON.parse(JSON.stringify(stripUndefined({
    kind: 'trigger', name: trigger.name ?? trigger.id, workflow: workflowName,
    designatedOutput: trigger.designatedOutput, tool: trigger.tool, callbackUrl: trigger.callbackUrl, priority: trigger.priority, concurrency: trigger.concurrency,
    schedule: schedule ? scheduleForm(schedule.config, schedule.paused, schedule.note) : undefined,
    disabled: trigger.disabledAt ? true : undefined,
    verify: trigger.verify ?? undefined,
    debounce: trigger.shaping && 'debounce' in trigger.shaping ? trigger.shaping.debounce : undefined,
    batch: trigger.shaping && 'batch' in trigger.shaping ? trigger.shaping.batch : undefined,
  })));
}

function serverForm(doc: ToolServerDoc, liveDescription: string | undefined): Form {
  return stripUndefined({
    kind: 'toolServer', name: doc.name, description: doc.description ?? liveDescription, connection: doc.connection, url: doc.url, document: doc.document,
  });
}

function serverRecordForm(server: ToolServerRecord): Form {
  let document: unknown;
  if (server.kind === 'openapi') {
    try {
      document = JSON.parse(server.source);
    } catch {
      document = { source: server.source };
    }
  }
  return stripUndefined({
    kind: 'toolServer', name: server.name, description: server.description, connection: server.connectionId,
    url: server.kind === 'remote' ? server.source : undefined, document,
  });
}

function agentDocForm(doc: AgentDoc): Form {
  return JSON.parse(JSON.stringify(stripUndefined({
    kind: 'agent', name: doc.name, description: doc.description, instructions: doc.instructions, outputSchema: doc.outputSchema ?? undefined,
    servers: doc.servers, workflows: doc.workflows.map((w) => stripUndefined(w)), model: doc.model ?? {}, limits: { ...DEFAULT_LIMITS, ...doc.limits },
    priority: doc.priority ?? undefined,
  })));
}

function agentRecordForm(agent: AgentRecord, serverNames: Map<string, string>, triggerNames: Map<string, string>): Form {
  const servers: AgentServer[] = agent.servers.map((s) => {
    const name = serverNames.get(s.name.replace(/^\/+/, ''));
    return name ? { ...s, name } : s;
  });
  return JSON.parse(JSON.stringify(stripUndefined({
    kind: 'agent', name: agent.name, description: agent.description, instructions: agent.instructions, outputSchema: agent.outputSchema ?? undefined,
    servers, workflows: agent.workflows.map((w) => stripUndefined({ trigger: triggerNames.get(w.triggerId) ?? w.triggerId, toolName: w.toolName, description: w.description })),
    model: agent.model, limits: agent.limits, priority: agent.priority ?? undefined,
  })));
}

/** What export writes: the form, with the secret references a verified trigger needs named after it. */
function exportForm(kind: DefinitionKind, form: Form): Form {
  if (kind !== 'trigger' || !isRecord(form.verify)) return form;
  const ref = `${String(form.name).toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '') || 'TRIGGER'}_SECRET`;
  return { ...form, verify: { ...form.verify, secretRefs: [/^[A-Z_]/.test(ref) ? ref : `T_${ref}`] } };
}

function verifyInput(verify: NonNullable<TriggerDoc['verify']>, secrets: Record<string, string>): z.infer<typeof VerifySchema> {
  const { secretRefs, ...options } = verify;
  return VerifySchema.parse({ ...options, secrets: secretRefs.map((ref) => secrets[ref] ?? '') });
}

function agentInput(doc: AgentDoc, ids: Record<DefinitionKind, Map<string, string>>): CreateAgentInput {
  return {
    name: doc.name, description: doc.description, instructions: doc.instructions,
    ...(doc.outputSchema === undefined ? {} : { outputSchema: doc.outputSchema }),
    servers: doc.servers.map((s) => {
      const id = ids.toolServer.get(s.name);
      return id ? { ...s, name: id } : s;
    }),
    workflows: doc.workflows.map((w) => ({ triggerId: ids.trigger.get(w.trigger) ?? w.trigger, ...(w.toolName ? { toolName: w.toolName } : {}), ...(w.description ? { description: w.description } : {}) })),
    ...(doc.model ? { model: doc.model } : {}), ...(doc.limits ? { limits: doc.limits } : {}), ...(doc.priority === undefined ? {} : { priority: doc.priority }),
  };
}

function onlyDiffer(a: Form, b: Form, fields: readonly string[]): boolean {
  const without = (f: Form) => Object.fromEntries(Object.entries(f).filter(([k]) => !fields.includes(k)));
  return canonicalJson(without(a)) === canonicalJson(without(b));
}

function hashOf(form: Form): string {
  return createHash('sha256').update(canonicalJson(form)).digest('hex');
}

function sourceText(request: ApplyRequest): string | undefined {
  const { url, ref } = request.source;
  return url ? `${url}${ref ? `@${ref}` : ''}` : undefined;
}

/** YAML with keys sorted (kind and name first), so that a diff shows only what differs. */
function yamlOf(form: Form | undefined): string {
  if (!form) return '';
  const { kind, name, ...rest } = form;
  const sorted = JSON.parse(canonicalJson(rest));
  return stringify({ kind, name, ...(isRecord(sorted) ? sorted : {}) }, { lineWidth: 0 });
}

/** A line diff of the two forms' YAML (`-` live, `+` folder, two lines of context). */
export function diffOf(before: Form | undefined, after: Form | undefined): string {
  const a = yamlOf(before).split('\n').filter((l, i, all) => l !== '' || i < all.length - 1);
  const b = yamlOf(after).split('\n').filter((l, i, all) => l !== '' || i < all.length - 1);
  if (!before) return b.map((l) => `+ ${l}`).join('\n');
  if (!after) return a.map((l) => `- ${l}`).join('\n');
  // longest common subsequence of lines (objects are small)
  const n = a.length;
  const m = b.length;
  const lcs = new Array<number>((n + 1) * (m + 1)).fill(0);
  const at = (i: number, j: number): number => lcs[i * (m + 1) + j] ?? 0;
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i * (m + 1) + j] = a[i] === b[j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
  const lines: { mark: ' ' | '-' | '+'; text: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      lines.push({ mark: ' ', text: a[i] ?? '' });
      i++;
      j++;
    } else if (i < n && (j >= m || at(i + 1, j) >= at(i, j + 1))) lines.push({ mark: '-', text: a[i++] ?? '' });
    else lines.push({ mark: '+', text: b[j++] ?? '' });
  }
  const near = lines.map((l, k) => l.mark !== ' ' || lines.slice(Math.max(0, k - 2), k + 3).some((x) => x.mark !== ' '));
  const out: string[] = [];
  lines.forEach((l, k) => {
    if (near[k]) out.push(`${l.mark} ${l.text}`);
    else if (near[k - 1]) out.push('  …');
  });
  return out.join('\n');
}
