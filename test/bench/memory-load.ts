/**
 * `npm run bench:memory`: a large mixed load on flowgate as it ships (`node dist/src/main.js`,
 * the gateway and the worker as separate processes through FLOWGATE_ROLE, a PostgreSQL registry,
 * the embedded dev server), then the worker's and the gateway's memory. The mix is in
 * memory-mix.ts: every step kind, forEach in the run and in chunks, agents with a tool call,
 * approvals left waiting (the backlog), workflow tools over MCP, bad input of every kind.
 *
 * Prints RSS of the worker, the gateway and Temporal every BENCH_SAMPLE_SECONDS (10) with the
 * open runs, then at the end of the load and after BENCH_SETTLE_SECONDS (120) more.
 *
 * Knobs: BENCH_REQUESTS (100000), BENCH_CALLERS (32), BENCH_MIX (`runs`: memory-mix.ts; `fuzz`:
 * fuzz-mix.ts, mostly bad input on every surface and a fifth of run starts), BENCH_ROLES (`split`, or `all`: one process
 * with both, as `npm start`), BENCH_HEAP_DIR (a directory: the worker loads heap-hook.ts, which
 * writes its thread-by-thread heap figures there every 5 s, and heap snapshots of the worker are
 * taken at the end of the load and after the settle), and any FLOWGATE_* variable, passed on
 * to flowgate (FLOWGATE_WORKER_MEMORY_MB, FLOWGATE_WORKER_CACHED_WORKFLOWS, …).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../../src/config/config';
import { startEmbeddedTemporal } from '../../temporal/embedded';
import { freeTemporalPort } from '../../temporal/ports';
import { allPorts, internalPorts } from '../../temporal/server-config';
import { ensureTemporalServer } from '../../temporal/server-binaries';
import { startFakeLlm, type ChatRequest, type FakeReply } from '../support/fake-llm';
import { listenOnLoopback } from '../support/loopback';
import { freshPostgresSchema, replicaSecrets, startReplica, type Replica } from '../support/replicas';
import { requestHeapSnapshots } from './heap-request';
import { oneFuzzRequest } from './fuzz-mix';
import { definitions, oneRequest, waitingCount, type Target, type WorkflowName } from './memory-mix';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100_000);
const CALLERS = Number(process.env.BENCH_CALLERS ?? 32);
const SAMPLE_MS = Number(process.env.BENCH_SAMPLE_SECONDS ?? 10) * 1000;
const SETTLE_MS = Number(process.env.BENCH_SETTLE_SECONDS ?? 120) * 1000;
const ROLES = process.env.BENCH_ROLES ?? 'split';
const HEAP_DIR = process.env.BENCH_HEAP_DIR;
const MIX = process.env.BENCH_MIX ?? 'runs';
if (MIX !== 'runs' && MIX !== 'fuzz') throw new Error(`BENCH_MIX is "runs" or "fuzz", not "${MIX}"`);
const next = MIX === 'fuzz' ? oneFuzzRequest : oneRequest;

function rssMiB(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

/** The model: a tool call to the `hello` workflow tool first, then an answer. */
function modelReply(body: ChatRequest): FakeReply {
  const answered = body.messages.some((m) => m.role === 'tool');
  const tool = body.tools?.find((t) => t.function.name.includes('hello'));
  if (!answered && tool) return { toolCalls: [{ name: tool.function.name, arguments: { inputs: { name: 'agent' } } }] };
  return { content: 'Hello from the model.' };
}

async function main(): Promise<void> {
  const passed = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith('FLOWGATE_') && e[1] !== undefined));
  console.log(`bench:memory  requests=${REQUESTS} callers=${CALLERS} mix=${MIX} roles=${ROLES} node ${process.version} cpus=${os.cpus().length} load=${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`  flowgate settings given: ${JSON.stringify(passed)}`);
  const config = loadConfig({ ...process.env, FLOWGATE_DATA_DIR: os.tmpdir() });
  const dbDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-bench-memory-'));
  const temporal = await startEmbeddedTemporal({
    binaries: await ensureTemporalServer(config.temporal), port: await freeTemporalPort((p) => allPorts(internalPorts(p))), namespace: 'default',
    persistence: { kind: 'sqlite', file: path.join(dbDir, 'temporal.sqlite') },
  });
  const llm = await startFakeLlm();
  llm.fallback = modelReply;
  const upstream = await listenOnLoopback(http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ path: req.url, at: Date.now(), pad: 'x'.repeat(512) }));
  }));
  const schema = await freshPostgresSchema('bench_memory_');
  const replicas: Replica[] = [];
  try {
    const env: Record<string, string> = {
      ...replicaSecrets(), ...passed, TEMPORAL_ADDRESS: temporal.address, FLOWGATE_TASK_QUEUE: 'flowgate-bench-memory', DATABASE_URL: schema.url,
      FLOWGATE_LLM_BASE_URL: llm.baseUrl, FLOWGATE_LLM_MODEL: 'fake-model', FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true',
      FLOWGATE_RATE_LIMIT_PER_MINUTE: '0', FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS: '0',
    };
    const hook: Record<string, string> = HEAP_DIR ? { BENCH_HEAP_DIR: HEAP_DIR, NODE_OPTIONS: `--require ${path.join(__dirname, 'heap-hook.js')}` } : {};
    const gateway = await startReplica(ROLES === 'all' ? 'all' : 'gateway', env);
    replicas.push(gateway);
    const worker = ROLES === 'all' ? gateway : await startReplica('worker', { ...env, ...hook });
    if (worker !== gateway) replicas.push(worker);
    const url = gateway.url ?? '';
    const admin = async <T>(method: string, pathname: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${url}${pathname}`, { method, headers: { Authorization: `Bearer ${env.FLOWGATE_ADMIN_TOKEN}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
      return JSON.parse(text) as T;
    };
    const publish = async (definition: unknown, tool?: string): Promise<{ triggerId: string; workflowId: string }> => {
      const wf = await admin<{ id: string }>('POST', '/api/v1/workflows', definition);
      await admin('POST', `/api/v1/workflows/${wf.id}/publish`);
      const trigger = await admin<{ id: string }>('POST', '/api/v1/triggers', { workflowId: wf.id, ...(tool ? { tool: { name: tool, description: 'Says hello.' } } : {}) });
      return { triggerId: trigger.id, workflowId: wf.id };
    };
    const hello = await publish(definitions('', '').hello, 'hello');
    const agent = await admin<{ id: string }>('POST', '/api/v1/agents', { name: 'greeter', instructions: 'Greet.', workflows: [{ triggerId: hello.triggerId, toolName: 'hello' }] });
    const defs = definitions(upstream.url, agent.id);
    const triggers = { hello } as Record<WorkflowName, { triggerId: string; workflowId: string }>;
    for (const name of Object.keys(defs) as WorkflowName[]) if (name !== 'hello') triggers[name] = await publish(defs[name]);
    const { key } = await admin<{ key: string }>('POST', '/api/v1/api-keys', { name: 'bench' });
    const { token } = (await (await fetch(`${url}/auth/token`, { method: 'POST', headers: { 'X-API-KEY': key } })).json()) as { token: string };
    const target: Target = { gateway: url, apiKey: key, token, adminToken: env.FLOWGATE_ADMIN_TOKEN, triggers };
    const client = new Client({ connection: await Connection.connect({ address: temporal.address }), namespace: 'default' });

    const pids = { worker: worker.child.process.pid, gateway: gateway.child.process.pid, temporal: temporal.pid() };
    const sample = async (label: string): Promise<void> => {
      const open = await client.workflow.count(`ExecutionStatus = 'Running'`).then((c) => c.count, () => NaN);
      console.log(`${label.padEnd(22)} worker ${rssMiB(pids.worker).toFixed(0).padStart(5)} MiB  gateway ${rssMiB(pids.gateway).toFixed(0).padStart(5)} MiB  temporal ${rssMiB(pids.temporal).toFixed(0).padStart(5)} MiB  open runs ${open}  approvals waiting ${waitingCount()}`);
    };
    const snapshot = async (label: string): Promise<void> => {
      if (!HEAP_DIR || pids.worker === undefined) return;
      await requestHeapSnapshots(pids.worker, HEAP_DIR);
      console.log(`  heap snapshots of the worker (${label}) in ${HEAP_DIR}`);
    };

    await sample('start');
    const counts = new Map<string, number>();
    let sent = 0;
    let errors = 0;
    const started = Date.now();
    const timer = setInterval(() => void sample(`${((Date.now() - started) / 1000).toFixed(0)} s, ${sent} sent`), SAMPLE_MS);
    await Promise.all(Array.from({ length: CALLERS }, async () => {
      while (sent < REQUESTS) {
        sent++;
        try {
          const outcome = await next(target);
          const label = `${outcome.kind} ${outcome.status}${outcome.code ? ` ${outcome.code}` : ''}`;
          counts.set(label, (counts.get(label) ?? 0) + 1);
        } catch (err) {
          errors++;
          if (errors <= 5) console.log(`  request failed: ${err instanceof Error ? err.message : String(err)}`);
        }
        if (llm.requests.length > 1000) llm.requests.length = 0;
      }
    }));
    clearInterval(timer);
    const seconds = (Date.now() - started) / 1000;
    console.log(`load done: ${sent} requests in ${seconds.toFixed(0)} s (${(sent / seconds).toFixed(0)}/s), ${errors} transport errors`);
    for (const [label, n] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(6)}  ${label}`);
    await sample('end of load');
    await snapshot('end of load');
    const settleUntil = Date.now() + SETTLE_MS;
    while (Date.now() < settleUntil) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(SAMPLE_MS, settleUntil - Date.now())));
      await sample(`settle +${((SETTLE_MS - (settleUntil - Date.now())) / 1000).toFixed(0)} s`);
    }
    await snapshot('after the settle');
    await sample('final');
  } finally {
    for (const replica of replicas.reverse()) await replica.stop();
    await schema.drop();
    await llm.close();
    await upstream.close();
    await temporal.stop();
    rmSync(dbDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
