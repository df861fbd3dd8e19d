/**
 * The writes of an apply (definitions as code, index.ts), in the order of DEFINITION_KINDS so that
 * what an object names exists before it: members, connections, workflows (each change published
 * as a new version carrying the commit), tool servers, triggers, agents; then, with prune, the
 * deletes, dependents first. Each write goes through the management operation or service the API
 * uses, so that the same checks hold; a refusal throws, naming the object.
 */
import type { z } from 'zod';
import type { CreateAgentInput, UpdateAgentInput } from '../../registry/agent-records';
import type { Registry } from '../../registry';
import type { Role } from '../../people/roles';
import type { Outcome } from '../outcome';
import type { TriggerAdmin } from '../triggers';
import type { WorkflowAdmin } from '../workflows';
import { DEFINITION_KINDS, type ApplyRequest, type DefinitionKind } from './format';
import type { Folder } from './parse';
import type { ConnectionOpener, Live, Step } from './live';
import { agentInput } from './forms';
import { writeTrigger } from './trigger-write';

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

/** The connections' operations apply needs (src/tools ConnectionStore, composed in src/app/definition-ports.ts). */
export interface ConnectionPort {
  /** each application with the schema of its credentials */
  applications: Readonly<Record<string, z.ZodType>>;
  open: ConnectionOpener;
  create(orgId: string, application: string, name: string, credentials: Record<string, unknown>): Promise<{ id: string }>;
  /** new credentials (and name) for the connection, sealed again under its PCID */
  replace(orgId: string, id: string, name: string, credentials: Record<string, unknown>): Promise<boolean>;
  remove(orgId: string, id: string): Promise<boolean>;
}

/** The members' operations apply needs (MemberAdmin). */
export interface MemberPort {
  add(orgId: string, input: { email: string; role: Role }): Promise<Outcome<unknown>>;
  update(orgId: string, id: string, change: { role: Role }): Promise<Outcome<unknown>>;
  remove(orgId: string, id: string): Promise<Outcome<unknown>>;
}

export interface DefinitionWriteDeps {
  registry: Registry;
  workflows: WorkflowAdmin;
  triggers: TriggerAdmin;
  servers: ServerPort;
  agents: AgentPort;
  connections: ConnectionPort;
  members: MemberPort;
}

export interface WriteContext {
  orgId: string;
  request: ApplyRequest;
  steps: Step[];
  folder: Folder;
  live: Live;
  /** the credentials to write of each connection created or changed, references filled */
  connectionSettings: Map<string, Record<string, unknown>>;
  /** what was written, in order (`kind/name`, `deleted kind/name`) */
  written: string[];
}

export const settled = <T>(outcome: Outcome<T>, what: string): T => {
  if (!outcome.ok) throw new Error(`${what}: ${outcome.message}`);
  return outcome.value;
};

export async function writeAll(deps: DefinitionWriteDeps, context: WriteContext): Promise<void> {
  const { orgId, request, steps, folder, live, written } = context;
  const commit = request.source.commit;
  const of = (kind: DefinitionKind) => steps.filter((s) => s.kind === kind && (s.action === 'create' || s.action === 'change'));
  const ids: Record<DefinitionKind, Map<string, string>> = { workflow: new Map(), trigger: new Map(), toolServer: new Map(), agent: new Map(), connection: new Map(), member: new Map() };
  for (const kind of DEFINITION_KINDS) for (const [name, object] of live[kind]) ids[kind].set(name, object.id);
  const { workflows, servers, agents, connections, members } = deps;

  for (const step of of('member')) {
    const doc = folder.member.get(step.name)?.value;
    if (!doc) continue;
    const id = ids.member.get(step.name);
    if (id) settled(await members.update(orgId, id, { role: doc.role }), `member ${step.name}`);
    else settled(await members.add(orgId, { email: doc.email, role: doc.role }), `member ${step.name}`);
    written.push(`member/${step.name}`);
  }
  for (const step of of('connection')) {
    const doc = folder.connection.get(step.name)?.value;
    const credentials = context.connectionSettings.get(step.name);
    if (!doc || !credentials) continue;
    const id = ids.connection.get(step.name);
    if (id) {
      if (!(await connections.replace(orgId, id, doc.name, credentials))) throw new Error(`connection ${step.name}: gone while applying`);
    } else ids.connection.set(step.name, (await connections.create(orgId, doc.application, doc.name, credentials)).id);
    written.push(`connection/${step.name}`);
  }
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
    // a connection named by its name (the folder's or the organization's), else a PCID
    const connection = doc.connection === undefined ? undefined : ids.connection.get(doc.connection) ?? doc.connection;
    const input: ServerWrite = doc.document
      ? { kind: 'openapi', name: doc.name, ...(doc.description ? { description: doc.description } : {}), connection: connection ?? '', document: doc.document }
      : { kind: 'remote', name: doc.name, ...(doc.description ? { description: doc.description } : {}), ...(connection ? { connection } : {}), url: doc.url ?? '' };
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
    ids.trigger.set(step.name, await writeTrigger(deps.triggers, { orgId, step, doc, workflowId, id: ids.trigger.get(step.name), secrets: request.secrets }));
    written.push(`trigger/${step.name}`);
  }
  // agents: also those naming a trigger made anew (their live form names a trigger ID no longer there)
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
  await prune(deps, context);
}

/** prune: dependents first (agents, triggers, servers, workflows, connections, members). */
async function prune(deps: DefinitionWriteDeps, { orgId, steps, written }: WriteContext): Promise<void> {
  const deletes = steps.filter((s) => s.action === 'delete');
  for (const kind of ['agent', 'trigger', 'toolServer', 'workflow', 'connection', 'member'] as const) {
    for (const step of deletes.filter((s) => s.kind === kind)) {
      const id = step.live?.id;
      if (!id) continue;
      if (kind === 'agent') await deps.agents.remove(orgId, id);
      else if (kind === 'trigger') {
        const gone = await deps.triggers.delete(orgId, id);
        if (!gone.ok && gone.code !== 'UNKNOWN_TRIGGER') throw new Error(`trigger ${step.name}: ${gone.message}`);
      } else if (kind === 'toolServer') await deps.servers.remove(orgId, id);
      else if (kind === 'workflow') settled(await deps.workflows.delete(orgId, id), `workflow ${step.name}`);
      else if (kind === 'connection') {
        const used = await deps.registry.toolServers.usingConnection(orgId, id);
        if (used.length > 0) throw new Error(`connection ${step.name}: custom servers call with it (${used.join(', ')}); delete them first`);
        await deps.connections.remove(orgId, id);
      } else settled(await deps.members.remove(orgId, id), `member ${step.name}`);
      written.push(`deleted ${kind}/${step.name}`);
    }
  }
}
