/**
 * Application connections: an organization's stored credentials for one application (`mail`, …),
 * named in tool calls by their id, the `PCID`. Credentials are sealed before they reach the
 * registry and opened only for a tool call of the same organization.
 */
import type { Registry } from '../registry';
import { newConnectionId, type ConnectionRecord } from '../registry';
import type { ConnectionCipher } from '../crypto/connection-cipher';
import { ownJson } from '../common/narrow';

/** A connection opened for a tool call: its credentials in the clear (only ever in memory). */
export interface ToolConnection {
  id: string;
  application: string;
  name: string | null;
  credentials: Record<string, unknown>;
}

/** What callers may see of a connection: never the credentials. */
export interface ConnectionSummary {
  PCID: string;
  application: string;
  name: string | null;
  createdAt: string;
}

const binding = (orgId: string, id: string): string => `connection:${orgId}:${id}`;

function summary(record: ConnectionRecord): ConnectionSummary {
  return { PCID: record.id, application: record.application, name: record.name, createdAt: record.createdAt };
}

export class ConnectionStore {
  constructor(private readonly registry: Registry, private readonly cipher: ConnectionCipher) {}

  async create(orgId: string, application: string, name: string | null, credentials: Record<string, unknown>): Promise<ConnectionSummary> {
    const id = newConnectionId();
    const sealed = this.cipher.seal(JSON.stringify(credentials), binding(orgId, id));
    return summary(await this.registry.connections.create(orgId, { id, application, name, credentials: sealed }));
  }

  /** New credentials (and name) for the connection, sealed under its PCID again (definitions as code); false when the organization has no such connection. */
  async replace(orgId: string, id: string, name: string | null, credentials: Record<string, unknown>): Promise<boolean> {
    return this.registry.connections.replace(orgId, id, { name, credentials: this.cipher.seal(JSON.stringify(credentials), binding(orgId, id)) });
  }

  async list(orgId: string, application?: string): Promise<ConnectionSummary[]> {
    return (await this.registry.connections.list(orgId, application)).map(summary);
  }

  async get(orgId: string, id: string): Promise<ConnectionSummary | undefined> {
    const record = await this.registry.connections.get(orgId, id);
    return record && summary(record);
  }

  async remove(orgId: string, id: string): Promise<boolean> {
    return this.registry.connections.delete(orgId, id);
  }

  /** Seals what a connection learns later (an OAuth refresh token), bound to it like its credentials. */
  sealState(orgId: string, id: string, plaintext: string): string {
    return this.cipher.seal(plaintext, `${binding(orgId, id)}:state`);
  }

  openState(orgId: string, id: string, sealed: string): string {
    return this.cipher.open(sealed, `${binding(orgId, id)}:state`);
  }

  /** The connection with its credentials, if it is this organization's; undefined otherwise. */
  async open(orgId: string, id: string): Promise<ToolConnection | undefined> {
    const record = await this.registry.connections.get(orgId, id);
    if (!record) return undefined;
    const credentials = ownJson<Record<string, unknown>>(this.cipher.open(record.credentials, binding(orgId, id)));
    return { id: record.id, application: record.application, name: record.name, credentials };
  }
}
