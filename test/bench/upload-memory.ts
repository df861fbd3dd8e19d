/**
 * `node dist/test/bench/upload-memory.js`: the gateway's memory while it receives 20 files of
 * 5 MiB at once, (a) as one multipart request of 20 files and (b) as 20 concurrent one-file
 * requests. flowgate (gateway and worker) runs in this process on the embedded stack; the uploads
 * come from a child process, so the numbers are the receiving side's only. RSS, heap and external
 * memory are sampled every 2 ms from just before the upload until the answers are in; the baseline
 * is taken after a GC (run with --expose-gc for it). Prints the numbers; asserts nothing.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { silentLogger } from '../../src/observability/logger';
import { startFlowgate } from '../../src/app/start';
import { freePort } from '../../temporal/ports';
import { MultipartBody, send } from '../support/multipart';

const MIB = 1024 * 1024;
const FILES = 20;
const FILE_BYTES = 5 * MIB;

async function sender(url: string, key: string, mode: string): Promise<void> {
  const file = (i: number) => ({ name: 'f', filename: `file-${i}.dat`, contentType: 'application/octet-stream', size: FILE_BYTES, fill: 0x41 + i });
  const bodies = mode === 'one-request'
    ? [new MultipartBody(Array.from({ length: FILES }, (_, i) => file(i)))]
    : Array.from({ length: FILES }, (_, i) => new MultipartBody([file(i)]));
  const answers = await Promise.all(bodies.map((body) => send(url, { 'X-API-KEY': key }, body)));
  const statuses = answers.map((a) => a.status);
  if (statuses.some((s) => s !== 200)) throw new Error(`unexpected answers: ${statuses.join(',')} ${answers[0]?.text}`);
}

const mb = (n: number): string => `${(n / MIB).toFixed(1)} MiB`;

async function measure(url: string, key: string, mode: string): Promise<void> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage();
  const peak = { rss: base.rss, heapUsed: base.heapUsed, external: base.external, arrayBuffers: base.arrayBuffers };
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    peak.rss = Math.max(peak.rss, m.rss);
    peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed);
    peak.external = Math.max(peak.external, m.external);
    peak.arrayBuffers = Math.max(peak.arrayBuffers, m.arrayBuffers);
  }, 2);
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [__filename, 'send', url, key, mode], { stdio: 'inherit' });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`sender exited with ${code}`))));
  });
  clearInterval(timer);
  const ms = performance.now() - started;
  console.log(`${mode}: ${FILES} x ${mb(FILE_BYTES)} received in ${ms.toFixed(0)} ms; gateway process`
    + ` rss ${mb(base.rss)} -> peak ${mb(peak.rss)} (+${mb(peak.rss - base.rss)}),`
    + ` heapUsed ${mb(base.heapUsed)} -> peak ${mb(peak.heapUsed)} (+${mb(peak.heapUsed - base.heapUsed)}),`
    + ` external ${mb(base.external)} -> peak ${mb(peak.external)} (+${mb(peak.external - base.external)}),`
    + ` arrayBuffers peak +${mb(peak.arrayBuffers - base.arrayBuffers)}`);
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-bench-'));
  const token = 'fga_bench_token_0123456789';
  const config = loadConfig({
    ...process.env, PORT: '0', FLOWGATE_DATA_DIR: dataDir, FLOWGATE_ADMIN_TOKEN: token,
    ...(process.env.TEMPORAL_ADDRESS ? {} : { TEMPORAL_DEV_PORT: String(await freePort()), TEMPORAL_UI_PORT: String(await freePort()) }),
    // 20 concurrent requests share one key: limiting could refuse some and skew the measurement.
    FLOWGATE_RATE_LIMIT_PER_MINUTE: '0',
    // the load generator is one address: a connection limit per address would refuse its callers too
    FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS: '0',
  });
  const fg = await startFlowgate(config, silentLogger);
  try {
    const admin = async <T>(method: string, pathname: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${fg.url}${pathname}`, { method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return (await res.json()) as T;
    };
    const wf = await admin<{ id: string }>('POST', '/api/v1/workflows', { name: 'bench-upload', steps: [{ name: 'Count', type: 'template', template: '{{inputs.attachments}}' }] });
    await admin('POST', `/api/v1/workflows/${wf.id}/publish`);
    const trigger = await admin<{ id: string }>('POST', '/api/v1/triggers', { workflowId: wf.id });
    const { key } = await admin<{ key: string }>('POST', '/api/v1/api-keys', {});
    const url = `${fg.url}/ext/triggers/${trigger.id}`;
    // warm-up: code paths, JIT, the worker's bundle
    await new Promise<void>((resolve) => {
      const child = spawn(process.execPath, [__filename, 'send', url, key, 'one-request'], { stdio: 'inherit' });
      child.on('exit', () => resolve());
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const mode of ['one-request', 'concurrent-requests', 'one-request']) await measure(url, key, mode);
    // FLOWGATE_BLOB_STORE=s3://… (with FLOWGATE_S3_* and AWS_* set) measures the S3 store instead.
    if (config.blobStore.kind === 'local') console.log(`stored: ${execFileSync('du', ['-sh', path.join(dataDir, 'blobs', 'attachments')]).toString().trim()}`);
    else console.log(`stored in s3://${config.blobStore.bucket}/${config.blobStore.prefix}`);
  } finally {
    await fg.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'send') {
  sender(process.argv[3] ?? '', process.argv[4] ?? '', process.argv[5] ?? 'one-request').catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
