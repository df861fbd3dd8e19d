/**
 * `npm run bench`: latency of a synchronous trigger call on a one-step workflow, on the embedded
 * stack `npm start` runs (Temporal dev server with its SQLite file in WAL mode, SQLite registry).
 * Sequential calls, then a burst of concurrent ones. Prints percentiles; asserts nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { silentLogger } from '../../src/observability/logger';
import { startFlowgate } from '../../src/app/start';
import { freePort } from '../../temporal/ports';
import { reportLatency } from './latency-report';

const SEQUENTIAL = Number(process.env.BENCH_CALLS ?? 200);
const CONCURRENT = Number(process.env.BENCH_CONCURRENCY ?? 20);

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-bench-'));
  const config = loadConfig({
    ...process.env, PORT: '0', FLOWGATE_DATA_DIR: dataDir, FLOWGATE_ADMIN_TOKEN: 'fga_bench_token_0123456789',
    TEMPORAL_ADDRESS: undefined, TEMPORAL_DEV_PORT: String(await freePort()), TEMPORAL_UI_PORT: String(await freePort()),
    // Concurrent callers share one credential: limiting would measure 429s, not latency.
    FLOWGATE_RATE_LIMIT_PER_MINUTE: '0',
    // the load generator is one address: a connection limit per address would refuse its callers too
    FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS: '0',
  });
  const fg = await startFlowgate(config, silentLogger);
  try {
    const admin = async <T>(method: string, pathname: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${fg.url}${pathname}`, { method, headers: { Authorization: 'Bearer fga_bench_token_0123456789', 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return (await res.json()) as T;
    };
    const wf = await admin<{ id: string }>('POST', '/api/v1/workflows', { name: 'bench', steps: [{ name: 'Hello', type: 'template', template: 'Hello {{inputs.name}}' }] });
    await admin('POST', `/api/v1/workflows/${wf.id}/publish`);
    const trigger = await admin<{ id: string }>('POST', '/api/v1/triggers', { workflowId: wf.id });
    const { key } = await admin<{ key: string }>('POST', '/api/v1/api-keys', {});
    const call = async (): Promise<number> => {
      const started = performance.now();
      const res = await fetch(`${fg.url}/ext/triggers/${trigger.id}`, { method: 'POST', headers: { 'X-API-KEY': key, 'x-api-wait': 'true', 'Content-Type': 'application/json' }, body: '{"name":"bench"}' });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      return performance.now() - started;
    };
    for (let i = 0; i < 10; i++) await call(); // warm-up: bundles, connections, JIT
    const sequential: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) sequential.push(await call());
    reportLatency('sync call, one template step, sequential', sequential, 1);
    // CONCURRENT callers, each making 5 calls back to back.
    const burst = (await Promise.all(Array.from({ length: CONCURRENT }, async () => {
      const mine: number[] = [];
      for (let i = 0; i < 5; i++) mine.push(await call());
      return mine;
    }))).flat();
    reportLatency(`sync call, one template step, ${CONCURRENT} concurrent callers x 5`, burst, 1);
  } finally {
    await fg.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
