/**
 * `npm run bench:compare`: flowgate side by side with raw Temporal on one dev server.
 *
 * Three processes besides the dev server: this one (the load generator and the raw Temporal
 * client), a flowgate child (gateway and worker, as `npm start` runs them, SQLite registry) and a
 * raw child (a Temporal worker doing the same one-step job, a bare Koa JSON-RPC route, at `/mcp`
 * a remote MCP server on the official SDK v2, which flowgate proxies as a custom server, and at
 * `/mcp-minimal` one that does next to nothing, to tell flowgate's own proxy cost apart, and at
 * `/openapi/echo` a customer API that answers at once, which flowgate calls through a generated
 * (OpenAPI) server, plain and durable: the price of durability, and the plain proxy's cost against
 * calling the API directly, issue 50). Every
 * scenario runs both sides in interleaved rounds (the order alternates per round) as a closed loop:
 * each of N callers makes its calls back to back. Prints per round and, at the end, the median
 * ratio (flowgate rate / raw rate) with each side's p50/p99. Asserts nothing: the targets of
 * issue 13 are printed next to the ratios. Beside each rate it prints the CPU time each process
 * spent per call (µs): on a shared machine wall-clock ratios move with the neighbours' load, CPU
 * per call much less. `gen` is this process (the load generator, and the raw Temporal client
 * during the raw side's turn), `fg` the flowgate process, `raw` the raw worker and bare Koa
 * process, `tmp` the dev server.
 *
 * Knobs: BENCH_ROUNDS (3), BENCH_SCALE (1: multiplies every call count), BENCH_PAUSED (1000),
 * BENCH_ONLY (one scenario's whole name, or words of the scenario names, comma-separated: run only those; `paused`: only the paused-run memory), BENCH_WARMUP_SECONDS (3: each side
 * of each scenario runs unmeasured that long first), BENCH_CPU_PROF (a directory: the flowgate process writes a
 * --cpu-prof profile there), BENCH_HTTP_CLIENT (raw or undici: the generator's HTTP client, see call()).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import Koa from 'koa';
import { Agent, request } from 'undici';
import { z } from 'zod';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { loadConfig } from '../../src/config/config';
import { silentLogger } from '../../src/observability/logger';
import { startFlowgate } from '../../src/app/start';
import type { ToolServer } from '../../src/tools';
import { SEARCH_ATTRIBUTES } from '../../src/common/search-attributes';
import { defineTool, toolServer } from '../../src/tools/define-tool';
import { startEmbeddedTemporal } from '../../temporal/embedded';
import { freePort, freeTemporalPort } from '../../temporal/ports';
import { allPorts, internalPorts } from '../../temporal/server-config';
import { ensureTemporalServer } from '../../temporal/server-binaries';
import { requestHeapSnapshots } from './heap-request';
import { RawHttpClient } from './raw-http';
import { quiet, settledMemory, settleHeaps, type SettledMemory } from './settled-memory';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3) * 1000;
const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const PAUSED = Number(process.env.BENCH_PAUSED ?? 1000);
/**
 * The sticky cache of the workers in the paused-run scenario (BENCH_CACHED_WORKFLOWS). Unset (the
 * target): each worker at its own default, as an operator gets it: flowgate's memory plan
 * (FLOWGATE_WORKER_MEMORY_MB, 345 runs at its default 768) and the SDK's (it grows with the heap
 * limit: every one of the paused runs at V8's default limit here). A number: that cache on both
 * sides, which measures what one cached run costs on each (information: flowgate's cached run holds
 * more than the raw worker's bare `condition`; docs/benchmarks.md).
 */
const CACHED = process.env.BENCH_CACHED_WORKFLOWS === undefined ? undefined : Number(process.env.BENCH_CACHED_WORKFLOWS);
/** How long each open-loop measurement offers its rate (BENCH_OPEN_LOOP_SECONDS). */
const OPEN_LOOP_SECONDS = Number(process.env.BENCH_OPEN_LOOP_SECONDS ?? 10);
const ADMIN = 'fga_bench_compare_0123456789';
const RAW_QUEUE = 'raw-bench';
const NAMESPACE = 'default';

/** A child's hello: its URL, its pid, its worker's sticky cache size and task queue (the paused-run scenario waits on both). */
const HelloSchema = z.object({ url: z.string(), pid: z.number(), cachedWorkflows: z.number(), taskQueue: z.string() });
const CpuReplySchema = z.object({ cpu: z.object({ user: z.number(), system: z.number() }), stall: z.number(), gcMs: z.number() });

/**
 * The longest event-loop delay (ms) of this process since the last reading: a call waiting behind
 * a stall (a long GC, a long task) of the process that answers it, or of the generator that times it.
 */
function stallMeter(): () => number {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  return () => {
    const max = delay.max / 1e6;
    delay.reset();
    return max;
  };
}

/**
 * How long (ms) this process's main thread has been paused in garbage collection so far: young
 * and full collections, as V8 reports them (the work of its helper threads is in the CPU time).
 */
function gcPauseMeter(): () => number {
  let total = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) total += entry.duration;
  }).observe({ entryTypes: ['gc'] });
  return () => total;
}

/**
 * Children answer a 'cpu' message with their process.cpuUsage() (all threads, µs), their
 * longest event-loop stall since the last 'cpu' message and their GC pauses so far, and a 'gc'
 * message with their heaps' sizes once every heap was collected (settled-memory.ts; they run with --expose-gc).
 */
function answerCpuRequests(): void {
  const stall = stallMeter();
  process.on('message', (message) => {
    if (message === 'cpu') process.send?.({ cpu: process.cpuUsage(), stall: stall(), gcMs: gcPauses() });
    if (message === 'gc') void settleHeaps();
  });
}

// ---------------------------------------------------------------- children

const benchServer: ToolServer = toolServer({
  name: 'bench', description: 'A trivial tool for the comparison.', embedded: false,
  tools: [defineTool({
    name: 'echo', description: 'Echo the text back.',
    input: z.object({ text: z.string() }).strict(),
    async handler(args) {
      return { text: args.text };
    },
  })],
});

async function flowgateChild(address: string): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-bench-compare-'));
  const config = loadConfig({
    ...process.env, PORT: '0', FLOWGATE_DATA_DIR: dataDir, FLOWGATE_ADMIN_TOKEN: ADMIN, TEMPORAL_ADDRESS: address,
    FLOWGATE_TASK_QUEUE: `flowgate-bench-${randomUUID()}`,
    // 50 callers share one credential: limiting would measure 429s.
    FLOWGATE_RATE_LIMIT_PER_MINUTE: '0',
    // the load generator is one address: a connection limit per address would refuse its callers too
    FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS: '0',
    // the remote MCP server of the proxy scenarios listens on loopback
    FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true',
    ...(CACHED === undefined ? {} : { FLOWGATE_WORKER_CACHED_WORKFLOWS: String(CACHED) }),
    // the SDK core's own metrics (its sticky cache's size), as the raw child serves them
    ...(process.env.BENCH_SDK_METRICS ? { FLOWGATE_TEMPORAL_METRICS_ADDRESS: process.env.BENCH_SDK_METRICS } : {}),
  });
  const fg = await startFlowgate(config, silentLogger, { serverSources: [{ servers: async () => [benchServer] }] });
  answerCpuRequests();
  process.send?.({ url: fg.url, pid: process.pid, cachedWorkflows: config.temporal.maxCachedWorkflows, taskQueue: config.temporal.taskQueue });
  process.once('disconnect', () => {
    void fg.stop().finally(() => {
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

/** A bare JSON-RPC route on Koa: parse, answer the same `tools/call` result shape. */
function bareKoa(): Koa {
  const app = new Koa();
  app.use(async (ctx) => {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number; params: { arguments: { text: string } } };
    const value = { text: message.params.arguments.text };
    ctx.type = 'application/json';
    ctx.body = JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value, isError: false } });
  });
  return app;
}

/**
 * A remote MCP server as the official SDK v2 serves one: createMcpHandler, a server per request,
 * the 2026-07-28 era (and 2025 clients statelessly), JSON answers; the same `echo` tool.
 */
function sdkRemote(): (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void> {
  const handler = toNodeHandler(createMcpHandler(() => {
    const server = new McpServer({ name: 'bench-remote', version: '1.0.0' });
    server.registerTool('echo', { description: 'Echo the text back.', inputSchema: z.object({ text: z.string() }) },
      async ({ text }) => ({ content: [{ type: 'text', text: JSON.stringify({ text }) }], structuredContent: { text } }));
    return server;
  }, { responseMode: 'json' }));
  return (req, res) => handler(req, res);
}

/**
 * A remote MCP server that does next to nothing (a fixed answer per method, 2026-07-28 only): what
 * a call through flowgate adds over it is flowgate's own cost of proxying, apart from the remote's.
 */
function minimalRemote(req: http.IncomingMessage, res: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number; method: string };
    const result = message.method === 'server/discover'
      ? { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, serverInfo: { name: 'minimal', version: '1.0.0' }, resultType: 'complete' }
      : message.method === 'tools/list'
        ? { tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }], resultType: 'complete' }
        : { content: [{ type: 'text', text: '{"text":"ping"}' }], structuredContent: { text: 'ping' }, isError: false, resultType: 'complete' };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  });
}

/** The customer API of the durable-call scenario: `POST /openapi/echo {text}` answers `{text}` at once. */
function openApiEcho(req: http.IncomingMessage, res: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { text?: string };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ text: body.text ?? '' }));
  });
}

/** The OpenAPI document flowgate generates the durable-call scenario's tool `echo` from. */
const ECHO_DOCUMENT = {
  openapi: '3.0.3', info: { title: 'Echo', version: '1' },
  paths: {
    '/echo': {
      post: {
        operationId: 'echo',
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } } } },
        responses: { '200': { description: 'the text back' } },
      },
    },
  },
};

async function rawChild(address: string): Promise<void> {
  // the SDK core's own metrics, as flowgate serves them (FLOWGATE_TEMPORAL_METRICS_ADDRESS)
  const sdkMetrics = process.env.BENCH_SDK_METRICS;
  if (sdkMetrics) Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress: sdkMetrics } } } });
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection, namespace: NAMESPACE, taskQueue: RAW_QUEUE, ...(CACHED === undefined ? {} : { maxCachedWorkflows: CACHED }),
    workflowsPath: require.resolve('./compare-raw-workflows'),
    activities: { greet: async (name: string) => `Hello ${name}` },
  });
  const running = worker.run();
  const handle = bareKoa().callback();
  const remote = sdkRemote();
  // Koa answers its own errors; the handler's promise never rejects
  const server = http.createServer((req, res) => {
    if (req.url === '/mcp') {
      remote(req, res).catch(() => res.destroy());
      return;
    }
    if (req.url === '/mcp-minimal') {
      minimalRemote(req, res);
      return;
    }
    if (req.url === '/openapi/echo') {
      openApiEcho(req, res);
      return;
    }
    void handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  answerCpuRequests();
  process.send?.({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, pid: process.pid, cachedWorkflows: worker.options.maxCachedWorkflows, taskQueue: RAW_QUEUE });
  process.once('disconnect', () => {
    server.close();
    worker.shutdown();
    void running.finally(() => connection.close()).finally(() => process.exit(0));
  });
}

// ---------------------------------------------------------------- measuring

/**
 * Waits until a workflow execution closes (a long poll on its close event). Its result is sealed by
 * flowgate's payload codec, which this client does not hold, so `handle.result()` cannot read it.
 */
async function closed(client: Client, workflowId: string): Promise<void> {
  for (;;) {
    const { history } = await client.workflowService.getWorkflowExecutionHistory({
      namespace: NAMESPACE, execution: { workflowId }, waitNewEvent: true,
      historyEventFilterType: temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT,
    });
    if ((history?.events?.length ?? 0) > 0) return;
  }
}

/** The runs a worker holds in its sticky cache: the SDK core's `temporal_sticky_cache_size` at `address` (NaN when not served). */
async function stickyCacheSize(address: string): Promise<number> {
  const text = await fetch(`http://${address}/metrics`).then((res) => res.text()).catch(() => '');
  const values = text.split('\n').filter((line) => line.startsWith('temporal_sticky_cache_size')).map((line) => Number(line.split(' ').pop()));
  return values.length === 0 ? NaN : values.reduce((sum, value) => sum + value, 0);
}

interface Sample {
  /** calls that succeeded, per second */
  rate: number;
  p50: number;
  p95: number;
  p99: number;
  /** calls that failed (a query timing out on an overloaded worker, say): left out of rate and latency */
  errors: number;
  /** CPU µs per successful call, by process */
  cpu?: CpuPerCall;
  /** the longest event-loop stall (ms) of each process during the sample */
  stall?: CpuPerCall;
  /** µs per successful call each process's main thread spent paused in garbage collection (part of `cpu`) */
  gc?: CpuPerCall;
}

interface CpuPerCall {
  gen: number;
  fg: number;
  raw: number;
  tmp: number;
}

/** Where each process's CPU time is read from. */
interface CpuSources {
  flowgate: ChildProcess;
  raw: ChildProcess;
  temporalPid?: number;
}

const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of a process from /proc (clock ticks, all threads), in µs; NaN when unreadable. */
function procCpuMicros(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is [0], utime [11], stime [12].
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

interface Reading {
  cpu: number;
  stall: number;
  /** GC pauses so far, ms */
  gcMs: number;
}

function childReading(child: ChildProcess): Promise<Reading> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown): void => {
      const parsed = CpuReplySchema.safeParse(message);
      if (!parsed.success) return;
      child.off('message', onMessage);
      resolve({ cpu: parsed.data.cpu.user + parsed.data.cpu.system, stall: parsed.data.stall, gcMs: parsed.data.gcMs });
    };
    child.on('message', onMessage);
    child.send('cpu');
  });
}

const ownStall = stallMeter();
/** this process's GC pauses so far (a running total: the parent and the children read it alike) */
const gcPauses = gcPauseMeter();

/**
 * Each process's CPU time (µs) and GC pauses (µs) so far, and its longest stall since the last
 * reading (the dev server's: NaN).
 */
async function readProcesses(sources: CpuSources): Promise<{ cpu: CpuPerCall; stall: CpuPerCall; gc: CpuPerCall }> {
  const own = process.cpuUsage();
  const ownGc = gcPauses();
  const [fg, raw] = await Promise.all([childReading(sources.flowgate), childReading(sources.raw)]);
  return {
    cpu: { gen: own.user + own.system, fg: fg.cpu, raw: raw.cpu, tmp: procCpuMicros(sources.temporalPid) },
    stall: { gen: ownStall(), fg: fg.stall, raw: raw.stall, tmp: NaN },
    gc: { gen: ownGc * 1000, fg: fg.gcMs * 1000, raw: raw.gcMs * 1000, tmp: NaN },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** `callers` callers, each making `perCaller` calls back to back. */
async function closedLoop(callers: number, perCaller: number, op: () => Promise<void>): Promise<Sample> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: unknown;
  const started = performance.now();
  await Promise.all(Array.from({ length: callers }, async () => {
    for (let i = 0; i < perCaller; i++) {
      const t = performance.now();
      try {
        await op();
        latencies.push(performance.now() - t);
      } catch (err) {
        errors++;
        firstError ??= err;
      }
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  if (latencies.length === 0) throw firstError;
  if (firstError) console.log(`  (${errors} calls failed; the first: ${(firstError as Error).message.split('\n')[0]})`);
  latencies.sort((a, b) => a - b);
  return { rate: latencies.length / seconds, p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99), errors };
}

/**
 * Calls `op` at a fixed rate for `seconds`, each call on its schedule whatever the others do (an
 * open loop: a slow answer does not slow the callers down, as it does in a closed loop). Latency
 * counts from the call's scheduled time, so a generator that falls behind adds to it rather than
 * hiding it.
 */
async function openLoop(ratePerSecond: number, seconds: number, op: () => Promise<void>): Promise<Sample> {
  const latencies: number[] = [];
  let errors = 0;
  const total = Math.max(1, Math.round(ratePerSecond * seconds));
  const started = performance.now();
  const calls: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / ratePerSecond;
    // timers, not a busy loop: the generator shares the cores with what it measures
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    calls.push(op().then(() => {
      latencies.push(performance.now() - due);
    }, () => {
      errors++;
    }));
  }
  await Promise.all(calls);
  const elapsed = (performance.now() - started) / 1000;
  if (latencies.length === 0) throw new Error(`every one of the ${errors} open-loop calls failed`);
  latencies.sort((a, b) => a - b);
  return { rate: latencies.length / elapsed, p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99), errors };
}

interface Scenario {
  name: string;
  target: string;
  callers: number;
  perCaller: number;
  flowgate: () => Promise<void>;
  raw: () => Promise<void>;
  /**
   * After the rounds, flowgate's side again in an open loop at this multiple of the raw side's
   * median rate: the latency of serving that rate, which the closed loop of 50 callers cannot
   * show (its own queue of 50 waiting callers is most of its p99).
   */
  openLoopTimesRaw?: number;
  /**
   * Both sides are flowgate (a slower path against a faster one): the summary also prints each
   * side's p95 and the latency ratios (this side's p50 and p95 over the other's).
   */
  latencyRatios?: boolean;
}

interface Result {
  scenario: Scenario;
  flowgate: Sample[];
  raw: Sample[];
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const fmtCpu = (cpu: CpuPerCall | undefined): string => (cpu
  ? ` cpu µs/call gen=${cpu.gen.toFixed(0)} fg=${cpu.fg.toFixed(0)} raw=${cpu.raw.toFixed(0)} tmp=${cpu.tmp.toFixed(0)}` : '');

const fmtStall = (stall: CpuPerCall | undefined): string => (stall ? ` longest stall ms gen=${stall.gen.toFixed(0)} fg=${stall.fg.toFixed(0)} raw=${stall.raw.toFixed(0)}` : '');

const fmtGc = (gc: CpuPerCall | undefined): string => (gc ? ` gc µs/call gen=${gc.gen.toFixed(0)} fg=${gc.fg.toFixed(0)} raw=${gc.raw.toFixed(0)}` : '');

const fmt = (s: Sample): string => `${s.rate.toFixed(0)}/s p50=${s.p50.toFixed(1)}ms p99=${s.p99.toFixed(1)}ms${s.errors ? ` errors=${s.errors}` : ''}${fmtCpu(s.cpu)}${fmtGc(s.gc)}${fmtStall(s.stall)}`;

function forkChild(role: string, address: string, sdkMetrics: string): Promise<{ child: ChildProcess } & z.infer<typeof HelloSchema>> {
  // BENCH_CPU_PROF=<dir>: the flowgate process writes a V8 CPU profile there when it exits.
  const profile = role === 'flowgate' && process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const env = { ...process.env, BENCH_ROLE: role, BENCH_TEMPORAL: address, BENCH_SDK_METRICS: sdkMetrics };
  const child = fork(__filename, [], { env, execArgv: [...process.execArgv, ...profile, '--expose-gc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, ...HelloSchema.parse(m) }));
    child.once('exit', (code) => reject(new Error(`${role} child exited with ${code}`)));
  });
}

/**
 * Waits (at most a minute) until no workflow runs on the dev server: runs started by an async
 * round would otherwise still be executing during the next measurement, on one side only.
 */
async function settle(client: Client): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const { count } = await client.workflow.count(`ExecutionStatus = 'Running'`);
    if (count === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The load generator's HTTP client (BENCH_HTTP_CLIENT): `raw` (the default), a minimal kept-alive
 * HTTP/1.1 client (raw-http.ts) that costs the generator 30 to 50 µs per call alone and 100 to 160
 * µs here, or `undici` (its `request` on kept-alive connections, as earlier figures were taken),
 * 200 to 240 µs here. The generator shares the two cores with what it measures; a caller on another
 * machine would take nothing from flowgate. `fetch` cost two to three times undici's `request`.
 */
const HTTP_CLIENT = z.enum(['raw', 'undici']).parse(process.env.BENCH_HTTP_CLIENT ?? 'raw');
const dispatcher = new Agent({ connections: 128, keepAliveTimeout: 30_000 });
const rawClients = new Map<string, RawHttpClient>();

interface Reply {
  status: number;
  text: string;
  header(name: string): string | undefined;
}

async function call(url: string, init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  const method = init.method ?? 'GET';
  if (HTTP_CLIENT === 'raw') {
    const split = /^(https?:\/\/[^/]+)(\/.*)?$/.exec(url);
    if (!split?.[1]) throw new Error(`not an absolute URL: ${url}`);
    let client = rawClients.get(split[1]);
    if (!client) {
      client = new RawHttpClient(split[1]);
      rawClients.set(split[1], client);
    }
    return client.request(method, split[2] ?? '/', init.headers, init.body);
  }
  const res = await request(url, { method, headers: init.headers, body: init.body, dispatcher });
  const { headers } = res;
  return {
    status: res.statusCode, text: await res.body.text(),
    header: (name) => {
      const value = headers[name.toLowerCase()];
      return Array.isArray(value) ? value[0] : value;
    },
  };
}

function expectOk(res: Reply, status = 200): void {
  if (res.status !== status) throw new Error(`unexpected ${res.status}: ${res.text.slice(0, 300)}`);
}

/** `op` in a closed loop of `callers` for `ms` (JIT, connections, caches), nothing recorded. */
async function warmUp(callers: number, ms: number, op: () => Promise<void>): Promise<void> {
  const until = performance.now() + ms;
  await Promise.all(Array.from({ length: callers }, async () => {
    while (performance.now() < until) await op().catch(() => undefined);
  }));
}

async function parent(): Promise<void> {
  const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  console.log(`bench:compare  rounds=${ROUNDS} scale=${SCALE} paused=${PAUSED} cached workflows=${CACHED === undefined ? "each worker's default" : `${CACHED} (both workers)`} http client=${HTTP_CLIENT}  cpus=${os.cpus().length} loadavg(1/5/15)=${load}  node ${process.version}`);
  const config = loadConfig({ ...process.env, FLOWGATE_DATA_DIR: os.tmpdir() });
  const dbDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-bench-temporal-'));
  const dev = await startEmbeddedTemporal({
    binaries: await ensureTemporalServer(config.temporal), port: await freeTemporalPort((p) => allPorts(internalPorts(p))), namespace: NAMESPACE,
    persistence: { kind: 'sqlite', file: path.join(dbDir, 'temporal.sqlite') },
  });
  const children: ChildProcess[] = [];
  try {
    const sdkMetrics = { flowgate: `127.0.0.1:${await freePort()}`, raw: `127.0.0.1:${await freePort()}` };
    const fg = await forkChild('flowgate', dev.address, sdkMetrics.flowgate);
    children.push(fg.child);
    const raw = await forkChild('raw', dev.address, sdkMetrics.raw);
    children.push(raw.child);
    const client = new Client({ connection: await Connection.connect({ address: dev.address }), namespace: NAMESPACE });
    const cpuSources: CpuSources = { flowgate: fg.child, raw: raw.child, temporalPid: dev.pid() };

    const admin = async <T>(method: string, pathname: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${fg.url}${pathname}`, { method, headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
      return JSON.parse(text) as T;
    };
    const publish = async (definition: unknown): Promise<{ workflowId: string; triggerId: string }> => {
      const wf = await admin<{ id: string }>('POST', '/api/v1/workflows', definition);
      await admin('POST', `/api/v1/workflows/${wf.id}/publish`);
      const trigger = await admin<{ id: string }>('POST', '/api/v1/triggers', { workflowId: wf.id });
      return { workflowId: wf.id, triggerId: trigger.id };
    };
    const oneStep = await publish({ name: 'bench', steps: [{ name: 'Hello', type: 'template', template: 'Hello {{inputs.name}}' }] });
    const paused = await publish({ name: 'bench-paused', steps: [{ name: 'Sign-off', type: 'approval', approvers: ['ann@example.com'], timeout: '1h' }] });
    const { key } = await admin<{ key: string }>('POST', '/api/v1/api-keys', {});
    const { token } = (await (await fetch(`${fg.url}/auth/token`, { method: 'POST', headers: { 'X-API-KEY': key } })).json()) as { token: string };

    const trigger = (triggerId: string, wait: boolean): Promise<Reply> => call(`${fg.url}/ext/triggers/${triggerId}`, {
      method: 'POST', headers: { 'X-API-KEY': key, 'Content-Type': 'application/json', ...(wait ? { 'x-api-wait': 'true' } : {}) }, body: '{"name":"bench"}',
    });
    const rawStart = { taskQueue: RAW_QUEUE, args: ['bench'] as [string] };
    // About the size and shape of the memo flowgate writes on a one-step run.
    const rawMemo = {
      orgId: 'org_bench', automationId: oneStep.workflowId, automationVersion: 1, automationName: 'bench', triggerId: oneStep.triggerId,
      startedBy: 'api-key', started: new Date().toISOString(), stepMap: { 1: 1 }, steps: [{ name: 'Hello', type: 'template' }],
    };

    // One finished run on each side for the status and results scenarios.
    const finished = await trigger(oneStep.triggerId, true);
    const finishedRunId = finished.header('x-pf-run-id') ?? '';
    expectOk(finished);
    const runPath = `${fg.url}/ext/webhook/${key}/runs/${oneStep.workflowId}/${finishedRunId}`;
    const rawFinished = randomUUID();
    await client.workflow.execute('rawOneStep', { ...rawStart, workflowId: rawFinished });
    const rawHandle = client.workflow.getHandle(rawFinished);

    let rpcId = 0;
    const rpcBody = (): string => JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name: 'echo', arguments: { text: 'ping' } } });
    const s = (n: number): number => Math.max(1, Math.round(n * SCALE));
    // The remote MCP server (the raw child's /mcp), registered with flowgate as a custom server.
    const remoteUrl = `${raw.url}/mcp`;
    const remoteServer = await admin<{ id: string }>('POST', '/api/v1/servers', { url: remoteUrl, name: 'bench remote' });
    const toolsCall = { method: 'POST' as const, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json' } };
    const viaFlowgate = async (): Promise<void> => expectOk(await call(`${fg.url}/tools/${remoteServer.id}`, { ...toolsCall, body: rpcBody() }));
    // the same call as a 2026-07-28 client sends it to the remote itself: one POST, the era's _meta and headers
    const directBody = (): string => JSON.stringify({
      jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: {
        name: 'echo', arguments: { text: 'ping' },
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' }, 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    });
    const modernHeaders = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'echo' };
    const direct = async (): Promise<void> => expectOk(await call(remoteUrl, { method: 'POST', body: directBody(), headers: modernHeaders }));
    const minimalUrl = `${raw.url}/mcp-minimal`;
    const minimalServer = await admin<{ id: string }>('POST', '/api/v1/servers', { url: minimalUrl, name: 'bench minimal remote' });
    // issue 50: the same generated (OpenAPI) tool on a customer API that answers at once, through a
    // plain server (a proxied call) and a durable one (each call a one-activity Temporal workflow)
    const echoConnection = await admin<{ PCID: string }>('POST', '/api/v1/connections', {
      application: 'custom', name: 'bench echo api', credentials: { baseUrl: `${raw.url}/openapi`, auth: { kind: 'api_key', name: 'X-Api-Key', value: 'bench' } },
    });
    const plainEcho = await admin<{ id: string }>('POST', '/api/v1/servers', { connection: echoConnection.PCID, document: ECHO_DOCUMENT, name: 'bench echo plain' });
    const durableEcho = await admin<{ id: string }>('POST', '/api/v1/servers', { connection: echoConnection.PCID, document: ECHO_DOCUMENT, name: 'bench echo durable', durable: { maxAttempts: 3 } });
    const echoBody = (): string => JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name: 'echo', arguments: { PCID: echoConnection.PCID, body: { text: 'ping' } } } });
    // a plain tools/call (no task asked): the durable server answers it inline once its task ends
    const echoCall = async (serverId: string): Promise<void> => {
      const res = await call(`${fg.url}/tools/${serverId}`, { ...toolsCall, body: echoBody() });
      expectOk(res);
      if (!res.text.includes('"isError":false')) throw new Error(`not a tool result: ${res.text.slice(0, 300)}`);
    };
    // the request the generated tool makes, sent by the caller itself: the body, the connection's API key
    const directEcho = async (): Promise<void> => {
      const res = await call(`${raw.url}/openapi/echo`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-Api-Key': 'bench' }, body: '{"text":"ping"}' });
      expectOk(res);
      if (res.text !== '{"text":"ping"}') throw new Error(`not the echo: ${res.text.slice(0, 300)}`);
    };
    const scenarios: Scenario[] = [
      {
        name: 'async trigger vs workflow.start', target: '>= 0.9', callers: 50, perCaller: s(4),
        flowgate: async () => expectOk(await trigger(oneStep.triggerId, false)),
        raw: async () => {
          await client.workflow.start('rawOneStep', { ...rawStart, workflowId: randomUUID() });
        },
      },
      {
        // The same raw start carrying what flowgate's start carries (a memo of the run's
        // metadata and three search attributes): separates the gateway's cost from the dev
        // server's cost of indexing them.
        name: 'async trigger vs workflow.start with memo and search attributes', target: '(info)', callers: 50, perCaller: s(4),
        flowgate: async () => expectOk(await trigger(oneStep.triggerId, false)),
        raw: async () => {
          await client.workflow.start('rawOneStep', {
            ...rawStart, workflowId: randomUUID(), memo: rawMemo,
            typedSearchAttributes: [
              { key: SEARCH_ATTRIBUTES.orgId, value: 'org_bench' },
              { key: SEARCH_ATTRIBUTES.automationId, value: oneStep.workflowId },
              { key: SEARCH_ATTRIBUTES.triggerId, value: oneStep.triggerId },
            ],
          });
        },
      },
      {
        name: 'sync trigger vs workflow.execute, 1 caller', target: '>= 0.9', callers: 1, perCaller: s(20),
        flowgate: async () => expectOk(await trigger(oneStep.triggerId, true)),
        raw: async () => {
          await client.workflow.execute('rawOneStep', { ...rawStart, workflowId: randomUUID() });
        },
      },
      {
        name: 'sync trigger vs workflow.execute, 50 callers', target: '>= 0.8', callers: 50, perCaller: s(2),
        flowgate: async () => expectOk(await trigger(oneStep.triggerId, true)),
        raw: async () => {
          await client.workflow.execute('rawOneStep', { ...rawStart, workflowId: randomUUID() });
        },
      },
      {
        name: 'status of a finished run vs raw describe', target: '(info)', callers: 50, perCaller: s(20),
        flowgate: async () => expectOk(await call(`${runPath}/status`)),
        raw: async () => {
          await rawHandle.describe();
        },
      },
      {
        name: 'status of a finished run vs raw query', target: '>= 20, p99 <= 20ms', callers: 50, perCaller: s(10), openLoopTimesRaw: 20,
        flowgate: async () => expectOk(await call(`${runPath}/status`)),
        raw: async () => {
          await rawHandle.query('state');
        },
      },
      {
        name: 'results of a finished run vs raw query', target: '>= 20, p99 <= 20ms', callers: 50, perCaller: s(10), openLoopTimesRaw: 20,
        flowgate: async () => expectOk(await call(`${runPath}/results`)),
        raw: async () => {
          await rawHandle.query('state');
        },
      },
      {
        name: 'tools/call vs bare Koa JSON-RPC', target: '>= 0.9', callers: 50, perCaller: s(20),
        flowgate: async () => expectOk(await call(`${fg.url}/tools/bench`, {
          method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json' }, body: rpcBody(),
        })),
        raw: async () => expectOk(await call(`${raw.url}/rpc`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: rpcBody() })),
      },
      {
        // issue 31: what the proxy adds to a call, one caller (p50 added: flowgate p50 - raw p50)
        name: 'tools/call through flowgate to a remote MCP server vs direct, 1 caller', target: 'p50 +<= 1ms', callers: 1, perCaller: s(200),
        flowgate: viaFlowgate, raw: direct,
      },
      {
        name: 'tools/call through flowgate to a remote MCP server vs direct, 50 callers', target: '>= 0.8', callers: 50, perCaller: s(20),
        flowgate: viaFlowgate, raw: direct,
      },
      {
        // issue 50, the plain proxy: a generated (OpenAPI) tool on a customer API that answers at
        // once, proxied through the gateway, against the same request sent to the API directly
        name: 'tools/call through flowgate to a generated (OpenAPI) tool vs the API directly, 1 caller', target: 'p50 +<= 1ms', callers: 1, perCaller: s(200),
        flowgate: () => echoCall(plainEcho.id), raw: directEcho,
      },
      {
        // information: the API does next to nothing, so the rate ratio is about the API's CPU per
        // call over flowgate's (read fg µs/call); the 0.8 target is the remote MCP server's row
        name: 'tools/call through flowgate to a generated (OpenAPI) tool vs the API directly, 50 callers', target: '(info)', callers: 50, perCaller: s(20),
        flowgate: () => echoCall(plainEcho.id), raw: directEcho,
      },
      {
        // flowgate's own cost of a proxied call, apart from the remote's: a remote that does next to nothing
        name: 'tools/call through flowgate to a minimal remote MCP server vs direct, 1 caller', target: '(info)', callers: 1, perCaller: s(1000),
        flowgate: async () => expectOk(await call(`${fg.url}/tools/${minimalServer.id}`, { ...toolsCall, body: rpcBody() })),
        raw: async () => expectOk(await call(minimalUrl, { method: 'POST', body: directBody(), headers: modernHeaders })),
      },
      {
        // what the same gateway adds to a call it answers itself (the inbound half of the above)
        name: 'built-in tools/call vs bare Koa JSON-RPC, 1 caller', target: '(info)', callers: 1, perCaller: s(1000),
        flowgate: async () => expectOk(await call(`${fg.url}/tools/bench`, { ...toolsCall, body: rpcBody() })),
        raw: async () => expectOk(await call(`${raw.url}/rpc`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: rpcBody() })),
      },
      {
        name: 'built-in tools/call vs the official SDK stateless server', target: '(info)', callers: 50, perCaller: s(20),
        flowgate: async () => expectOk(await call(`${fg.url}/tools/bench`, { ...toolsCall, body: rpcBody() })),
        raw: direct,
      },
      {
        // issue 50, the price of durability: "flowgate" is the durable call, "raw" the plain proxied one
        name: 'durable tool call vs plain proxied call, 1 caller', target: '(info)', callers: 1, perCaller: s(100), latencyRatios: true,
        flowgate: () => echoCall(durableEcho.id),
        raw: () => echoCall(plainEcho.id),
      },
    ];

    // (5) memory first, while both processes are fresh (later rounds leave garbage that makes RSS
    // deltas meaningless): PAUSED runs waiting on each side, then terminated before the rounds.
    if (PAUSED > 0) {
      const pausedIds = { flowgate: [] as string[], raw: [] as string[] };
      // Each side once every heap it has was collected (the workflow thread's too) and its RSS
      // read five times (settled-memory.ts): read right after start-up or after 1,000 trigger
      // calls, RSS also counts garbage V8 has not collected yet, on one side more than the other.
      const settled = async (): Promise<{ flowgate: SettledMemory; raw: SettledMemory }> => ({
        flowgate: await settledMemory(fg.child, fg.pid), raw: await settledMemory(raw.child, raw.pid),
      });
      // BENCH_HEAP_DIR (the children load heap-hook.ts through NODE_OPTIONS): heap snapshots of both
      // before the runs and after them; writing one moves RSS, so read the figures of another run
      const heapDir = process.env.BENCH_HEAP_DIR;
      const snapshots = async (): Promise<void> => {
        if (heapDir) for (const pid of [fg.pid, raw.pid]) await requestHeapSnapshots(pid, heapDir);
      };
      await snapshots();
      await quiet([fg.pid, raw.pid]);
      const before = await settled();
      const cached = async (): Promise<{ flowgate: number; raw: number }> => ({ flowgate: await stickyCacheSize(sdkMetrics.flowgate), raw: await stickyCacheSize(sdkMetrics.raw) });
      const cachedBefore = await cached();
      await closedLoop(20, Math.ceil(PAUSED / 20), async () => {
        const res = await trigger(paused.triggerId, false);
        expectOk(res);
        pausedIds.flowgate.push(res.header('x-pf-run-id') ?? '');
      });
      await closedLoop(20, Math.ceil(PAUSED / 20), async () => {
        pausedIds.raw.push((await client.workflow.start('rawPaused', { taskQueue: RAW_QUEUE, workflowId: randomUUID() })).workflowId);
      });
      // Let both workers take every run to its wait: until each holds as many paused runs in its
      // sticky cache as it has room for, and neither task queue has a backlog in Temporal (at most
      // ten minutes; on a loaded machine a worker can look idle while its runs' tasks still wait in
      // Temporal), then until both are idle.
      const began = Date.now();
      const capacity = { flowgate: fg.cachedWorkflows, raw: raw.cachedWorkflows };
      const holdsAll = (count: number, side: 'flowgate' | 'raw'): boolean => Number.isNaN(count) || count >= Math.min(cachedBefore[side] + PAUSED, capacity[side]);
      const backlog = async (): Promise<number> => {
        let total = 0;
        for (const taskQueue of [fg.taskQueue, raw.taskQueue]) {
          for (const taskQueueType of [temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY]) {
            const described = await client.workflowService.describeTaskQueue({ namespace: NAMESPACE, taskQueue: { name: taskQueue }, taskQueueType, reportStats: true });
            total += Number(described.stats?.approximateBacklogCount ?? 0);
          }
        }
        return total;
      };
      for (let now = await cached(); Date.now() - began < 600_000; now = await cached()) {
        if (holdsAll(now.flowgate, 'flowgate') && holdsAll(now.raw, 'raw') && await backlog() === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      await quiet([fg.pid, raw.pid]);
      const waited = Date.now() - began;
      const after = await settled();
      const cachedRuns = await cached();
      const grown = (side: 'flowgate' | 'raw', figure: keyof SettledMemory): number => after[side][figure] - before[side][figure];
      const line = (figure: keyof SettledMemory): string => (['flowgate', 'raw'] as const)
        .map((side) => `${side === 'raw' ? 'raw worker' : side} ${before[side][figure].toFixed(1)} -> ${after[side][figure].toFixed(1)} (+${grown(side, figure).toFixed(1)})`).join(' | ');
      console.log(`  ${PAUSED} paused runs, every heap collected (MiB; target: flowgate's growth below the raw worker's), both workers idle after ${(waited / 1000).toFixed(0)} s, loadavg ${os.loadavg()[0]?.toFixed(1)}:`);
      console.log(`    RSS (median of 5)      ${line('rssMiB')}`);
      console.log(`    workflow thread heap   ${line('threadHeapMiB')}`);
      console.log(`    main thread heap       ${line('mainHeapMiB')}`);
      console.log(`    runs in the sticky cache (temporal_sticky_cache_size): flowgate ${cachedBefore.flowgate} -> ${cachedRuns.flowgate} of ${capacity.flowgate} | raw worker ${cachedBefore.raw} -> ${cachedRuns.raw} of ${capacity.raw}${CACHED === undefined ? " (each worker's default)" : ' (BENCH_CACHED_WORKFLOWS)'}`);
      // paused runs per GiB of RSS growth, and flowgate's growth against the raw worker's
      const perGiB = (mib: number): string => (mib > 0 ? (PAUSED / (mib / 1024)).toFixed(0) : 'n/a');
      console.log(`  paused runs per GiB of RSS: flowgate ${perGiB(grown('flowgate', 'rssMiB'))} | raw worker ${perGiB(grown('raw', 'rssMiB'))};`
        + ` flowgate's growth / raw's: RSS ${(grown('flowgate', 'rssMiB') / grown('raw', 'rssMiB')).toFixed(2)}, workflow thread heap ${(grown('flowgate', 'threadHeapMiB') / grown('raw', 'threadHeapMiB')).toFixed(2)}`);
      await snapshots();
      // What a smaller cache costs: from a decision to the end of the run, for the oldest paused runs
      // (a cache that holds fewer than every run evicts them first: they replay their history
      // before they go on) and for the newest (held in the cache), against the raw worker's oldest
      // runs (signalled).
      const resumeCallers = 10;
      const resumePerCaller = Math.floor(Math.min(100, PAUSED / 2) / resumeCallers);
      if (resumePerCaller > 0) {
        const resumed = resumeCallers * resumePerCaller;
        const approve = (ids: string[]): Promise<Sample> => closedLoop(resumeCallers, resumePerCaller, async () => {
          const id = ids.shift() ?? '';
          await admin('POST', `/api/v1/runs/${id}/approval`, { decision: 'approve', approver: 'ann@example.com' });
          await closed(client, id);
        });
        const fgOldest = await approve(pausedIds.flowgate.splice(0, resumed));
        const fgNewest = await approve(pausedIds.flowgate.splice(-resumed));
        const rawOldest = pausedIds.raw.splice(0, resumed);
        const rawResume = await closedLoop(resumeCallers, resumePerCaller, async () => {
          const id = rawOldest.shift() ?? '';
          await client.workflow.getHandle(id).signal('go');
          await closed(client, id);
        });
        const outOfCache = (side: 'flowgate' | 'raw'): number => Math.min(resumed, Math.max(0, PAUSED + cachedBefore[side] - capacity[side]));
        const fmtResume = (sample: Sample): string => `p50 ${sample.p50.toFixed(1)} p99 ${sample.p99.toFixed(1)}${sample.errors ? ` errors=${sample.errors}` : ''}`;
        console.log(`  paused runs resumed, ${resumed} of each, ${resumeCallers} at a time, from the decision to the run's end (ms): flowgate's oldest ${fmtResume(fgOldest)} (about ${outOfCache('flowgate')} of them out of its cache: replayed first),`
          + ` its newest ${fmtResume(fgNewest)} (in its cache) | raw worker's oldest ${fmtResume(rawResume)} (about ${outOfCache('raw')} out of its cache)`);
      }
      const left = [...pausedIds.flowgate, ...pausedIds.raw];
      await closedLoop(20, Math.ceil(left.length / 20), async () => {
        const id = left.pop();
        if (id) await client.workflow.getHandle(id).terminate('benchmark memory step done');
      });
    }

    // BENCH_ONLY: one scenario's whole name (names hold commas), or words (comma-separated) of the
    // scenario names: a scenario naming any of them runs; `paused` runs the paused-run memory alone
    const onlyValue = (process.env.BENCH_ONLY ?? '').trim();
    const only = scenarios.some((scenario) => scenario.name === onlyValue) ? [onlyValue] : onlyValue.split(',').map((word) => word.trim()).filter(Boolean);
    const results: Result[] = onlyValue === 'paused' ? [] : scenarios.filter((scenario) => only.length === 0 || only.some((word) => scenario.name.includes(word))).map((scenario) => ({ scenario, flowgate: [], raw: [] }));
    // Warm-up (BENCH_WARMUP_SECONDS per side and scenario): JIT, bundles, connections, caches on
    // both sides; a few dozen calls leave the first rounds measuring V8's optimizer.
    for (const { scenario } of results) {
      for (const side of ['flowgate', 'raw'] as const) {
        await warmUp(scenario.callers, WARMUP_MS, scenario[side]);
        await settle(client);
      }
    }
    for (let round = 1; round <= ROUNDS; round++) {
      for (const result of results) {
        const { scenario } = result;
        const order: ('flowgate' | 'raw')[] = round % 2 ? ['flowgate', 'raw'] : ['raw', 'flowgate'];
        for (const side of order) {
          await settle(client);
          // CPU from the first call until every run the calls started has ended: a start's cost
          // includes running what it started (flowgate's worker shares the gateway's process).
          const { cpu: before, gc: gcBefore } = await readProcesses(cpuSources);
          const sample = await closedLoop(scenario.callers, scenario.perCaller, scenario[side]);
          await settle(client);
          const { cpu: after, stall, gc: gcAfter } = await readProcesses(cpuSources);
          const calls = scenario.callers * scenario.perCaller - sample.errors;
          const perCall = (k: keyof CpuPerCall, from = before, to = after): number => (to[k] - from[k]) / calls;
          sample.cpu = { gen: perCall('gen'), fg: perCall('fg'), raw: perCall('raw'), tmp: perCall('tmp') };
          sample.gc = { gen: perCall('gen', gcBefore, gcAfter), fg: perCall('fg', gcBefore, gcAfter), raw: perCall('raw', gcBefore, gcAfter), tmp: NaN };
          sample.stall = stall;
          result[side].push(sample);
        }
        const f = result.flowgate.at(-1)!;
        const r = result.raw.at(-1)!;
        console.log(`round ${round}  ${scenario.name}: flowgate ${fmt(f)} | raw ${fmt(r)} | ratio ${(f.rate / r.rate).toFixed(2)}`);
      }
    }

    console.log('\nsummary (median of rounds; ratio = flowgate rate / raw rate)');
    for (const { scenario, flowgate, raw: rawSamples } of results) {
      const ratio = median(flowgate.map((f, i) => f.rate / rawSamples[i]!.rate));
      const medians = (xs: Sample[], key: 'cpu' | 'gc'): CpuPerCall | undefined => (xs.every((x) => x[key]) ? {
        gen: median(xs.map((x) => x[key]!.gen)), fg: median(xs.map((x) => x[key]!.fg)), raw: median(xs.map((x) => x[key]!.raw)), tmp: median(xs.map((x) => x[key]!.tmp)),
      } : undefined);
      const side = (xs: Sample[]): string => `${median(xs.map((x) => x.rate)).toFixed(0)}/s p50=${median(xs.map((x) => x.p50)).toFixed(2)}ms p99=${median(xs.map((x) => x.p99)).toFixed(1)}ms${fmtCpu(medians(xs, 'cpu'))}${fmtGc(medians(xs, 'gc'))}`;
      const addedP50 = median(flowgate.map((f, i) => f.p50 - rawSamples[i]!.p50));
      console.log(`  ${scenario.name.padEnd(48)} ratio ${ratio.toFixed(2).padStart(6)}  p50 added ${addedP50.toFixed(2)}ms  (target ${scenario.target})  flowgate ${side(flowgate)} | raw ${side(rawSamples)}`);
      if (scenario.latencyRatios) {
        const at = (xs: Sample[], key: 'p50' | 'p95'): number => median(xs.map((x) => x[key]));
        console.log(`    latency: flowgate p50=${at(flowgate, 'p50').toFixed(2)}ms p95=${at(flowgate, 'p95').toFixed(2)}ms | raw p50=${at(rawSamples, 'p50').toFixed(2)}ms p95=${at(rawSamples, 'p95').toFixed(2)}ms`
          + ` | flowgate/raw p50 ${median(flowgate.map((f, i) => f.p50 / rawSamples[i]!.p50)).toFixed(1)}× p95 ${median(flowgate.map((f, i) => f.p95 / rawSamples[i]!.p95)).toFixed(1)}×`
          + ` | p95 added ${median(flowgate.map((f, i) => f.p95 - rawSamples[i]!.p95)).toFixed(2)}ms`);
      }
    }

    for (const { scenario, raw: rawSamples } of results) {
      if (!scenario.openLoopTimesRaw) continue;
      const rate = scenario.openLoopTimesRaw * median(rawSamples.map((x) => x.rate));
      await settle(client);
      // a reading restarts each process's stall meter: the one after covers the open loop only
      await readProcesses(cpuSources);
      const sample = await openLoop(rate, OPEN_LOOP_SECONDS, scenario.flowgate);
      const { stall } = await readProcesses(cpuSources);
      console.log(`  ${scenario.name}, flowgate in an open loop at ${scenario.openLoopTimesRaw}× the raw rate (${rate.toFixed(0)}/s offered for ${OPEN_LOOP_SECONDS} s):`
        + ` ${sample.rate.toFixed(0)}/s answered, p50=${sample.p50.toFixed(1)}ms p99=${sample.p99.toFixed(1)}ms${sample.errors ? ` errors=${sample.errors}` : ''}${fmtStall(stall)}`);
    }
    console.log(`loadavg at the end (1/5/15): ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    await client.connection.close();
    await dispatcher.close();
    for (const client of rawClients.values()) client.close();
  } finally {
    for (const child of children) child.disconnect();
    await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(undefined)))));
    await dev.stop();
    rmSync(dbDir, { recursive: true, force: true });
  }
}

const role = process.env.BENCH_ROLE;
const address = process.env.BENCH_TEMPORAL ?? '';
(role === 'flowgate' ? flowgateChild(address) : role === 'raw' ? rawChild(address) : parent()).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
