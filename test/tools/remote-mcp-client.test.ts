/**
 * flowgate's client of remote MCP servers (src/tools/custom/remote-mcp.ts) against real SDK
 * servers on loopback that count what reaches them: one request per call to a 2026-07-28 remote,
 * one handshake for many calls to a 2025 remote (and one more after it ends the session),
 * per-call headers on every request of a shared session, progress read from a stream as it arrives,
 * and the `Mcp-Param-*` headers of a 2026 call from the schema its caller hands over.
 */
import assert from 'node:assert/strict';
import { RemoteMcpClient, type RemoteTarget } from '../../src/tools/custom/remote-mcp';
import { startFakeRemoteMcp, type FakeRemoteMcp } from '../support/fake-remote-mcp';
import { startScriptedRemote } from '../support/scripted-remote-mcp';

const target = (url: string, headers: Record<string, string> = {}): RemoteTarget => ({ url, credential: { headers, query: {} }, allowPrivateNetwork: true });
const options = (forward: Record<string, string> = {}, onMessage?: (m: Record<string, unknown>) => void) => ({
  forward, signal: AbortSignal.timeout(10_000), deadline: Date.now() + 10_000, ...(onMessage ? { onMessage } : {}),
});
const add = (client: RemoteMcpClient, to: RemoteTarget, a: number, forward: Record<string, string> = {}) => client.request(to, 'tools/call', { name: 'add', arguments: { a, b: 1 } }, options(forward));

describe('remote MCP client: one round trip per call', () => {
  const fakes: FakeRemoteMcp[] = [];
  const start = async (o: { sessions: boolean; modern?: boolean }): Promise<FakeRemoteMcp> => {
    const fake = await startFakeRemoteMcp(o);
    fakes.push(fake);
    return fake;
  };
  after(async () => {
    for (const fake of fakes) await fake.close();
  });

  it('a 2026-07-28 remote: discovered once, then exactly one request per call, stateless, with the era\'s _meta and headers', async () => {
    const remote = await start({ sessions: false, modern: true });
    const client = new RemoteMcpClient();
    const to = target(remote.url, { authorization: 'Bearer stored' });
    const first = await add(client, to, 1);
    assert.deepEqual(first.structuredContent, { sum: 2 });
    assert.deepEqual(remote.requests.map((r) => r.rpcMethod), ['server/discover', 'tools/call'], 'one probe, then the call');
    remote.requests.length = 0;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => add(client, to, i, { 'x-tenant': `t${i}` })));
    assert.deepEqual(answers.map((a) => a.structuredContent), Array.from({ length: 20 }, (_, i) => ({ sum: i + 1 })));
    assert.equal(remote.requests.length, 20, 'exactly one request per call');
    assert.ok(remote.requests.every((r) => r.rpcMethod === 'tools/call' && r.headers['mcp-session-id'] === undefined && r.headers['mcp-method'] === 'tools/call' && r.headers['mcp-name'] === 'add'));
    assert.ok(remote.requests.every((r) => r.headers['mcp-protocol-version'] === '2026-07-28' && r.headers.authorization === 'Bearer stored'));
    assert.deepEqual(remote.requests.map((r) => r.headers['x-tenant']).sort(), Array.from({ length: 20 }, (_, i) => `t${i}`).sort(), 'each call\'s own forwarded header');
    const meta = remote.requests[0]?.rpcParams?._meta as Record<string, unknown>;
    assert.equal(meta['io.modelcontextprotocol/protocolVersion'], '2026-07-28');
    assert.deepEqual(meta['io.modelcontextprotocol/clientInfo'], { name: 'flowgate', version: '1.0.0' });
    assert.deepEqual(meta['io.modelcontextprotocol/clientCapabilities'], {});
    const listed = await client.request(to, 'tools/list', {}, options());
    assert.deepEqual((listed.tools as { name: string }[]).map((t) => t.name), ['add', 'shout']);
  });

  it('a 2026 call carries the Mcp-Param headers of the schema its caller gives (asked for only then), and no forwarded header of those names', async () => {
    const inputSchema = { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, n: { type: 'integer', 'x-mcp-header': 'N' } } };
    const remote = await startScriptedRemote([{ name: 'route', inputSchema }]);
    try {
      const client = new RemoteMcpClient();
      let asked = 0;
      const toolSchema = async () => {
        asked++;
        return inputSchema;
      };
      const forward = { 'mcp-param-region': 'forged', 'mcp-param-other': 'forged', 'mcp-method': 'forged', 'x-tenant': 't1' };
      await client.request(target(remote.url), 'tools/call', { name: 'route', arguments: { region: 'Genève', n: 3 } }, { ...options(forward), toolSchema });
      const seen = remote.calls().at(-1)?.headers ?? {};
      assert.deepEqual([seen['mcp-param-region'], seen['mcp-param-n'], seen['mcp-param-other'], seen['mcp-method'], seen['x-tenant']],
        [`=?base64?${Buffer.from('Genève').toString('base64')}?=`, '3', undefined, 'tools/call', 't1']);
      await client.request(target(remote.url), 'tools/list', {}, { ...options(forward), toolSchema });
      assert.equal(asked, 1, 'the schema is asked for on a tools/call only');
      assert.equal(remote.requests.at(-1)?.headers['mcp-param-region'], undefined, 'no forwarded Mcp-Param header on other requests either');

      const legacy = await start({ sessions: false });
      await client.request(target(legacy.url), 'tools/call', { name: 'add', arguments: { a: 1, b: 2 } }, { ...options(forward), toolSchema });
      assert.equal(asked, 1, 'a 2025 remote: no schema asked for');
      assert.deepEqual(Object.keys(legacy.lastCallHeaders() ?? {}).filter((n) => n.startsWith('mcp-param-') || n === 'mcp-method'), []);
    } finally {
      await remote.close();
    }
  });

  it('a 2025 remote with sessions: 100 calls (50 at once) cost one initialize, one more after the remote ends the session, each call retried once', async () => {
    const remote = await start({ sessions: true });
    const client = new RemoteMcpClient();
    const to = target(remote.url, { authorization: 'Bearer stored' });
    const concurrent = await Promise.all(Array.from({ length: 50 }, (_, i) => add(client, to, i, { 'x-tenant': `c${i}` })));
    assert.equal(concurrent.length, 50);
    for (let i = 0; i < 30; i++) await add(client, to, i);
    assert.equal(remote.count('server/discover'), 1, 'the era is discovered once');
    assert.equal(remote.count('initialize'), 1, 'one handshake shared by 50 concurrent calls (no thundering herd)');
    assert.equal(remote.count('notifications/initialized'), 1);
    assert.equal(remote.sessions.size, 1);
    const calls = remote.requests.filter((r) => r.rpcMethod === 'tools/call');
    assert.ok(calls.every((r) => r.headers['mcp-session-id'] === [...remote.sessions][0] && r.headers.authorization === 'Bearer stored'));
    assert.equal(calls.filter((r) => String(r.headers['x-tenant']).startsWith('c')).length, 50, 'per-call headers on each call of the shared session');
    assert.equal(remote.requests.find((r) => r.rpcMethod === 'initialize')?.headers['x-tenant'], undefined, 'the shared handshake carries no caller\'s headers');

    await remote.expireSessions();
    const after = await Promise.all(Array.from({ length: 20 }, (_, i) => add(client, to, i)));
    assert.deepEqual(after.map((a) => a.structuredContent), Array.from({ length: 20 }, (_, i) => ({ sum: i + 1 })), 'every call answered after the re-initialize');
    assert.equal(remote.count('initialize'), 2, 'one more handshake after the session ended, not one per call');
    assert.equal(remote.count('tools/call'), 80 + 20 + 20, 'the 20 calls that met the ended session were each sent once more');
    const second = [...remote.sessions][1];
    assert.equal(remote.requests.filter((r) => r.rpcMethod === 'tools/call' && r.headers['mcp-session-id'] === second).length, 20);
  });

  it('a stateless 2025 remote: one initialize, then one request per call; another credential gets its own session', async () => {
    const remote = await start({ sessions: false });
    const client = new RemoteMcpClient();
    for (let i = 0; i < 10; i++) await add(client, target(remote.url, { authorization: 'Bearer one' }), i);
    await add(client, target(remote.url, { authorization: 'Bearer two' }), 1);
    assert.equal(remote.count('server/discover'), 1, 'the era is the remote\'s, whoever asks');
    assert.equal(remote.count('initialize'), 2, 'one handshake per credential');
    assert.equal(remote.count('tools/call'), 11);
  });

  it('reads a streamed answer as it arrives: progress notifications before the result', async () => {
    const remote = await start({ sessions: true });
    const client = new RemoteMcpClient();
    const seen: { progress: unknown; at: number }[] = [];
    const started = Date.now();
    const result = await client.request(target(remote.url), 'tools/call', { name: 'count_slowly', arguments: { n: 5 }, _meta: { progressToken: 1 } },
      options({}, (m) => seen.push({ progress: (m.params as { progress: unknown }).progress, at: Date.now() - started })));
    const total = Date.now() - started;
    assert.deepEqual(result.content, [{ type: 'text', text: '5' }]);
    assert.deepEqual(seen.map((s) => s.progress), [1, 2, 3, 4, 5]);
    assert.ok((seen[0]?.at ?? Infinity) < total - 50, `the first progress arrived before the answer (${seen[0]?.at} vs ${total} ms)`);
  });

  it('an unreachable remote fails the call and is asked again next time (no era remembered)', async () => {
    const remote = await start({ sessions: false, modern: true });
    const url = remote.url;
    await remote.close();
    const client = new RemoteMcpClient();
    await assert.rejects(add(client, target(url), 1), /ECONNREFUSED|connect/);
    await assert.rejects(add(client, target(url), 1), /ECONNREFUSED|connect/);
  });
});
