/**
 * A remote MCP server of the 2026-07-28 era on loopback, written by hand (no SDK) so that a test
 * scripts exactly what it answers: its tools (schemas with `x-mcp-header` declarations, valid or
 * not), the cache hints of its tools/list (`ttlMs`, `cacheScope`), and per tool a handler that may
 * answer `input_required` (Multi Round-Trip Requests) or an error, or which runs as a task of the
 * Tasks extension (`taskMs`: tasks/get, tasks/cancel). Stateless, one JSON answer per POST,
 * `server/discover` offering 2026-07-28 only. Every request's headers and JSON-RPC params are
 * recorded, so a test proves from the remote's side which `Mcp-Param-*` headers arrived.
 */
import http from 'node:http';
import { listenOnLoopback } from './loopback';

export interface ScriptedRequest {
  rpcMethod: string;
  params: Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
}

/** What a tool handler answers: a result (its fields as given), or a JSON-RPC error. */
export type ScriptedAnswer = { result: Record<string, unknown> } | { error: { code: number; message: string }; status?: number };

export interface ScriptedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  /** the call's params (arguments, inputResponses, requestState, _meta) and headers; default: echo the arguments */
  answer?(params: Record<string, unknown>, headers: http.IncomingHttpHeaders): ScriptedAnswer;
  /**
   * Runs as a task (the Tasks extension, `io.modelcontextprotocol/tasks`) when the call's client
   * capabilities declare it: answered at once with the task, which ends after this many ms with
   * what `answer` answers (tasks/get then carries it inline), unless tasks/cancel cancels it first.
   */
  taskMs?: number;
}

/** A task the remote runs: its status and, once completed, its result. */
export interface ScriptedTask {
  status: 'working' | 'completed' | 'failed' | 'cancelled';
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

export interface ScriptedRemote {
  url: string;
  requests: ScriptedRequest[];
  /** the tools tools/list answers (replace to change the remote's list) */
  tools: ScriptedTool[];
  /** cache hints tools/list carries; none when undefined */
  listHints?: { ttlMs?: number; cacheScope?: string };
  /** the tools/call requests that reached the remote */
  calls(): ScriptedRequest[];
  /** answers a request first when it answers something (a test's one-off failure); undefined: the remote's usual answer */
  override?(rpcMethod: string, params: Record<string, unknown>): ScriptedAnswer | undefined;
  /** the tasks it runs, by task id */
  tasks: Map<string, ScriptedTask>;
  /** the task ids tasks/cancel cancelled, in order */
  cancelled: string[];
  count(rpcMethod: string): number;
  close(): Promise<void>;
}

const echo = (params: Record<string, unknown>): ScriptedAnswer => ({
  result: { content: [{ type: 'text', text: JSON.stringify(params.arguments ?? {}) }], structuredContent: { echoed: params.arguments ?? {} } },
});

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
}

function answer(res: http.ServerResponse, id: unknown, reply: ScriptedAnswer): void {
  const status = 'error' in reply ? reply.status ?? 200 : 200;
  const body = 'error' in reply ? { jsonrpc: '2.0', id, error: reply.error } : { jsonrpc: '2.0', id, result: reply.result };
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

function declaresTasks(params: Record<string, unknown>): boolean {
  const meta = params._meta as Record<string, unknown> | undefined;
  const capabilities = meta?.['io.modelcontextprotocol/clientCapabilities'] as { extensions?: Record<string, unknown> } | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** The Tasks extension's answers: a task-capable call from a client that declares it, and tasks/get and tasks/cancel; undefined for anything else. */
function taskAnswer(remote: ScriptedRemote, method: string, params: Record<string, unknown>, headers: http.IncomingHttpHeaders): ScriptedAnswer | undefined {
  if (!declaresTasks(params)) {
    return method === 'tools/call' ? undefined : { error: { code: -32021, message: `${method} needs the ${TASKS_EXTENSION} extension` }, status: 400 };
  }
  if (method === 'tools/call') {
    const tool = remote.tools.find((t) => t.name === params.name);
    if (tool?.taskMs === undefined) return undefined;
    const taskId = `rtask-${remote.tasks.size + 1}-${Date.now()}`;
    const task: ScriptedTask = { status: 'working' };
    remote.tasks.set(taskId, task);
    setTimeout(() => {
      if (task.status !== 'working') return;
      const reply = (tool.answer ?? echo)(params, headers);
      if ('result' in reply) Object.assign(task, { status: 'completed', result: { resultType: 'complete', ...reply.result } });
      else Object.assign(task, { status: 'failed', error: reply.error });
    }, tool.taskMs);
    return { result: { resultType: 'task', taskId, status: 'working', ttlMs: 600_000, pollIntervalMs: 100, createdAt: new Date().toISOString() } };
  }
  const taskId = String(params.taskId);
  const task = remote.tasks.get(taskId);
  if (!task) return { error: { code: -32602, message: `unknown task ${taskId}` } };
  if (method === 'tasks/cancel') {
    if (task.status === 'working') task.status = 'cancelled';
    remote.cancelled.push(taskId);
    return { result: {} };
  }
  if (method === 'tasks/get') {
    return { result: { taskId, status: task.status, pollIntervalMs: 100, ...(task.result ? { result: task.result } : {}), ...(task.error ? { error: task.error } : {}) } };
  }
  return { error: { code: -32601, message: `method not found: ${method}` }, status: 404 };
}

export async function startScriptedRemote(tools: ScriptedTool[]): Promise<ScriptedRemote> {
  const remote: ScriptedRemote = {
    url: '', requests: [], tools, tasks: new Map(), cancelled: [], close: async () => undefined,
    calls: () => remote.requests.filter((r) => r.rpcMethod === 'tools/call'),
    count: (rpcMethod) => remote.requests.filter((r) => r.rpcMethod === rpcMethod).length,
  };
  const server = http.createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const body = await readJson(req);
      const method = String(body.method);
      const params = typeof body.params === 'object' && body.params !== null ? body.params as Record<string, unknown> : {};
      remote.requests.push({ rpcMethod: method, params, headers: { ...req.headers } });
      if (body.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      if (method === 'server/discover') {
        answer(res, body.id, { result: { resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, serverInfo: { name: 'scripted', version: '1.0.0' } } });
        return;
      }
      if (method === 'tools/list') {
        const listed = remote.tools.map(({ name, description, inputSchema }) => ({ name, description: description ?? name, inputSchema }));
        answer(res, body.id, { result: { resultType: 'complete', tools: listed, ...remote.listHints } });
        return;
      }
      const overridden = remote.override?.(method, params);
      if (overridden) {
        answer(res, body.id, overridden);
        return;
      }
      if (method === 'tools/call' || method.startsWith('tasks/')) {
        const tasked = taskAnswer(remote, method, params, req.headers);
        if (tasked) {
          answer(res, body.id, tasked);
          return;
        }
      }
      if (method === 'tools/call') {
        const tool = remote.tools.find((t) => t.name === params.name);
        const reply = tool ? (tool.answer ?? echo)(params, req.headers) : { error: { code: -32602, message: `unknown tool ${String(params.name)}` } };
        answer(res, body.id, 'result' in reply ? { result: { resultType: 'complete', ...reply.result } } : reply);
        return;
      }
      answer(res, body.id, { error: { code: -32601, message: `method not found: ${method}` }, status: 404 });
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  const listening = await listenOnLoopback(server);
  remote.url = `${listening.url}/mcp`;
  remote.close = () => listening.close();
  return remote;
}
