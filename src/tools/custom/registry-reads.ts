/**
 * What a call to a custom server would otherwise read from the registry every time: the server's
 * row (its kind, URL or document, connection and version) and the connection it calls with,
 * opened (its credentials decrypted; for a remote server also checked as a custom connection's; a
 * generated server's is the `PCID` of each call, opened for the dispatcher). All are kept in this
 * process for CUSTOM_SERVER_RECHECK_MS, the pattern of API
 * keys (src/http/auth.ts): a change or delete through this replica forgets its copy at once, and
 * every other replica reads the row again within the bound. Missing rows are never kept, so a
 * server registered on another replica is found at once.
 *
 * What is kept is the registry's answer, not what is built from it: the OAuth access token of a
 * connection is still asked of CustomAuth on every call (its own cache, renewal and refusals), and
 * forwarded headers are per call.
 */
import { LruCache } from '../../cache/lru-cache';
import type { ToolServerRecord, ToolServerStore } from '../../registry/tool-servers';
import type { ConnectionStore, ToolConnection } from '../connections';
import type { CustomConnectionRef } from './auth';
import { CustomCredentialsSchema } from './credentials';

/**
 * How long a custom server's row (and its connection, opened) is believed without reading the
 * registry again: a change or delete on another replica takes effect here within this bound
 * (docs/tool-gateway.md, "Changes and other replicas").
 */
export const CUSTOM_SERVER_RECHECK_MS = 500;
const KEPT_SERVERS = 10_000;
const KEPT_CONNECTIONS = 10_000;

/** A connection as a remote server calls with it: opened, or there but not a usable custom connection. */
export type OpenedConnection = { ref: CustomConnectionRef } | { invalid: string };

export class CustomRegistryReads {
  private readonly servers = new LruCache<string, ToolServerRecord>({ maxEntries: KEPT_SERVERS, ttlMs: CUSTOM_SERVER_RECHECK_MS });
  private readonly connections = new LruCache<string, OpenedConnection>({ maxEntries: KEPT_CONNECTIONS, ttlMs: CUSTOM_SERVER_RECHECK_MS });
  private readonly opened = new LruCache<string, ToolConnection>({ maxEntries: KEPT_CONNECTIONS, ttlMs: CUSTOM_SERVER_RECHECK_MS });

  constructor(private readonly store: ToolServerStore, private readonly connectionStore: () => ConnectionStore) {}

  /** The organization's server row, read at most every CUSTOM_SERVER_RECHECK_MS. */
  server(orgId: string, id: string): Promise<ToolServerRecord | undefined> {
    return this.servers.getOrLoad(`${orgId}/${id}`, () => this.store.get(orgId, id));
  }

  /**
   * The organization's connection as the dispatcher opens a `PCID` (ConnectionStore.open: any
   * application's; the dispatcher checks it is the server's), read at most every
   * CUSTOM_SERVER_RECHECK_MS; undefined when it is gone.
   */
  toolConnection(orgId: string, id: string): Promise<ToolConnection | undefined> {
    return this.opened.getOrLoad(`${orgId}/${id}`, () => this.connectionStore().open(orgId, id));
  }

  /** The organization's connection, opened, read at most every CUSTOM_SERVER_RECHECK_MS; undefined when it is gone. */
  connection(orgId: string, id: string): Promise<OpenedConnection | undefined> {
    return this.connections.getOrLoad(`${orgId}/${id}`, async () => {
      // from the registry, not from toolConnection's copy: each copy is at most the bound old
      const connection = await this.connectionStore().open(orgId, id);
      if (!connection) return undefined;
      const credentials = CustomCredentialsSchema.safeParse(connection.credentials);
      if (!credentials.success) return { invalid: `connection ${id} is not a valid custom connection` };
      return { ref: { orgId, id: connection.id, credentials: credentials.data } };
    });
  }

  /** After a change or delete of the server through this replica. */
  forgetServer(orgId: string, id: string): void {
    this.servers.delete(`${orgId}/${id}`);
  }

  /** After a delete of the connection through this replica. */
  forgetConnection(orgId: string, id: string): void {
    this.connections.delete(`${orgId}/${id}`);
    this.opened.delete(`${orgId}/${id}`);
  }
}
