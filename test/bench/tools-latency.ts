/**
 * `npm run bench:tools`: latency of `tools/call` on a trivial tool (echo) through the whole HTTP
 * path (runtime-token check against the registry, JSON-RPC parsing, schema validation, dispatch),
 * on the embedded stack `npm start` runs. The callers run in a child process, so they do not share
 * the gateway's event loop; 50 concurrent callers by default. Prints percentiles; asserts nothing.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { silentLogger } from '../../src/observability/logger';
import { startFlowgate } from '../../src/app/start';
import { z } from 'zod';
import type { ToolServer } from '../../src/tools';
import { defineTool, toolServer } from '../../src/tools/define-tool';
import { freePort } from '../../temporal/ports';
import { reportLatency } from './latency-report';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const CALLS_PER_CALLER = Number(process.env.BENCH_CALLS ?? 40);
const ADMIN = 'fga_bench_token_0123456789';

const bench: ToolServer = toolServer({
  name: 'bench', description: 'A trivial tool for latency measurements.', embedded: false,
  tools: [defineTool({
    name: 'echo', description: 'Echo the text back.',
    input: z.object({ text: z.string() }).strict(),
    async handler(args) {
      return { text: args.text };
    },
  })],
});

/** The load generator, in the child process: BENCH_URL and BENCH_TOKEN from the parent. */
async function callers(url: string, token: string): Promise<void> {
  let id = 0;
  const call = async (): Promise<number> => {
    const started = performance.now();
    const res = await fetch(`${url}/tools/bench`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'echo', arguments: { text: 'ping' } } }),
    });
    const body = (await res.json()) as { result?: { structuredContent?: { text?: string } } };
    if (res.status !== 200 || body.result?.structuredContent?.text !== 'ping') throw new Error(`unexpected answer ${res.status} ${JSON.stringify(body)}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 200; i++) await call(); // warm-up: JIT, schema compilation, connections
  const sequential: number[] = [];
  for (let i = 0; i < 500; i++) sequential.push(await call());
  reportLatency('tools/call echo, sequential', sequential, 2);
  const started = performance.now();
  const burst = (await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    const mine: number[] = [];
    for (let i = 0; i < CALLS_PER_CALLER; i++) mine.push(await call());
    return mine;
  }))).flat();
  const seconds = (performance.now() - started) / 1000;
  reportLatency(`tools/call echo, ${CONCURRENCY} concurrent callers x ${CALLS_PER_CALLER}`, burst, 2);
  console.log(`throughput: ${(burst.length / seconds).toFixed(0)} calls/s`);
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-bench-tools-'));
  const config = loadConfig({
    ...process.env, PORT: '0', FLOWGATE_DATA_DIR: dataDir, FLOWGATE_ADMIN_TOKEN: ADMIN,
    TEMPORAL_ADDRESS: undefined, TEMPORAL_DEV_PORT: String(await freePort()), TEMPORAL_UI_PORT: String(await freePort()),
    // Concurrent callers share one credential: limiting would measure 429s, not latency.
    FLOWGATE_RATE_LIMIT_PER_MINUTE: '0',
    // the load generator is one address: a connection limit per address would refuse its callers too
    FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS: '0',
  });
  const fg = await startFlowgate(config, silentLogger, { serverSources: [{ servers: async () => [bench] }] });
  try {
    const keyResponse = await fetch(`${fg.url}/api/v1/api-keys`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' }, body: '{}' });
    const { key } = (await keyResponse.json()) as { key: string };
    const { token } = (await (await fetch(`${fg.url}/auth/token`, { method: 'POST', headers: { 'X-API-KEY': key } })).json()) as { token: string };
    const child = fork(__filename, [], { env: { ...process.env, BENCH_URL: fg.url, BENCH_TOKEN: token } });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`the callers exited with ${code}`);
  } finally {
    await fg.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

(process.env.BENCH_URL && process.env.BENCH_TOKEN ? callers(process.env.BENCH_URL, process.env.BENCH_TOKEN) : main()).catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
