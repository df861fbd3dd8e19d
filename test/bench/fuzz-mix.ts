/**
 * The `BENCH_MIX=fuzz` request mix of `npm run bench:memory` (memory-load.ts): what a fuzzer sends
 * to every surface, shaped like the outside 100,000-request fuzz of issue 46: mostly bad input
 * (malformed and oversized bodies, deep JSON, wrong keys and tokens, foreign Origins, unknown IDs and
 * paths, junk OAuth registrations and grants, console posts without a session) on the trigger
 * endpoints, the MCP endpoints, the API, OAuth and the console; and a fifth of valid calls that start
 * runs of every kind (memory-mix.ts), faster than two cores finish them, so a backlog builds up in
 * the worker as it did in that fuzz.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { items, oneRequest, pick, send, type Outcome, type Target } from './memory-mix';

const deep = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
const noise = (n: number): string => randomBytes(n).toString('base64');

/** One request of the fuzz mix; answers what was sent and the status it got. */
export async function oneFuzzRequest(t: Target): Promise<Outcome> {
  const json = { 'Content-Type': 'application/json' };
  const bearer = { Authorization: `Bearer ${t.token}`, ...json, Accept: 'application/json, text/event-stream' };
  const hit = async (kind: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Outcome> => {
    const res = await send(`${t.gateway}${path}`, init);
    return { kind, status: res.status, code: res.code };
  };
  const hello = t.triggers.hello.triggerId;
  const admin = { Authorization: `Bearer ${t.adminToken ?? ''}` };
  const variant = pick<() => Promise<Outcome>>([
    // Valid calls that start runs (about a fifth), the memory mix's own.
    [20, () => oneRequest(t)],
    // Trigger endpoints.
    [6, () => hit('trigger deep json', `/ext/triggers/${hello}`, { method: 'POST', headers: { 'X-API-KEY': t.apiKey, ...json }, body: `{"name":${deep(20_000)}}` })],
    [6, () => hit('trigger wrong type', `/ext/triggers/${hello}`, { method: 'POST', headers: { 'X-API-KEY': t.apiKey, ...json }, body: JSON.stringify({ name: { nested: [1, 2, 3] }, extra: noise(64) }) })],
    [4, () => hit('trigger noise body', `/ext/triggers/${hello}`, { method: 'POST', headers: { 'X-API-KEY': t.apiKey, 'Content-Type': pick([[1, 'application/json'], [1, 'application/x-www-form-urlencoded'], [1, 'text/plain'], [1, 'multipart/form-data; boundary=zz']]) }, body: randomBytes(200 + Math.floor(Math.random() * 4000)) })],
    [4, () => hit('trigger bad key', `/ext/triggers/${hello}`, { method: 'POST', headers: { 'X-API-KEY': `fgk_${noise(30)}`, ...json }, body: '{"name":"x"}' })],
    [3, () => hit('trigger unknown', `/ext/triggers/trg_${noise(12).replace(/[^a-z0-9]/gi, '')}`, { method: 'POST', headers: { 'X-API-KEY': t.apiKey, ...json }, body: '{}' })],
    [3, () => hit('trigger bad wait', `/ext/triggers/${hello}`, { method: 'POST', headers: { 'X-API-KEY': t.apiKey, ...json, 'x-api-wait': noise(6) }, body: '{"name":"x"}' })],
    [2, () => hit('webhook bad key status', `/ext/webhook/${noise(20).replace(/[^a-z0-9]/gi, '')}/runs/wf_x/run_${randomUUID()}/status`)],
    [3, () => hit('status unknown run', `/ext/webhook/${t.apiKey}/runs/${t.triggers.hello.workflowId}/${randomUUID()}/status`)],
    [2, () => hit('approval unknown run', `/ext/webhook/${t.apiKey}/runs/${t.triggers.approve.workflowId}/${randomUUID()}/approval`, { method: 'POST', headers: json, body: JSON.stringify({ decision: 'approve', approver: 'mallory@example.com' }) })],
    // MCP endpoints.
    [4, () => hit('mcp bad origin', '/tools/workflows', { method: 'POST', headers: { ...bearer, Origin: 'http://evil.example' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) })],
    [4, () => hit('mcp unknown method', '/tools/workflows', { method: 'POST', headers: bearer, body: JSON.stringify({ jsonrpc: '2.0', id: noise(8), method: noise(10), params: { x: deep(50) } }) })],
    [3, () => hit('mcp deep params', '/tools/workflows', { method: 'POST', headers: bearer, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":${deep(20_000)}}}` })],
    [3, () => hit('mcp batch', '/tools/workflows', { method: 'POST', headers: bearer, body: JSON.stringify(Array.from({ length: 20 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }))) })],
    [3, () => hit('mcp bad token', `/tools/${pick([[1, 'workflows'], [1, 'mcp'], [1, 'web-search'], [1, noise(6).replace(/[^a-z]/gi, '')]])}`, { method: 'POST', headers: { ...bearer, Authorization: `Bearer ${noise(40)}` }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' })],
    [2, () => hit('mcp tasks/get unknown', '/tools/workflows', { method: 'POST', headers: bearer, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { taskId: `task_${randomUUID()}` } }) })],
    // The API.
    [4, () => hit('api bad token', pick([[1, '/api/v1/workflows'], [1, '/api/v1/runs'], [1, '/api/v1/triggers'], [1, '/api/v1/audit']]), { headers: { Authorization: `Bearer ${noise(32)}` } })],
    [3, () => hit('api bad query', `/api/v1/runs?status=${noise(5)}&limit=${pick([[1, '-1'], [1, '1e9'], [1, 'abc']])}&after=${noise(10)}`, { headers: admin })],
    [3, () => hit('api invalid definition', '/api/v1/workflows', { method: 'POST', headers: { ...admin, ...json }, body: JSON.stringify({ name: noise(4), steps: [{ type: noise(5), name: '' }, { type: 'forEach', items: deep(10), steps: [] }] }) })],
    [2, () => hit('api unknown run', `/api/v1/runs/${randomUUID()}`, { headers: admin })],
    // OAuth and the console.
    [3, () => hit('oauth register junk', '/oauth/register', { method: 'POST', headers: json, body: JSON.stringify({ redirect_uris: [noise(30), 'javascript:alert(1)'], client_name: noise(2000) }) })],
    [2, () => hit('oauth token junk', '/oauth/token', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `grant_type=${pick([[1, 'authorization_code'], [1, 'refresh_token'], [1, noise(6)]])}&code=${noise(20)}&code_verifier=${noise(40)}` })],
    [2, () => hit('console post without session', pick([[1, '/console/workflows'], [1, '/console/sign-in'], [1, `/console/runs/${randomUUID()}/cancel`]]), { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `csrf=${noise(10)}&name=${noise(50)}` })],
    [2, () => hit('unknown path', `/${noise(12).replace(/\//g, '_')}/../..%2f${noise(8).replace(/\//g, '_')}?${'q='.repeat(200)}`)],
    [1, () => hit('fanout too big', `/ext/triggers/${t.triggers.fanout.triggerId}`, { method: 'POST', headers: { 'X-API-KEY': t.apiKey, ...json }, body: JSON.stringify({ items: items(20_000) }) })],
  ]);
  return variant();
}
