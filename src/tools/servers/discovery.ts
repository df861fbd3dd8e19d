/**
 * The `/mcp` server: the catalog an agent starts from. `listServers` names every server the
 * caller's organization may use, `capabilities_discover` finds tools for a task described in
 * words (with the organization's connections they could use), `capability_details` gives full
 * schemas. Everything is scoped to the caller's organization.
 */
import type { ConnectionStore } from '../connections';
import { rankTools } from '../discovery';
import type { ToolDefinition, ToolServer } from '../types';

export const DISCOVERY_SERVER_NAME = 'mcp';

export interface DiscoveryDeps {
  /** every server the organization may use */
  servers(orgId: string): Promise<ToolServer[]>;
  connections: ConnectionStore;
}

function describedServers(all: ToolServer[]): ToolServer[] {
  return all.filter((s) => s.name !== DISCOVERY_SERVER_NAME);
}

export function discoveryServer(deps: DiscoveryDeps): ToolServer {
  const tools: ToolDefinition[] = [
    {
      name: 'listServers',
      description: 'List the tool servers this organization can use: name, path, description, whether built in, and tool names.',
      inputSchema: { type: 'object', properties: {}, required: [], additionalProperties: false },
      async handler(_args, context) {
        const servers = await deps.servers(context.orgId);
        return {
          servers: servers.map((s) => ({
            name: s.name, path: `/${s.name}`, description: s.description, embedded: s.embedded, tools: s.tools.map((t) => t.name),
          })),
        };
      },
    },
    {
      name: 'capabilities_discover',
      description: 'Find the tools best suited to a task described in words. Answers the matching tools with their server and a confidence from 0 to 1, and the organization\'s connections (PCID) those tools can use.',
      inputSchema: {
        type: 'object',
        properties: {
          task: { type: 'string', minLength: 1, maxLength: 2000, description: 'what you want to do, in words' },
          limit: { type: 'integer', minimum: 1, maximum: 50, description: 'how many tools at most (default 5)' },
        },
        required: ['task'],
        additionalProperties: false,
      },
      async handler(args, context) {
        const servers = describedServers(await deps.servers(context.orgId));
        const ranked = rankTools(String(args.task), servers, typeof args.limit === 'number' ? args.limit : 5);
        const applications = [...new Set(ranked.map((r) => r.server.application).filter((a): a is string => a !== undefined))];
        const connections = (await Promise.all(applications.map((a) => deps.connections.list(context.orgId, a)))).flat();
        return {
          task: args.task,
          tools: ranked.map((r) => ({
            server: r.server.name, path: `/${r.server.name}`, tool: r.tool.name, description: r.tool.description, confidence: r.confidence,
            ...(r.server.application === undefined ? {} : { requiresConnection: r.server.application }),
          })),
          connections: connections.map((c) => ({ PCID: c.PCID, application: c.application, name: c.name })),
        };
      },
    },
    {
      name: 'capability_details',
      description: 'Full definitions (description and input JSON Schema) of named tools. Name each as "server/tool", or by tool name alone.',
      inputSchema: {
        type: 'object',
        properties: {
          tools: { type: 'array', minItems: 1, maxItems: 50, items: { type: 'string', minLength: 1 }, description: 'e.g. ["web-search/search"]' },
        },
        required: ['tools'],
        additionalProperties: false,
      },
      async handler(args, context) {
        const servers = await deps.servers(context.orgId);
        const found: Record<string, unknown>[] = [];
        const unknown: string[] = [];
        for (const wanted of args.tools as string[]) {
          const slash = wanted.indexOf('/');
          const serverName = slash >= 0 ? wanted.slice(0, slash).replace(/^\/+/, '') : undefined;
          const toolName = slash >= 0 ? wanted.slice(slash + 1) : wanted;
          const matches = servers
            .filter((s) => serverName === undefined || s.name === serverName)
            .flatMap((s) => s.tools.filter((t) => t.name === toolName).map((t) => ({ s, t })));
          if (matches.length === 0) unknown.push(wanted);
          for (const { s, t } of matches) {
            found.push({
              server: s.name, path: `/${s.name}`, name: t.name, description: t.description, inputSchema: t.inputSchema,
              ...(s.application === undefined ? {} : { requiresConnection: s.application }),
            });
          }
        }
        return { tools: found, unknown };
      },
    },
  ];
  return {
    name: DISCOVERY_SERVER_NAME,
    description: 'The catalog: list the servers, find tools for a task, get their full schemas.',
    embedded: true,
    tools,
  };
}
