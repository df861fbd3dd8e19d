/**
 * One JSON-RPC exchange with a remote MCP server (src/tools/custom/remote-mcp-wire.ts), plain JSON
 * answers, against a raw HTTP server on loopback: the answer to the request's id, a body too
 * large refused before it is all read, and a body cut short reported as an error, never as an answer.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ResponseTooLargeError } from '../../src/net/http-client';
import { exchange, MAX_REMOTE_RESPONSE_BYTES } from '../../src/tools/custom/remote-mcp-wire';

describe('remote MCP wire: plain JSON answers', () => {
  let server: http.Server;
  let url: string;
  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      if (req.url === '/ok') {
        res.writeHead(200, { 'content-type': 'application/json' });
        // in two writes: the body arrives in more than one chunk
        res.write('{"jsonrpc":"2.0","id":7,');
        setTimeout(() => res.end('"result":{"tools":[]}}'), 20);
      } else if (req.url === '/large') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const block = Buffer.alloc(1024 * 1024, 0x20);
        for (let i = 0; i <= MAX_REMOTE_RESPONSE_BYTES / block.length; i++) res.write(block);
        res.end('{}');
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"jsonrpc":"2.0","id":7,"res');
        setTimeout(() => res.destroy(), 20);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const send = (path: string) => exchange({
    url: `${url}${path}`, headers: { 'content-type': 'application/json' }, body: { jsonrpc: '2.0', id: 7, method: 'tools/list' }, id: 7,
    deadline: Date.now() + 10_000, allowPrivateNetwork: true,
  });

  it('reads an answer that arrives in several chunks', async () => {
    const got = await send('/ok');
    assert.equal(got.status, 200);
    assert.deepEqual(got.answer, { id: 7, result: { tools: [] } });
  });

  it(`refuses an answer over ${MAX_REMOTE_RESPONSE_BYTES} bytes`, async () => {
    await assert.rejects(send('/large'), ResponseTooLargeError);
  });

  it('reports an answer cut short as an error', async () => {
    await assert.rejects(send('/cut'), (error: Error) => !(error instanceof ResponseTooLargeError));
  });
});
