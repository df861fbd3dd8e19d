/**
 * A remote MCP server on loopback that declares hostile output schemas: written against the wire
 * protocol (Streamable HTTP answering plain JSON) rather than with the SDK's server classes, which
 * would check their own results against those schemas, in the test's process.
 */
import http from 'node:http';
import { listenOnLoopback, type LoopbackServer } from './loopback';

export interface HostileTool {
  name: string;
  outputSchema: Record<string, unknown>;
  structuredContent: Record<string, unknown>;
}

export async function startHostileRemoteMcp(tools: HostileTool[]): Promise<LoopbackServer> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: number | string; method: string; params?: Record<string, unknown> };
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      let result: unknown;
      if (message.method === 'initialize') {
        result = { protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '1.0.0' } };
      } else if (message.method === 'tools/list') {
        result = { tools: tools.map((t) => ({ name: t.name, description: `the ${t.name} tool`, inputSchema: { type: 'object', properties: {} }, outputSchema: t.outputSchema })) };
      } else if (message.method === 'tools/call') {
        const tool = tools.find((t) => t.name === message.params?.name);
        result = { content: [{ type: 'text', text: JSON.stringify(tool?.structuredContent ?? {}) }], structuredContent: tool?.structuredContent ?? {} };
      } else {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'method not found' } }));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    });
  });
  return listenOnLoopback(server);
}
