/**
 * The connections as definitions as code writes them (src/management/definitions ConnectionPort):
 * the tool gateway's connection store (credentials sealed under the PCID) and the custom servers,
 * which keep a custom connection's state and a cache of opened connections.
 */
import type { ConnectionPort } from '../management';
import { APPLICATIONS, type CustomServers, type ToolDispatcher } from '../tools';

export function definitionConnections(tools: () => ToolDispatcher, custom: CustomServers): ConnectionPort {
  return {
    applications: APPLICATIONS,
    open: (orgId, id) => tools().connections.open(orgId, id),
    async create(orgId, application, name, credentials) {
      const created = await tools().connections.create(orgId, application, name, credentials);
      await custom.created(orgId, created.PCID, credentials);
      return { id: created.PCID };
    },
    async replace(orgId, id, name, credentials) {
      const replaced = await tools().connections.replace(orgId, id, name, credentials);
      custom.forgetConnection(orgId, id);
      return replaced;
    },
    async remove(orgId, id) {
      const removed = await tools().connections.remove(orgId, id);
      custom.forgetConnection(orgId, id);
      return removed;
    },
  };
}
