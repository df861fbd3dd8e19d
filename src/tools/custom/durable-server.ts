/**
 * A custom server marked durable (docs/tool-gateway.md, durable calls): the same tools, listed as
 * task-capable, with `durable` set, which sends every call through a durable task (durable.ts).
 */
import type { DurablePolicy } from '../../common/durable-call';
import type { ToolEntry, ToolServer } from '../server';

/** A durable server's tool as tools/list shows it: it may run as a task (2025 era `execution.taskSupport`). */
export function durableTool(tool: ToolEntry): ToolEntry {
  return { ...tool, execution: { taskSupport: 'optional' } };
}

/**
 * A server marked durable: the same tools, listed as task-capable, and `durable` set, which sends
 * every call of them through a durable task (the dispatcher hands it to src/tools/custom/durable.ts).
 */
export function durableServer(server: ToolServer, durable: DurablePolicy): ToolServer {
  const keptTools = server.keptTools?.bind(server);
  return {
    name: server.name, description: server.description, embedded: server.embedded, durable,
    ...(server.application === undefined ? {} : { application: server.application }),
    ...(server.maxRequestBytes === undefined ? {} : { maxRequestBytes: server.maxRequestBytes }),
    listTools: async (context) => (await server.listTools(context)).map(durableTool),
    ...(server.listFreshForMs ? { listFreshForMs: server.listFreshForMs.bind(server) } : {}),
    ...(keptTools ? { keptTools: () => keptTools()?.map(durableTool) } : {}),
    callTool: (name, args, context) => server.callTool(name, args, context),
    ...(server.followsUpstreamTasks ? { followsUpstreamTasks: true } : {}),
    ...(server.timeoutMs ? { timeoutMs: server.timeoutMs.bind(server) } : {}),
  };
}
