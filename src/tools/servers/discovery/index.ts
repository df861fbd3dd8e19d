/**
 * The `/mcp` server: the catalog an agent starts from. `listServers` names every server the
 * caller's organization may use, `capabilities_discover` finds tools for a task described in
 * words (with the organization's connections they could use), `capability_details` gives full
 * schemas. Everything is scoped to the caller's organization. A server that cannot list its tools
 * right now (a remote that is down) is shown with no tools and the reason, never fails the call.
 */
import { z } from 'zod';
import { defineTool, toolServer } from '../../define-tool';
import { rankTools, type ListedServer } from './ranking';
import type { CallContext, ToolEntry, ToolServer } from '../../server';

export const DISCOVERY_SERVER_NAME = 'mcp';
const LIST_TIMEOUT_MS = 10_000;

export interface DiscoveryDeps {
  /** every server the organization may use */
  servers(orgId: string): Promise<ToolServer[]>;
  /** the tools one server lists for the organization */
  tools(server: ToolServer, orgId: string, signal: AbortSignal): Promise<readonly ToolEntry[]>;
}

type Listed = ListedServer & { server: ToolServer; error?: string };

export function discoveryServer(deps: DiscoveryDeps): ToolServer {
  async function listed(context: CallContext, includeSelf: boolean): Promise<Listed[]> {
    const servers = (await deps.servers(context.orgId)).filter((s) => includeSelf || s.name !== DISCOVERY_SERVER_NAME);
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(LIST_TIMEOUT_MS)]);
    return Promise.all(servers.map(async (server): Promise<Listed> => {
      try {
        return { server, tools: await deps.tools(server, context.orgId, signal) };
      } catch (error) {
        return { server, tools: [], error: error instanceof Error ? error.message : String(error) };
      }
    }));
  }

  const listServers = defineTool({
    name: 'listServers',
    description: 'List the tool servers this organization can use: name, path, description, whether built in, and tool names.',
    input: z.object({}).strict(),
    async handler(_args, context) {
      return {
        servers: (await listed(context, true)).map(({ server, tools, error }) => ({
          name: server.name, path: `/${server.name}`, description: server.description, embedded: server.embedded, tools: tools.map((t) => t.name),
          ...(error === undefined ? {} : { error }),
        })),
      };
    },
  });

  const discover = defineTool({
    name: 'capabilities_discover',
    description: 'Find the tools best suited to a task described in words. Answers the matching tools with their server and a confidence from 0 to 1, and the organization\'s connections (PCID) those tools can use.',
    input: z.object({
      task: z.string().min(1).max(2000).optional().describe('what you want to do, in words'),
      // The names clients of the platform the contract comes from send: `request` for the task,
      // `types` and `context` besides it.
      request: z.string().min(1).max(2000).optional().describe('the same as task (either one is required)'),
      types: z.array(z.string().min(1).max(100)).max(20).optional().describe('kinds of capability wanted; accepted for compatibility, every tool is considered'),
      context: z.string().max(4000).optional().describe('more words about the situation; they count toward the ranking'),
      limit: z.number().int().min(1).max(50).default(5).describe('how many tools at most (default 5)'),
    }).strict().refine((args) => args.task !== undefined || args.request !== undefined, { message: 'task (or request) is required', path: ['task'] }),
    async handler({ task, request, context: more, limit }, context) {
      const wanted = task ?? request ?? '';
      const ranked = rankTools(more ? `${wanted} ${more}` : wanted, await listed(context, false), limit);
      const applications = [...new Set(ranked.map((r) => r.server.application).filter((a): a is string => a !== undefined))];
      const connections = (await Promise.all(applications.map((a) => context.services.connections.list(context.orgId, a)))).flat();
      return {
        task: wanted,
        tools: ranked.map((r) => ({
          server: r.server.name, path: `/${r.server.name}`, tool: r.tool.name, name: r.tool.name, serverName: r.server.name,
          description: r.tool.description, confidence: r.confidence,
          ...(r.server.application === undefined ? {} : { requiresConnection: r.server.application }),
        })),
        connections: connections.map((c) => ({ PCID: c.PCID, application: c.application, name: c.name })),
      };
    },
  });

  const details = defineTool({
    name: 'capability_details',
    description: 'Full definitions (description and input JSON Schema) of named tools. Name each as "server/tool", or by tool name alone.',
    input: z.object({
      tools: z.array(z.string().min(1)).min(1).max(50).optional().describe('e.g. ["web-search/search"]'),
      items: z.array(z.string().min(1)).min(1).max(50).optional().describe('the same as tools (either one is required)'),
    }).strict().refine((args) => args.tools !== undefined || args.items !== undefined, { message: 'tools (or items) is required', path: ['tools'] }),
    async handler({ tools, items }, context) {
      const wanted = [...(tools ?? []), ...(items ?? [])];
      const all = await listed(context, true);
      const found: Record<string, unknown>[] = [];
      const unknown: string[] = [];
      for (const name of wanted) {
        const slash = name.indexOf('/');
        const serverName = slash >= 0 ? name.slice(0, slash).replace(/^\/+/, '') : undefined;
        const toolName = slash >= 0 ? name.slice(slash + 1) : name;
        const matches = all
          .filter(({ server }) => serverName === undefined || server.name === serverName)
          .flatMap(({ server, tools }) => tools.filter((t) => t.name === toolName).map((t) => ({ server, t })));
        if (matches.length === 0) unknown.push(name);
        for (const { server, t } of matches) {
          found.push({
            server: server.name, serverName: server.name, path: `/${server.name}`, name: t.name, description: t.description, inputSchema: t.inputSchema,
            ...(server.application === undefined ? {} : { requiresConnection: server.application }),
          });
        }
      }
      return { tools: found, unknown };
    },
  });

  return toolServer({
    name: DISCOVERY_SERVER_NAME,
    description: 'The catalog: list the servers, find tools for a task, get their full schemas.',
    tools: [listServers, discover, details],
  });
}
