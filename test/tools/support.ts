/**
 * Helpers for the tool-gateway tests: a whole flowgate with extra per-organization tool servers,
 * a fake SearXNG search API on loopback (its real JSON wire format), and JSON-RPC over real HTTP.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { ServerSource } from '../../src/tools';
import { startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { listenOnLoopback } from '../support/loopback';

/** A whole flowgate (see startTestFlowgate) that also serves an organization's servers from `source`. */
export function startToolFlowgate(env: Record<string, string> = {}, source?: ServerSource): Promise<TestFlowgate> {
  return startTestFlowgate(env, { serverSources: source ? [source] : [] });
}

/** An API key and a runtime token of the instance's default organization, or of `adminToken`'s. */
export async function runtimeToken(fg: TestFlowgate, adminToken = fg.adminToken): Promise<{ token: string; expiresAt: string; apiKey: string; apiKeyId: string }> {
  const created = await fetch(`${fg.url}/api/v1/api-keys`, {
    method: 'POST', headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' }, body: '{"name":"tools"}',
  });
  const key = (await created.json()) as { id: string; key: string };
  const response = await fetch(`${fg.url}/auth/token`, { method: 'POST', headers: { 'X-API-KEY': key.key } });
  if (response.status !== 200) throw new Error(`POST /auth/token answered ${response.status}`);
  const body = (await response.json()) as { token: string; expiresAt: string };
  return { ...body, apiKey: key.key, apiKeyId: key.id };
}

/** A second organization with its own admin token. */
export async function createOrg(fg: TestFlowgate, name = `org-${randomUUID()}`): Promise<{ id: string; adminToken: string }> {
  const { status, body } = await fg.admin<{ id: string; adminToken: string }>('POST', '/api/v1/orgs', { name });
  if (status !== 201) throw new Error(`create org: ${status}`);
  return body;
}

export interface RpcAnswer {
  status: number;
  headers: Headers;
  body: { jsonrpc?: string; id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } } | undefined;
  text: string;
}

export const RPC_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };

/** POSTs a JSON-RPC body (an object, or raw text) to `{base}/<server>`. */
export async function rpc(fg: Pick<TestFlowgate, 'url'>, server: string, token: string | undefined, body: unknown,
  headers: Record<string, string> = RPC_HEADERS, basePath = '/tools'): Promise<RpcAnswer> {
  const response = await fetch(`${fg.url}${basePath}/${server}`, {
    method: 'POST',
    headers: { ...headers, ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) as RpcAnswer['body'] : undefined, text };
}

export const V2026 = '2026-07-28';
export const TASKS_CAPABILITY = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

/** A 2026-era request as a client of that revision sends it, declaring the Tasks extension when `tasks`, to a gateway at `target.url`. */
export function modernRpc(target: Pick<TestFlowgate, 'url'>, server: string, token: string, method: string, params: Record<string, unknown>, name: string | undefined, tasks = true): Promise<RpcAnswer> {
  const body = {
    jsonrpc: '2.0', id: randomUUID(), method,
    params: {
      ...params,
      _meta: { 'io.modelcontextprotocol/protocolVersion': V2026, 'io.modelcontextprotocol/clientCapabilities': tasks ? TASKS_CAPABILITY : {}, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } },
    },
  };
  return rpc(target, server, token, body, { ...RPC_HEADERS, 'MCP-Protocol-Version': V2026, 'Mcp-Method': method, ...(name === undefined ? {} : { 'Mcp-Name': name }) });
}

let nextId = 1;
export async function callTool(fg: TestFlowgate, server: string, token: string, name: string, args: Record<string, unknown> = {}): Promise<RpcAnswer> {
  return rpc(fg, server, token, { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } });
}

export interface FakeSearch {
  url: string;
  requests: URL[];
  /** answer the next requests with this status instead */
  failWith?: number;
  close(): Promise<void>;
}

/** A SearXNG-compatible JSON search API on loopback: `GET /search?q=…&format=json`. */
export async function startFakeSearch(): Promise<FakeSearch> {
  const fake: FakeSearch = { url: '', requests: [], close: async () => undefined };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    fake.requests.push(url);
    if (url.pathname !== '/search' || url.searchParams.get('format') !== 'json') {
      res.writeHead(404).end();
      return;
    }
    if (fake.failWith) {
      res.writeHead(fake.failWith, { 'Content-Type': 'text/html' }).end('<h1>Too Many Requests</h1>');
      return;
    }
    const q = url.searchParams.get('q') ?? '';
    const results = Array.from({ length: 12 }, (_, i) => ({
      url: `https://example.org/${encodeURIComponent(q)}/${i + 1}`, title: `Result ${i + 1} for ${q}`, content: `A page about ${q} (${i + 1})`,
      engine: 'fake', engines: ['fake'], positions: [i + 1], score: 12 - i, category: 'general',
    }));
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ query: q, number_of_results: results.length, results, answers: [], corrections: [], infoboxes: [], suggestions: [`${q} tutorial`], unresponsive_engines: [] }));
  });
  const listening = await listenOnLoopback(server);
  fake.url = `${listening.url}/search`;
  fake.close = listening.close;
  return fake;
}

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: { error?: { code: number; message: string }; result?: unknown } | undefined;
}

/**
 * A POST to the tool gateway over a raw socket, so a test controls what a client may: the declared
 * Content-Length (or none: chunked), and how much of the body it actually sends before waiting.
 */
export function rawPost(fg: TestFlowgate, server: string, token: string, options: { declared?: number; chunks: (string | Buffer)[]; end?: boolean }): {
  answer: Promise<RawAnswer>;
  request: http.ClientRequest;
} {
  const url = new URL(`${fg.url}/tools/${server}`);
  const request = http.request(url, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json',
      ...(options.declared === undefined ? {} : { 'Content-Length': String(options.declared) }),
    },
  });
  const answer = new Promise<RawAnswer>((resolve, reject) => {
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text ? JSON.parse(text) as RawAnswer['body'] : undefined });
      });
    });
    // the server may close after answering while the client still writes: that is not the answer
    request.on('error', (error) => setTimeout(() => reject(error), 2000));
  });
  // the headers leave now, even when no body follows yet
  request.flushHeaders();
  for (const chunk of options.chunks) request.write(chunk);
  if (options.end !== false) request.end();
  return { answer, request };
}
