/**
 * The request mix of `npm run bench:memory` (memory-load.ts): what flowgate is given to hold.
 * Workflows of every step kind that runs in the worker (template, code, http, agent with a tool
 * call, approval left waiting, forEach in the run and in child chunks), triggered async and sync,
 * workflow tools called over MCP, approval decisions, status reads and bad input of every kind.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';

export interface Target {
  gateway: string;
  apiKey: string;
  token: string;
  /** the organization's admin token (the fuzz mix's calls to the management API) */
  adminToken?: string;
  triggers: Record<WorkflowName, { triggerId: string; workflowId: string }>;
}

export type WorkflowName = 'hello' | 'fanout' | 'bigFanout' | 'approve' | 'agent' | 'fetch' | 'code';

/** The definitions published before the load (the upstream URL is the loopback server's). */
export function definitions(upstream: string, agentId: string): Record<WorkflowName, unknown> {
  const item = [{ name: 'Item', type: 'template', format: 'plaintext', template: 'item {{item}} of {{inputs.name}}' }];
  return {
    hello: { name: 'hello', inputSchema: { type: 'object', properties: { name: { type: 'string', maxLength: 100 } }, required: ['name'] }, steps: [{ name: 'Hello', type: 'template', template: 'Hello {{inputs.name}}' }] },
    fanout: { name: 'fanout', steps: [{ name: 'Each', type: 'forEach', items: 'inputs.items', concurrency: 4, steps: item }] },
    bigFanout: { name: 'big fanout', steps: [{ name: 'Each', type: 'forEach', items: 'inputs.items', concurrency: 20, steps: item }] },
    approve: { name: 'approve', steps: [{ name: 'Hello', type: 'template', template: 'asking' }, { name: 'Sign-off', type: 'approval', approvers: ['ann@example.com'], timeout: '2h' }] },
    agent: { name: 'agent', steps: [{ name: 'Ask', type: 'agent', agentId, message: 'Greet {{inputs.name}}' }] },
    fetch: { name: 'fetch', steps: [{ name: 'Get', type: 'http', url: `${upstream}/data?n={{inputs.n}}` }, { name: 'Say', type: 'template', template: '{{steps.1.result}}' }] },
    code: { name: 'code', steps: [{ name: 'Sum', type: 'code', source: 'let s = 0; for (let i = 0; i < 20000; i++) s += i; return { s, n: inputs.n };' }] },
  };
}

const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 30_000 });

export interface Outcome {
  kind: string;
  status: number;
  /** the error code of a 5xx answer */
  code?: string;
}

export /** The gateway's error code of a 5xx body (`{error, message}`), to tell them apart in the counts. */
function errorCode(text: string): string | undefined {
  try {
    const body: unknown = JSON.parse(text);
    return typeof body === 'object' && body !== null && 'error' in body && typeof body.error === 'string' ? body.error : undefined;
  } catch {
    return undefined;
  }
}

export async function send(url: string, init: { method?: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<{ status: number; text: string; runId?: string; code?: string }> {
  const res = await request(url, { method: (init.method ?? 'GET') as 'GET', headers: init.headers, body: init.body, dispatcher, headersTimeout: 600_000, bodyTimeout: 600_000 });
  const text = await res.body.text();
  const runId = res.headers['x-pf-run-id'];
  return { status: res.statusCode, text, runId: typeof runId === 'string' ? runId : undefined, code: res.statusCode >= 500 ? errorCode(text) : undefined };
}

/** Runs waiting on an approval (a few are decided as the load goes). */
const waiting: { workflowId: string; runId: string }[] = [];
const recentRuns: { workflowId: string; runId: string }[] = [];

export function pick<T>(weighted: [number, T][]): T {
  const total = weighted.reduce((sum, [w]) => sum + w, 0);
  let r = Math.random() * total;
  for (const [w, value] of weighted) {
    r -= w;
    if (r <= 0) return value;
  }
  return weighted[weighted.length - 1]![1];
}

export const items = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** One request of the mix; answers what was sent and the status it got. */
export async function oneRequest(t: Target): Promise<Outcome> {
  const trigger = async (name: WorkflowName, inputs: unknown, wait = false): Promise<Outcome> => {
    const res = await send(`${t.gateway}/ext/triggers/${t.triggers[name].triggerId}`, {
      method: 'POST', headers: { 'X-API-KEY': t.apiKey, 'Content-Type': 'application/json', ...(wait ? { 'x-api-wait': 'true' } : {}) }, body: JSON.stringify(inputs),
    });
    if (res.runId) {
      const run = { workflowId: t.triggers[name].workflowId, runId: res.runId };
      if (name === 'approve') waiting.push(run);
      else if (recentRuns.push(run) > 200) recentRuns.shift();
    }
    return { kind: `${name}${wait ? ' sync' : ''}`, status: res.status, code: res.code };
  };
  const mcp = async (body: unknown, kind: string): Promise<Outcome> => {
    const res = await send(`${t.gateway}/tools/workflows`, {
      method: 'POST', headers: { Authorization: `Bearer ${t.token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: JSON.stringify(body),
    });
    return { kind, status: res.status, code: res.code };
  };
  const bad = async (): Promise<Outcome> => {
    const hello = t.triggers.hello.triggerId;
    const variant = pick<[string, Record<string, string>, string | Buffer | undefined]>([
      [1, ['schema', { 'X-API-KEY': t.apiKey, 'Content-Type': 'application/json' }, JSON.stringify({ name: 42 })]],
      [1, ['json', { 'X-API-KEY': t.apiKey, 'Content-Type': 'application/json' }, '{"name": "x",']],
      [1, ['key', { 'X-API-KEY': `fgk_${'z'.repeat(43)}`, 'Content-Type': 'application/json' }, '{"name":"x"}']],
      [1, ['bytes', { 'X-API-KEY': t.apiKey, 'Content-Type': 'application/octet-stream' }, Buffer.from(Array.from({ length: 300 }, () => Math.floor(Math.random() * 256)))]],
      [1, ['multipart', { 'X-API-KEY': t.apiKey, 'Content-Type': 'multipart/form-data; boundary=b' }, '--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--b\r\nContent-Disposition: form-data; name="f"; filename="../../x.sh"\r\n\r\n#!/bin/sh\r\n--b--\r\n']],
      [1, ['wait header', { 'X-API-KEY': t.apiKey, 'Content-Type': 'application/json', 'x-api-wait': 'maybe' }, '{"name":"x"}']],
      [1, ['big', { 'X-API-KEY': t.apiKey, 'Content-Type': 'application/json' }, JSON.stringify({ name: 'x'.repeat(200_000) })]],
    ]);
    const path = variant[0] === 'key' && Math.random() < 0.5 ? '/ext/triggers/trg_nosuchtrigger1' : `/ext/triggers/${hello}`;
    const res = await send(`${t.gateway}${path}`, { method: 'POST', headers: variant[1], body: variant[2] });
    return { kind: `bad ${variant[0]}`, status: res.status };
  };
  const decide = async (): Promise<Outcome> => {
    const run = waiting.shift();
    if (!run) return { kind: 'decide (none waiting)', status: 0 };
    const res = await send(`${t.gateway}/ext/webhook/${t.apiKey}/runs/${run.workflowId}/${run.runId}/approval`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decision: Math.random() < 0.5 ? 'approve' : 'reject', approver: 'ann@example.com' }),
    });
    return { kind: 'decide', status: res.status, code: res.code };
  };
  const status = async (): Promise<Outcome> => {
    const run = recentRuns[Math.floor(Math.random() * recentRuns.length)];
    if (!run) return { kind: 'status (none yet)', status: 0 };
    const res = await send(`${t.gateway}/ext/webhook/${t.apiKey}/runs/${run.workflowId}/${run.runId}/status`, {});
    return { kind: 'status', status: res.status };
  };
  const kind = pick<() => Promise<Outcome>>([
    [22, () => trigger('hello', { name: randomUUID() })],
    [4, () => trigger('hello', { name: 'sync' }, true)],
    [8, () => trigger('fanout', { items: items(5 + Math.floor(Math.random() * 40)) })],
    [0.3, () => trigger('bigFanout', { items: items(150 + Math.floor(Math.random() * 200)) })],
    [6, () => trigger('approve', {})],
    [1.5, decide],
    [4, () => trigger('agent', { name: 'Ann' })],
    [5, () => trigger('fetch', { n: Math.floor(Math.random() * 1000) })],
    [3, () => trigger('code', { n: 1 })],
    [6, () => mcp({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'hello', arguments: { name: 'mcp' } } }, 'mcp tools/call')],
    [2, () => mcp({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, 'mcp tools/list')],
    [1, () => mcp({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'hello', arguments: { name: 7 } } }, 'mcp bad arguments')],
    [1, () => mcp('{"jsonrpc":', 'mcp bad json')],
    [15, bad],
    [8, status],
  ]);
  return kind();
}

export function waitingCount(): number {
  return waiting.length;
}
