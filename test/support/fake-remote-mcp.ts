/**
 * Remote MCP servers on loopback, built with the official SDKs' server classes over Streamable
 * HTTP: of the 2025 era (SDK 1.x) a stateless one answering plain JSON and one that hands out an
 * `Mcp-Session-Id` and answers with SSE streams; of the 2026-07-28 era (SDK v2's createMcpHandler,
 * which also answers 2025 clients statelessly) a `modern` one. Every request's headers and
 * JSON-RPC method are recorded, so tests can prove from the remote's side exactly which requests
 * and headers arrived.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { McpServer as McpServerV2, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { listenOnLoopback } from './loopback';

export interface RemoteRequest {
  method: string;
  /** the JSON-RPC method of a POST, when it carried one */
  rpcMethod?: string;
  /** the JSON-RPC params of a POST, when it carried them */
  rpcParams?: Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
}

export interface FakeRemoteMcp {
  url: string;
  requests: RemoteRequest[];
  /** the headers of the last tools/call */
  lastCallHeaders(): http.IncomingHttpHeaders | undefined;
  /** the params of the last tools/call (its `_meta` included) */
  lastCallParams(): Record<string, unknown> | undefined;
  /** sessions handed out (the stateful server only) */
  sessions: Set<string>;
  /** accept requests and never answer them (a remote that hangs) */
  hang: boolean;
  /** the remote ends every session it handed out: a request with one of their ids gets 404 (the stateful server only) */
  expireSessions(): Promise<void>;
  /** how many requests carried this JSON-RPC method */
  count(rpcMethod: string): number;
  close(): Promise<void>;
}

function buildServer(): McpServer {
  const server = new McpServer({ name: 'fake-remote', version: '1.0.0' });
  server.registerTool('add', {
    description: 'Add two numbers.',
    inputSchema: { a: z.number(), b: z.number() },
    outputSchema: { sum: z.number() },
  }, async ({ a, b }) => ({ content: [{ type: 'text', text: JSON.stringify({ sum: a + b }) }], structuredContent: { sum: a + b } }));
  server.registerTool('shout', {
    description: 'Upper-case a text; fails on an empty one.',
    inputSchema: { text: z.string() },
  }, async ({ text }) => (text === ''
    ? { content: [{ type: 'text', text: 'nothing to shout' }], isError: true }
    : { content: [{ type: 'text', text: text.toUpperCase() }] }));
  server.registerTool('count_slowly', {
    description: 'Report progress up to n, then answer n.',
    inputSchema: { n: z.number() },
  }, async ({ n }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= n; i++) {
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: n } });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { content: [{ type: 'text', text: String(n) }] };
  });
  return server;
}

/** The same tools on SDK v2, for the 2026-07-28 era. */
function buildV2Server(): McpServerV2 {
  const server = new McpServerV2({ name: 'fake-remote-2026', version: '1.0.0' });
  server.registerTool('add', {
    description: 'Add two numbers.',
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    outputSchema: z.object({ sum: z.number() }),
  }, async ({ a, b }) => ({ content: [{ type: 'text', text: JSON.stringify({ sum: a + b }) }], structuredContent: { sum: a + b } }));
  server.registerTool('shout', {
    description: 'Upper-case a text; fails on an empty one.',
    inputSchema: z.object({ text: z.string() }),
  }, async ({ text }) => (text === ''
    ? { content: [{ type: 'text', text: 'nothing to shout' }], isError: true }
    : { content: [{ type: 'text', text: text.toUpperCase() }] }));
  return server;
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) as unknown : undefined;
}

function rpcMethodOf(body: unknown): string | undefined {
  const first = Array.isArray(body) ? body[0] : body;
  return typeof first === 'object' && first !== null && 'method' in first && typeof first.method === 'string' ? first.method : undefined;
}

function rpcParamsOf(body: unknown): Record<string, unknown> | undefined {
  const first = Array.isArray(body) ? body[0] : body;
  const params = typeof first === 'object' && first !== null && 'params' in first ? first.params : undefined;
  return typeof params === 'object' && params !== null && !Array.isArray(params) ? params as Record<string, unknown> : undefined;
}

export async function startFakeRemoteMcp(options: { sessions: boolean; modern?: boolean }): Promise<FakeRemoteMcp> {
  const fake: FakeRemoteMcp = {
    url: '', requests: [], sessions: new Set(), hang: false, close: async () => undefined,
    expireSessions: async () => {
      for (const [id, t] of transports) {
        transports.delete(id);
        expired.add(id);
        await t.close().catch(() => undefined);
      }
    },
    count: (rpcMethod) => fake.requests.filter((r) => r.rpcMethod === rpcMethod).length,
    lastCallHeaders: () => [...fake.requests].reverse().find((r) => r.rpcMethod === 'tools/call')?.headers,
    lastCallParams: () => [...fake.requests].reverse().find((r) => r.rpcMethod === 'tools/call')?.rpcParams,
  };
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const expired = new Set<string>();
  const modern = options.modern ? toNodeHandler(createMcpHandler(() => buildV2Server())) : undefined;
  const httpServer = http.createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      fake.requests.push({ method: req.method ?? '', rpcMethod: rpcMethodOf(body), rpcParams: rpcParamsOf(body), headers: { ...req.headers } });
      if (fake.hang) return;
      if (modern) {
        await modern(req, res, body);
        return;
      }
      if (!options.sessions) {
        // stateless: a fresh server and transport per request, JSON answers
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        const server = buildServer();
        res.on('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
        return;
      }
      const sessionId = req.headers['mcp-session-id'];
      let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
      if (!transport) {
        if (typeof sessionId === 'string' && expired.has(sessionId)) {
          // the specification's answer to a session id the server no longer knows
          res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
          return;
        }
        if (rpcMethodOf(body) !== 'initialize') {
          res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no valid session' }, id: null }));
          return;
        }
        // SSE answers (enableJsonResponse off) and a session per initialize
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, created);
            fake.sessions.add(id);
          },
          onsessionclosed: (id) => {
            transports.delete(id);
          },
        });
        await buildServer().connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res, body);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  const listening = await listenOnLoopback(httpServer);
  fake.url = `${listening.url}/mcp`;
  fake.close = async () => {
    for (const t of transports.values()) await t.close().catch(() => undefined);
    await listening.close();
  };
  return fake;
}
