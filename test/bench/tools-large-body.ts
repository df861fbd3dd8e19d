/**
 * `npm run build && node dist/test/bench/tools-large-body.js`: one `codeagent_create_agent` call
 * with five 15 MiB images (a JSON-RPC body of about 100 MB) through the HTTP tool gateway to a fake
 * Cloud Agents backend, on the embedded stack `npm start` runs. The caller and the fake backend
 * run in a child process, so their own JSON work does not land on the gateway's event loop.
 * Prints, per call, how long it took and the longest the gateway's event loop was held while it
 * ran (and the gateway's resident memory afterwards); asserts nothing.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig } from '../../src/config/config';
import { silentLogger } from '../../src/observability/logger';
import { startFlowgate } from '../../src/app/start';
import { freePort } from '../../temporal/ports';
import { startFakeCodeAgent } from '../support/fake-codeagent';

const CALLS = Number(process.env.BENCH_CALLS ?? 3);
const ADMIN = 'fga_bench_token_0123456789';
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

type ToChild = { kind: 'go'; url: string; token: string; pcid: string };
type FromChild = { kind: 'backend'; url: string; apiKey: string } | { kind: 'calling' } | { kind: 'called'; ms: number; bytes: number; status: number } | { kind: 'done' };

/** The child: the fake backend, then the calls, one at a time. */
async function child(): Promise<void> {
  const send = (message: FromChild): void => {
    process.send?.(message);
  };
  const backend = await startFakeCodeAgent({ runMs: 60_000 });
  const go = new Promise<ToChild>((resolve) => process.once('message', (m: ToChild) => resolve(m)));
  send({ kind: 'backend', url: backend.url, apiKey: backend.apiKey });
  const { url, token, pcid } = await go;
  const images = Array.from({ length: 5 }, (_, i) => {
    const image = Buffer.alloc(15 * 1024 * 1024, i + 1);
    PNG.copy(image);
    return { data: image.toString('base64'), mimeType: 'image/png' };
  });
  for (let i = 0; i < CALLS; i++) {
    const body = JSON.stringify({
      jsonrpc: '2.0', id: i + 1, method: 'tools/call',
      params: { name: 'codeagent_create_agent', arguments: { PCID: pcid, prompt: { text: `Match the mock-ups (${i + 1})`, images }, repos: [{ url: 'https://github.com/acme/widgets' }] } },
    });
    send({ kind: 'calling' });
    const started = performance.now();
    const response = await fetch(`${url}/tools/codeagent`, {
      method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json' }, body,
    });
    const answer = (await response.json()) as { result?: { isError?: boolean }; error?: unknown };
    const ms = performance.now() - started;
    if (response.status !== 200 || answer.result?.isError !== false) throw new Error(`unexpected answer ${response.status} ${JSON.stringify(answer).slice(0, 500)}`);
    send({ kind: 'called', ms, bytes: Buffer.byteLength(body), status: response.status });
  }
  await backend.close();
  send({ kind: 'done' });
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-bench-large-'));
  const config = loadConfig({
    ...process.env, PORT: '0', FLOWGATE_DATA_DIR: dataDir, FLOWGATE_ADMIN_TOKEN: ADMIN, FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true',
    TEMPORAL_ADDRESS: undefined, TEMPORAL_DEV_PORT: String(await freePort()), TEMPORAL_UI_PORT: String(await freePort()),
  });
  const fg = await startFlowgate(config, silentLogger, {});
  const admin = (method: string, pathname: string, body?: unknown): Promise<Response> => fetch(`${fg.url}${pathname}`, {
    method, headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const delay = monitorEventLoopDelay({ resolution: 5 });
  try {
    const { key } = (await (await admin('POST', '/api/v1/api-keys', {})).json()) as { key: string };
    const { token } = (await (await fetch(`${fg.url}/auth/token`, { method: 'POST', headers: { 'X-API-KEY': key } })).json()) as { token: string };
    const worker = fork(__filename, [], { env: { ...process.env, BENCH_CHILD: '1' } });
    const exited = new Promise<number | null>((resolve) => worker.once('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (message: FromChild) => {
        void (async () => {
          if (message.kind === 'backend') {
            const created = (await (await admin('POST', '/api/v1/connections', { application: 'codeagent', credentials: { apiKey: message.apiKey, baseUrl: message.url } })).json()) as { PCID: string };
            worker.send({ kind: 'go', url: fg.url ?? '', token, pcid: created.PCID } satisfies ToChild);
          } else if (message.kind === 'calling') {
            delay.reset();
            delay.enable();
          } else if (message.kind === 'called') {
            delay.disable();
            const rss = process.memoryUsage().rss / (1024 * 1024);
            console.log(`codeagent_create_agent, ${(message.bytes / 1e6).toFixed(1)} MB body: ${message.ms.toFixed(0)} ms; the gateway's event loop held at most ${(delay.max / 1e6).toFixed(0)} ms `
              + `(mean delay ${(delay.mean / 1e6).toFixed(1)} ms); gateway RSS ${rss.toFixed(0)} MiB`);
          } else {
            resolve();
          }
        })().catch(reject);
      });
      void exited.then((code) => (code === 0 ? resolve() : reject(new Error(`the child exited with ${code}`))));
    });
    await exited;
  } finally {
    await fg.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

(process.env.BENCH_CHILD ? child() : main()).catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
