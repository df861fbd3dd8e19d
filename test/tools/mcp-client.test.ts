import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestFlowgate } from '../support/flowgate';
import { runtimeToken, startFakeSearch, startToolFlowgate, type FakeSearch } from './support';

/** The official MCP SDK client over Streamable HTTP, with the runtime token as its bearer header. */
async function connect(fg: TestFlowgate, server: string, token: string): Promise<Client> {
  const client = new Client({ name: 'flowgate-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${fg.url}/tools/${server}`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

describe('tool gateway with the official MCP SDK client', () => {
  let fg: TestFlowgate;
  let search: FakeSearch;
  let token: string;
  before(async () => {
    search = await startFakeSearch();
    fg = await startToolFlowgate({ FLOWGATE_SEARCH_URL: search.url });
    token = (await runtimeToken(fg)).token;
  });
  after(async () => {
    await fg?.stop();
    await search?.close();
  });

  it('initializes, lists and calls search on /tools/web-search', async () => {
    const client = await connect(fg, 'web-search', token);
    try {
      assert.equal(client.getServerVersion()?.name, 'flowgate/web-search');
      assert.ok(client.getServerCapabilities()?.tools);
      await client.ping();
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['search']);
      const result = await client.callTool({ name: 'search', arguments: { query: 'durable execution', limit: 2 } });
      assert.equal(result.isError, false);
      const structured = result.structuredContent as { results: { url: string }[] };
      assert.equal(structured.results.length, 2);
      const content = result.content as { type: string; text: string }[];
      assert.deepEqual(JSON.parse(content[0]?.text ?? ''), structured);
    } finally {
      await client.close();
    }
  });

  it('initializes, lists and calls listServers and capabilities_discover on /tools/mcp', async () => {
    const client = await connect(fg, 'mcp', token);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['capabilities_discover', 'capability_details', 'listServers']);
      const servers = await client.callTool({ name: 'listServers', arguments: {} });
      assert.ok((servers.structuredContent as { servers: { name: string }[] }).servers.some((s) => s.name === 'web-search'));
      const found = await client.callTool({ name: 'capabilities_discover', arguments: { task: 'look up something on the internet' } });
      assert.equal((found.structuredContent as { tools: { server: string }[] }).tools[0]?.server, 'web-search');
    } finally {
      await client.close();
    }
  });

  it('surfaces a protocol error from a call with invalid arguments as an McpError with code -32000', async () => {
    const client = await connect(fg, 'web-search', token);
    try {
      await assert.rejects(client.callTool({ name: 'search', arguments: { limit: 3 } }), (error: { code?: number }) => error.code === -32000);
    } finally {
      await client.close();
    }
  });

  it('fails to connect without a valid token', async () => {
    const client = new Client({ name: 'flowgate-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${fg.url}/tools/web-search`), { requestInit: { headers: { Authorization: 'Bearer fgr_bad.token' } } });
    await assert.rejects(client.connect(transport), /401|nauthorized/);
  });
});
