/**
 * A custom server with durable tools (docs/tool-gateway.md, durable calls): the same tools, those
 * that run durably listed as task-capable, with `durable` and `durableTools` set, which send every
 * call of such a tool through a durable task (durable.ts).
 */
import type { DurablePolicy } from '../../common/durable-call';
import { durablePolicyFor, type DurableTools } from '../../common/durable-tools';
import type { ToolEntry, ToolServer } from '../server';

/** A durable tool as tools/list shows it: it may run as a task (2025 era `execution.taskSupport`). */
export function durableTool(tool: ToolEntry): ToolEntry {
  return { ...tool, execution: { taskSupport: 'optional' } };
}

/** The tools as a server with these settings lists them: each durable one task-capable. */
export function durableTools(tools: readonly ToolEntry[], durable: DurablePolicy | null, overrides: DurableTools | null): ToolEntry[] {
  return tools.map((tool) => (durablePolicyFor(durable, overrides, tool.name) ? durableTool(tool) : tool));
}

/**
 * A server with durable tools: the same tools, the durable ones listed as task-capable, and
 * `durable`/`durableTools` set, which send every call of a durable tool through a durable task
 * (the dispatcher hands it to src/tools/custom/durable.ts).
 */
export function durableServer(server: ToolServer, durable: DurablePolicy | null, overrides: DurableTools | null = null): ToolServer {
  const keptTools = server.keptTools?.bind(server);
  return {
    name: server.name, description: server.description, embedded: server.embedded,
    ...(durable === null ? {} : { durable }), ...(overrides === null ? {} : { durableTools: overrides }),
    ...(server.application === undefined ? {} : { application: server.application }),
    ...(server.openConnection ? { openConnection: server.openConnection.bind(server) } : {}),
    ...(server.maxRequestBytes === undefined ? {} : { maxRequestBytes: server.maxRequestBytes }),
    listTools: async (context) => durableTools(await server.listTools(context), durable, overrides),
    ...(server.listFreshForMs ? { listFreshForMs: server.listFreshForMs.bind(server) } : {}),
    ...(keptTools ? { keptTools: () => { const kept = keptTools(); return kept && durableTools(kept, durable, overrides); } } : {}),
    callTool: (name, args, context) => server.callTool(name, args, context),
    ...(server.followsUpstreamTasks ? { followsUpstreamTasks: true } : {}),
    ...(server.timeoutMs ? { timeoutMs: server.timeoutMs.bind(server) } : {}),
  };
}
