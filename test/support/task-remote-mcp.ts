/**
 * A remote MCP server of the 2025-11-25 era built on the official SDK (1.x) whose slow tool runs as
 * an MCP task (the SDK's experimental tasks over one shared InMemoryTaskStore), stateless over
 * Streamable HTTP with JSON answers, on loopback:
 *   - `slow` (task support optional): `{ms, tag}`; as a task it answers at once and completes after
 *     `ms` with `{tag, ms}`; it stops early when the task is cancelled;
 *   - `slow_plain` (no task support): the same, answered inline after `ms`.
 * Every JSON-RPC request is recorded with its params (a call's `_meta` included), and every task
 * the SDK cancelled on its store through `tasks/cancel` (with the task's id), so a test proves from
 * the remote's side what it saw.
 */
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { listenOnLoopback } from './loopback';

export interface TaskRemoteRequest {
  rpcMethod: string;
  params: Record<string, unknown>;
}

export interface TaskRemote {
  url: string;
  requests: TaskRemoteRequest[];
  /** the task ids `tasks/cancel` cancelled on the store, in order */
  cancelled: string[];
  /** the tasks created, by task id: the idempotency key of the call that created it */
  created: Map<string, string | undefined>;
  /** the tools/call requests that carried this idempotency key (`_meta["io.flowgate/idempotencyKey"]`) */
  callsWithKey(key: string): number;
  count(rpcMethod: string): number;
  /** the remote stops answering: every request is held open until `close` (a remote that hangs) */
  hang: boolean;
  close(): Promise<void>;
}

const IDEMPOTENCY_META = 'io.flowgate/idempotencyKey';
const POLL_INTERVAL_MS = 200;

function keyOf(params: Record<string, unknown>): string | undefined {
  const meta = params._meta;
  const key = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)[IDEMPOTENCY_META] : undefined;
  return typeof key === 'string' ? key : undefined;
}

/** A store that records the cancellations `tasks/cancel` makes. */
class RecordingStore extends InMemoryTaskStore {
  constructor(private readonly onCancel: (taskId: string) => void) {
    super();
  }

  override async updateTaskStatus(taskId: string, status: Parameters<InMemoryTaskStore['updateTaskStatus']>[1], statusMessage?: string, sessionId?: string): Promise<void> {
    await super.updateTaskStatus(taskId, status, statusMessage, sessionId);
    if (status === 'cancelled') this.onCancel(taskId);
  }
}

export async function startTaskRemote(): Promise<TaskRemote> {
  const remote: TaskRemote = {
    url: '', requests: [], cancelled: [], created: new Map(), hang: false, close: async () => undefined,
    callsWithKey: (key) => remote.requests.filter((r) => r.rpcMethod === 'tools/call' && keyOf(r.params) === key).length,
    count: (rpcMethod) => remote.requests.filter((r) => r.rpcMethod === rpcMethod).length,
  };
  const store = new RecordingStore((taskId) => remote.cancelled.push(taskId));
  const held = new Set<http.ServerResponse>();
  /** the call being answered (each request has its own server), for its key */
  const build = (callKey: string | undefined): McpServer => {
    const server = new McpServer({ name: 'task-remote', version: '1.0.0' }, { capabilities: { tasks: { requests: { tools: { call: {} } }, cancel: {}, list: {} } }, taskStore: store });
    const input = { ms: z.number(), tag: z.string() };
    server.experimental.tasks.registerToolTask('slow', { description: 'Wait ms, then answer the tag (as a task).', inputSchema: input, execution: { taskSupport: 'optional' } }, {
      async createTask({ ms, tag }, { taskStore, taskRequestedTtl }) {
        const task = await taskStore.createTask({ ttl: taskRequestedTtl ?? 600_000, pollInterval: POLL_INTERVAL_MS });
        remote.created.set(task.taskId, callKey);
        void (async () => {
          const ends = Date.now() + ms;
          // the work: it checks for a cancellation as it goes
          while (Date.now() < ends) {
            await new Promise((resolve) => setTimeout(resolve, Math.min(100, ends - Date.now())));
            if ((await store.getTask(task.taskId))?.status === 'cancelled') return;
          }
          await store.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: `${tag} done` }], structuredContent: { tag, ms } }).catch(() => undefined);
        })();
        return { task };
      },
      getTask: async (_args, { taskId, taskStore }) => taskStore.getTask(taskId),
      getTaskResult: async (_args, { taskId, taskStore }) => CallToolResultSchema.parse(await taskStore.getTaskResult(taskId)),
    });
    server.registerTool('slow_plain', { description: 'Wait ms, then answer the tag.', inputSchema: input }, async ({ ms, tag }) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: 'text', text: `${tag} done` }], structuredContent: { tag, ms } };
    });
    return server;
  };
  const httpServer = http.createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      const body: unknown = text ? JSON.parse(text) : undefined;
      const message = typeof body === 'object' && body !== null && !Array.isArray(body) ? body as Record<string, unknown> : {};
      const params = typeof message.params === 'object' && message.params !== null ? message.params as Record<string, unknown> : {};
      if (typeof message.method === 'string') remote.requests.push({ rpcMethod: message.method, params });
      if (remote.hang) {
        held.add(res);
        return;
      }
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      const server = build(message.method === 'tools/call' ? keyOf(params) : undefined);
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  const listening = await listenOnLoopback(httpServer);
  remote.url = `${listening.url}/mcp`;
  remote.close = async () => {
    for (const res of held) res.destroy();
    store.cleanup();
    await listening.close();
  };
  return remote;
}
