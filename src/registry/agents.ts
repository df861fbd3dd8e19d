/**
 * The agent store: agents of an organization, their chats, and the files their tools produced.
 * Every read and write names the organization, so another organization's agent or chat is
 * indistinguishable from a missing one.
 */
import type { Kysely, Selectable } from 'kysely';
import type { AgentModel, AgentRecord, AgentServer, AgentWorkflow, ArtifactRecord, ChatRecord, CreateAgentInput } from './agent-records';
import { DEFAULT_LIMITS, type AgentLimits } from './agent-limits';
import { newId } from '../crypto/secrets';
import type { AgentChatsTable, AgentsTable, Database } from './db';
import { fromJson } from './store-support';

/** An agent's fields as stored: the create input with defaults applied. */
export type AgentFields = Omit<AgentRecord, 'id' | 'orgId' | 'createdAt' | 'updatedAt'>;

export function agentFields(input: CreateAgentInput): AgentFields {
  return {
    name: input.name, description: input.description, instructions: input.instructions, outputSchema: input.outputSchema ?? null,
    servers: input.servers, workflows: input.workflows, model: input.model ?? {}, limits: { ...DEFAULT_LIMITS, ...input.limits },
    priority: input.priority ?? null,
  };
}

export class AgentStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(orgId: string, fields: AgentFields): Promise<AgentRecord> {
    const now = new Date().toISOString();
    const record: AgentRecord = { id: newId('agt'), orgId, ...fields, createdAt: now, updatedAt: now };
    await this.db.insertInto('agents').values({ ...toRow(record), id: record.id, org_id: orgId, created_at: now }).execute();
    return record;
  }

  async get(orgId: string, id: string): Promise<AgentRecord | undefined> {
    const row = await this.db.selectFrom('agents').selectAll().where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return row && toAgent(row);
  }

  async list(orgId: string): Promise<AgentRecord[]> {
    const rows = await this.db.selectFrom('agents').selectAll().where('org_id', '=', orgId).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
    return rows.map(toAgent);
  }

  /** Replaces the stored fields (the caller merged a partial update); undefined when not the org's. */
  async update(orgId: string, id: string, fields: AgentFields): Promise<AgentRecord | undefined> {
    const updatedAt = new Date().toISOString();
    const { updated_at: _ignored, ...row } = toRow({ ...fields, updatedAt });
    const result = await this.db.updateTable('agents').set({ ...row, updated_at: updatedAt }).where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    if (result.numUpdatedRows === 0n) return undefined;
    return this.get(orgId, id);
  }

  async remove(orgId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('agents').where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  // --- chats ---

  /** `id` may be chosen by the caller (an invocation names its chat before it exists). */
  async createChat(orgId: string, agentId: string, title: string | null, id = newChatId()): Promise<ChatRecord> {
    const now = new Date().toISOString();
    await this.db.insertInto('agent_chats').values({ id, org_id: orgId, agent_id: agentId, title, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('id').doNothing()).execute();
    const chat = await this.getChat(orgId, id);
    if (!chat || chat.agentId !== agentId) throw new Error(`chat ${id} belongs to another agent`);
    return chat;
  }

  async getChat(orgId: string, id: string): Promise<ChatRecord | undefined> {
    const row = await this.db.selectFrom('agent_chats').selectAll().where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return row && toChat(row);
  }

  async listChats(orgId: string, agentId?: string): Promise<ChatRecord[]> {
    let query = this.db.selectFrom('agent_chats').selectAll().where('org_id', '=', orgId);
    if (agentId !== undefined) query = query.where('agent_id', '=', agentId);
    return (await query.orderBy('created_at', 'asc').orderBy('id', 'asc').execute()).map(toChat);
  }

  async touchChat(orgId: string, id: string): Promise<void> {
    await this.db.updateTable('agent_chats').set({ updated_at: new Date().toISOString() }).where('id', '=', id).where('org_id', '=', orgId).execute();
  }

  /** Idempotent on (chat, name): a retried activity records its file once. */
  async addArtifact(artifact: ArtifactRecord): Promise<void> {
    await this.db.insertInto('agent_artifacts').values({
      chat_id: artifact.chatId, name: artifact.name, key: artifact.key, mime_type: artifact.mimeType, size: artifact.size, created_at: artifact.createdAt,
    }).onConflict((oc) => oc.columns(['chat_id', 'name']).doNothing()).execute();
  }

  async listArtifacts(chatId: string): Promise<ArtifactRecord[]> {
    const rows = await this.db.selectFrom('agent_artifacts').selectAll().where('chat_id', '=', chatId).orderBy('created_at', 'asc').orderBy('name', 'asc').execute();
    return rows.map((r) => ({ chatId: r.chat_id, name: r.name, key: r.key, mimeType: r.mime_type, size: r.size, createdAt: r.created_at }));
  }
}

export function newChatId(): string {
  return newId('chat');
}

function toRow(fields: AgentFields & { updatedAt: string }): Omit<AgentsTable, 'id' | 'org_id' | 'created_at'> {
  return {
    name: fields.name, description: fields.description, instructions: fields.instructions,
    output_schema: fields.outputSchema === null ? null : JSON.stringify(fields.outputSchema),
    servers: JSON.stringify(fields.servers), workflows: JSON.stringify(fields.workflows), model: JSON.stringify(fields.model),
    limits: JSON.stringify(fields.limits), priority: fields.priority, updated_at: fields.updatedAt,
  };
}

// JSON columns are written only by this store from validated values (see registry.ts, fromJson).
function toAgent(row: Selectable<AgentsTable>): AgentRecord {
  return {
    id: row.id, orgId: row.org_id, name: row.name, description: row.description, instructions: row.instructions,
    outputSchema: row.output_schema === null ? null : fromJson<Record<string, unknown>>(row.output_schema),
    servers: fromJson<AgentServer[]>(row.servers), workflows: fromJson<AgentWorkflow[]>(row.workflows),
    model: fromJson<AgentModel>(row.model), limits: { ...DEFAULT_LIMITS, ...fromJson<Partial<AgentLimits>>(row.limits) },
    priority: row.priority ?? null,
    createdAt: row.created_at, updatedAt: row.updated_at,
  };
}

function toChat(row: Selectable<AgentChatsTable>): ChatRecord {
  return { id: row.id, orgId: row.org_id, agentId: row.agent_id, title: row.title, createdAt: row.created_at, updatedAt: row.updated_at };
}
