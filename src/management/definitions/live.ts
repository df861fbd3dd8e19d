/**
 * An organization's live objects as declarative forms (forms.ts), by kind and name: what a plan
 * compares the folder with (definitions as code, index.ts).
 */
import type { Registry } from '../../registry';
import type { DefinitionKind, PlannedChange } from './format';
import { agentRecordForm, serverRecordForm, triggerRecordForm, workflowForm, type Form } from './forms';
import { connectionRecordForm, memberRecordForm } from './connection-forms';
import type { PlacedError } from './parse';

/** Opens a connection's credentials (in memory only: its form shows no secret). */
export type ConnectionOpener = (orgId: string, id: string) => Promise<{ credentials: Record<string, unknown> } | undefined>;

/** One live object: its registry ID and declarative form. */
export interface LiveObject { id: string; form: Form }

/** One object of a plan with what apply does for it: the folder's form, the live object. */
export interface Step extends PlannedChange { folderForm?: Form; live?: LiveObject; file?: string }

/** The organization as declarative forms, by kind and name. */
export type Live = Record<DefinitionKind, Map<string, LiveObject>>;

export const emptyLive = (): Live => ({ workflow: new Map(), trigger: new Map(), toolServer: new Map(), agent: new Map(), connection: new Map(), member: new Map() });

/** The organization as declarative forms; connections without a name are not definitions (nothing could name them). */
export async function readLive(registry: Registry, orgId: string, open: ConnectionOpener, errors?: PlacedError[]): Promise<Live> {
  const live = emptyLive();
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
  for (const member of await registry.members.list(orgId)) live.member.set(member.email, { id: member.id, form: memberRecordForm(member) });
  const connectionNames = new Map<string, string>();
  for (const connection of await registry.connections.list(orgId)) {
    if (connection.name === null) continue;
    if (live.connection.has(connection.name)) twice('connection', connection.name);
    const opened = await open(orgId, connection.id);
    live.connection.set(connection.name, { id: connection.id, form: connectionRecordForm(connection.name, connection.application, opened?.credentials ?? {}) });
    connectionNames.set(connection.id, connection.name);
  }
  const serverNames = new Map<string, string>();
  for (const server of await registry.toolServers.list(orgId)) {
    if (live.toolServer.has(server.name)) twice('toolServer', server.name);
    live.toolServer.set(server.name, { id: server.id, form: serverRecordForm(server, connectionNames) });
    serverNames.set(server.id, server.name);
  }
  for (const agent of await registry.agents.list(orgId)) {
    if (live.agent.has(agent.name)) twice('agent', agent.name);
    live.agent.set(agent.name, { id: agent.id, form: agentRecordForm(agent, serverNames, triggerNames) });
  }
  return live;
}
