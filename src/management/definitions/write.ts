/**
 * The writes of an apply (definitions as code, index.ts), in the order of DEFINITION_KINDS so that
 * what an object names exists before it: members, connections, workflows (each change published
 * as a new version carrying the commit), tool servers, triggers, agents; then, with prune, the
 * deletes, dependents first. Each write goes through the management operation or service the API
 * uses, so that the same checks hold; a refusal throws, naming the object (undo.ts `writing`).
 * Each write first leaves its inverse on the context's undo list: a creation its delete (once the
 * object exists), a change what restores the object as read before it (restore.ts). Deletes cannot
 * be undone: prune runs after every other write and check, so that only a delete can fail after one.
 */
import { DEFINITION_KINDS, type ApplyRequest, type DefinitionKind } from './format';
import type { Folder } from './parse';
import type { Live, Step } from './live';
import type { DefinitionWriteDeps, ServerWrite } from './ports';
import { agentInput } from './forms';
import { writeTrigger } from './trigger-write';
import { restoreAgent, restoreConnection, restoreMember, restoreServer, restoreTrigger, restoreWorkflow } from './restore';
import { ApplyWriteError, settled, writing, type UndoList } from './undo';

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
  /** the inverse of each write (undo.ts), run newest first when a later one fails */
  undo: UndoList;
}

/** The creations and changes (not the deletes: prune). */
export async function writeAll(deps: DefinitionWriteDeps, context: WriteContext): Promise<void> {
  const { orgId, request, steps, folder, live, written, undo } = context;
  const commit = request.source.commit;
  const of = (kind: DefinitionKind) => steps.filter((s) => s.kind === kind && (s.action === 'create' || s.action === 'change'));
  const ids: Record<DefinitionKind, Map<string, string>> = { workflow: new Map(), trigger: new Map(), toolServer: new Map(), agent: new Map(), connection: new Map(), member: new Map() };
  for (const kind of DEFINITION_KINDS) for (const [name, object] of live[kind]) ids[kind].set(name, object.id);
  const { workflows, servers, agents, connections, members } = deps;

  for (const step of of('member')) {
    const doc = folder.member.get(step.name)?.value;
    if (!doc) continue;
    const what = `member/${step.name}`;
    const id = ids.member.get(step.name);
    if (id) {
      undo.push(what, restoreMember(deps, orgId, id, step.live?.form.role));
      await writing(what, async () => settled(await members.update(orgId, id, { role: doc.role }), what));
    } else {
      const added = await writing(what, async () => settled(await members.add(orgId, { email: doc.email, role: doc.role }), what));
      undo.push(what, async () => void settled(await members.remove(orgId, added.id), what));
    }
    written.push(what);
  }
  for (const step of of('connection')) {
    const doc = folder.connection.get(step.name)?.value;
    const credentials = context.connectionSettings.get(step.name);
    if (!doc || !credentials) continue;
    const what = `connection/${step.name}`;
    const id = ids.connection.get(step.name);
    if (id) {
      undo.push(what, await restoreConnection(deps, orgId, id, step.name));
      await writing(what, async () => {
        if (!(await connections.replace(orgId, id, doc.name, credentials))) throw new Error('gone while applying');
      });
    } else {
      const created = await writing(what, () => connections.create(orgId, doc.application, doc.name, credentials));
      undo.push(what, async () => void (await connections.remove(orgId, created.id)));
      ids.connection.set(step.name, created.id);
    }
    written.push(what);
  }
  for (const step of of('workflow')) {
    const definition = folder.workflow.get(step.name)?.value;
    if (!definition) continue;
    const what = `workflow/${step.name}`;
    let id = ids.workflow.get(step.name);
    if (id) {
      const existing = id;
      undo.push(what, await restoreWorkflow(deps, orgId, existing));
      await writing(what, async () => settled(await workflows.updateDraft(orgId, existing, definition), what));
    } else {
      const created = await writing(what, async () => settled(await workflows.create(orgId, definition), what));
      undo.push(what, async () => void settled(await workflows.delete(orgId, created.id), what));
      id = created.id;
    }
    ids.workflow.set(step.name, id);
    const published = id;
    await writing(what, async () => settled(await workflows.publish(orgId, published, commit), what));
    written.push(what);
  }
  for (const step of of('toolServer')) {
    const doc = folder.toolServer.get(step.name)?.value;
    if (!doc) continue;
    const what = `toolServer/${step.name}`;
    // a connection named by its name (the folder's or the organization's), else a PCID
    const connection = doc.connection === undefined ? undefined : ids.connection.get(doc.connection) ?? doc.connection;
    const input: ServerWrite = doc.document
      ? { kind: 'openapi', name: doc.name, ...(doc.description ? { description: doc.description } : {}), connection: connection ?? '', document: doc.document }
      : { kind: 'remote', name: doc.name, ...(doc.description ? { description: doc.description } : {}), ...(connection ? { connection } : {}), url: doc.url ?? '' };
    if (doc.durable) input.durable = doc.durable;
    if (doc.durableTools) input.durableTools = doc.durableTools;
    const id = ids.toolServer.get(step.name);
    if (id) {
      undo.push(what, await restoreServer(deps, orgId, id));
      await writing(what, () => servers.replace(orgId, id, input));
    } else {
      const created = await writing(what, () => servers.register(orgId, input));
      undo.push(what, async () => void (await servers.remove(orgId, created.id)));
      ids.toolServer.set(step.name, created.id);
    }
    written.push(what);
  }
  for (const step of of('trigger')) {
    const doc = folder.trigger.get(step.name)?.value;
    if (!doc) continue;
    const what = `trigger/${step.name}`;
    const workflowId = ids.workflow.get(doc.workflow);
    if (!workflowId) throw new ApplyWriteError(what, `no workflow ${doc.workflow}`);
    const id = ids.trigger.get(step.name);
    if (id) undo.push(what, await restoreTrigger(deps, orgId, id));
    const created = (triggerId: string) => undo.push(what, async () => {
      const gone = await deps.triggers.delete(orgId, triggerId);
      if (!gone.ok && gone.code !== 'UNKNOWN_TRIGGER') throw new Error(gone.message);
    });
    ids.trigger.set(step.name, await writing(what, () => writeTrigger(deps.triggers, { orgId, step, doc, workflowId, id, secrets: request.secrets, created })));
    written.push(what);
  }
  // agents: also those naming a trigger made anew (their live form names a trigger ID no longer there)
  const agentSteps = of('agent');
  const changed = [...folder.agent].filter(([name, { value }]) => !agentSteps.some((s) => s.name === name) && ids.agent.has(name)
    && value.workflows.some((w) => live.trigger.get(w.trigger)?.id !== ids.trigger.get(w.trigger)));
  for (const [name, doc] of [...agentSteps.map((s) => [s.name, folder.agent.get(s.name)?.value] as const), ...changed.map(([n, d]) => [n, d.value] as const)]) {
    if (!doc) continue;
    const what = `agent/${name}`;
    const input = agentInput(doc, ids);
    const id = ids.agent.get(name);
    if (id) {
      undo.push(what, await restoreAgent(deps, orgId, id));
      await writing(what, () => agents.update(orgId, id, input));
    } else {
      const created = await writing(what, () => agents.create(orgId, input));
      undo.push(what, () => agents.remove(orgId, created.id));
      ids.agent.set(name, created.id);
    }
    written.push(what);
  }
}

/**
 * Why prune cannot delete what it would (a connection a custom server still calls with, once the
 * servers it deletes are gone), checked after every other write and before the first delete, so
 * that the only failure left once deleting starts is a delete's own.
 */
export async function pruneProblem(deps: DefinitionWriteDeps, { orgId, steps }: WriteContext): Promise<ApplyWriteError | undefined> {
  const deletes = steps.filter((s) => s.action === 'delete');
  const deletedServers = new Set(deletes.filter((s) => s.kind === 'toolServer').map((s) => s.live?.id));
  for (const step of deletes.filter((s) => s.kind === 'connection')) {
    const id = step.live?.id;
    if (!id) continue;
    const used = (await deps.registry.toolServers.usingConnection(orgId, id)).filter((server) => !deletedServers.has(server));
    if (used.length > 0) return new ApplyWriteError(`connection/${step.name}`, `custom servers call with it (${used.join(', ')}); delete them first`);
  }
  return undefined;
}

/** prune: dependents first (agents, triggers, servers, workflows, connections, members); never undone. */
export async function prune(deps: DefinitionWriteDeps, { orgId, steps, written }: WriteContext): Promise<void> {
  const deletes = steps.filter((s) => s.action === 'delete');
  for (const kind of ['agent', 'trigger', 'toolServer', 'workflow', 'connection', 'member'] as const) {
    for (const step of deletes.filter((s) => s.kind === kind)) {
      const id = step.live?.id;
      if (!id) continue;
      const what = `${kind}/${step.name}`;
      await writing(what, async () => {
        if (kind === 'agent') await deps.agents.remove(orgId, id);
        else if (kind === 'trigger') {
          const gone = await deps.triggers.delete(orgId, id);
          if (!gone.ok && gone.code !== 'UNKNOWN_TRIGGER') throw new Error(gone.message);
        } else if (kind === 'toolServer') await deps.servers.remove(orgId, id);
        else if (kind === 'workflow') settled(await deps.workflows.delete(orgId, id), what);
        else if (kind === 'connection') await deps.connections.remove(orgId, id);
        else settled(await deps.members.remove(orgId, id), what);
      }, true);
      written.push(`deleted ${what}`);
    }
  }
}
