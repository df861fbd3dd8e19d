/**
 * Custom tool servers of an organization (generated from an OpenAPI document, or remote MCP
 * servers) and the mutable state of custom connections (OAuth consent, the last failure). Every
 * query names the organization: another organization's server is indistinguishable from none.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { z } from 'zod';
import type { ConnectionStatesTable, Database, ToolServersTable } from './db';
import type { DurablePolicy } from '../common/durable-call';
import type { DurableTools } from '../common/durable-tools';
import { DurablePolicySchema, DurableToolsSchema } from '../contracts/durable-policy';

export type ToolServerKind = 'openapi' | 'remote';
export type ConnectionStatus = 'connected' | 'pending' | 'error';

export interface ToolServerRecord {
  id: string;
  orgId: string;
  kind: ToolServerKind;
  name: string;
  description: string;
  connectionId: string | null;
  /** `openapi`: the document as JSON text; `remote`: the URL */
  source: string;
  /** calls run as durable tasks with this retry policy; null: plain proxied calls */
  durable: DurablePolicy | null;
  /** per tool, its own policy or false (a plain proxied call); null: every tool follows `durable` */
  durableTools: DurableTools | null;
  createdAt: string;
  updatedAt: string;
}

export interface ConnectionStateRecord {
  connectionId: string;
  orgId: string;
  status: ConnectionStatus;
  error: string | null;
  /** sealed by the connection cipher; opaque here */
  secret: string | null;
  updatedAt: string;
}

const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

/**
 * A server id: 20 lowercase base32hex characters from 100 random bits (the shape of
 * `d7r2dt3l9foc7192703g`). Opaque on purpose: the display name is never the path.
 */
export function newToolServerId(): string {
  const bytes = randomBytes(20);
  let id = '';
  for (const byte of bytes) id += BASE32HEX[byte & 31];
  return id;
}

/** What newToolServerId() makes: a path of any other shape names no custom server (no query needed). */
const TOOL_SERVER_ID = /^[0-9a-v]{20}$/;

/** Whether `path` has the shape of a custom server id (no other path can name one). */
export function isToolServerId(path: string): boolean {
  return TOOL_SERVER_ID.test(path);
}

export class ToolServerStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(orgId: string, input: Omit<ToolServerRecord, 'id' | 'orgId' | 'createdAt' | 'updatedAt' | 'durable' | 'durableTools'> & DurableFields): Promise<ToolServerRecord> {
    const now = new Date().toISOString();
    const record: ToolServerRecord = { ...input, durable: input.durable ?? null, durableTools: input.durableTools ?? null, id: newToolServerId(), orgId, createdAt: now, updatedAt: now };
    await this.db.insertInto('tool_servers').values({
      id: record.id, org_id: orgId, kind: record.kind, name: record.name, description: record.description, connection_id: record.connectionId,
      source: record.source, durable: durableText(record.durable), durable_tools: durableText(record.durableTools), created_at: now, updated_at: now,
    }).execute();
    return record;
  }

  async list(orgId: string): Promise<ToolServerRecord[]> {
    const rows = await this.db.selectFrom('tool_servers').selectAll().where('org_id', '=', orgId)
      .orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
    return rows.map(toRecord);
  }

  async get(orgId: string, id: string): Promise<ToolServerRecord | undefined> {
    // a path of another shape (from the management API's URL) names no server: no query
    if (!isToolServerId(id)) return undefined;
    const row = await this.db.selectFrom('tool_servers').selectAll().where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return row && toRecord(row);
  }

  /** Whether any organization has a server with this id (ids are random, unique across organizations). */
  async exists(id: string): Promise<boolean> {
    if (!isToolServerId(id)) return false;
    return (await this.db.selectFrom('tool_servers').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
  }

  /** Replaces what the server is made from (no `durable`/`durableTools`: none); undefined when the organization has no such server. */
  async replace(orgId: string, id: string, input: Pick<ToolServerRecord, 'name' | 'description' | 'connectionId' | 'source'> & DurableFields): Promise<ToolServerRecord | undefined> {
    const updatedAt = new Date().toISOString();
    const result = await this.db.updateTable('tool_servers')
      .set({
        name: input.name, description: input.description, connection_id: input.connectionId, source: input.source,
        durable: durableText(input.durable ?? null), durable_tools: durableText(input.durableTools ?? null), updated_at: updatedAt,
      })
      .where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return result.numUpdatedRows > 0n ? this.get(orgId, id) : undefined;
  }

  async remove(orgId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('tool_servers').where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** The ids of the organization's servers that call with this connection. */
  async usingConnection(orgId: string, connectionId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('tool_servers').select('id').where('org_id', '=', orgId).where('connection_id', '=', connectionId).execute();
    return rows.map((r) => r.id);
  }

  // --- custom connection state ---

  async connectionState(orgId: string, connectionId: string): Promise<ConnectionStateRecord | undefined> {
    const row = await this.db.selectFrom('connection_states').selectAll()
      .where('connection_id', '=', connectionId).where('org_id', '=', orgId).executeTakeFirst();
    return row && toStateRecord(row);
  }

  /** Writes the state; `secret: undefined` keeps the stored secret, `null` clears it. */
  async setConnectionState(orgId: string, connectionId: string, state: { status: ConnectionStatus; error?: string | null; secret?: string | null }): Promise<void> {
    const updatedAt = new Date().toISOString();
    const values = { status: state.status, error: state.error ?? null, updated_at: updatedAt, ...(state.secret === undefined ? {} : { secret: state.secret }) };
    await this.db.insertInto('connection_states')
      .values({ connection_id: connectionId, org_id: orgId, secret: null, ...values })
      .onConflict((oc) => oc.column('connection_id').doUpdateSet(values))
      .execute();
  }
}

/** A server's durable settings as create and replace take them (absent: none). */
interface DurableFields {
  durable?: DurablePolicy | null;
  durableTools?: DurableTools | null;
}

function durableText(settings: DurablePolicy | DurableTools | null): string | null {
  return settings === null ? null : JSON.stringify(settings);
}

/** The stored settings; text that no longer parses (a narrower schema) leaves the server a plain proxy rather than unusable. */
function storedOf<T>(schema: z.ZodType<T>, text: string | null): T | null {
  if (text === null) return null;
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function toRecord(row: Selectable<ToolServersTable>): ToolServerRecord {
  return {
    id: row.id, orgId: row.org_id, kind: row.kind === 'remote' ? 'remote' : 'openapi', name: row.name, description: row.description,
    connectionId: row.connection_id, source: row.source, durable: storedOf(DurablePolicySchema, row.durable),
    durableTools: storedOf(DurableToolsSchema, row.durable_tools), createdAt: row.created_at, updatedAt: row.updated_at,
  };
}

function toStateRecord(row: Selectable<ConnectionStatesTable>): ConnectionStateRecord {
  const status: ConnectionStatus = row.status === 'pending' || row.status === 'error' ? row.status : 'connected';
  return { connectionId: row.connection_id, orgId: row.org_id, status, error: row.error, secret: row.secret, updatedAt: row.updated_at };
}
