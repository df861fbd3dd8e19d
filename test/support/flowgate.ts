/**
 * Starts a whole flowgate (registry, worker, gateway on a free port) against the suite's Temporal
 * server, with a fresh data dir and task queue, and offers typed HTTP helpers over real loopback.
 */
import { FIXTURE_DATA_KEYS } from './histories';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../../src/config/config';
import { silentLogger, createLogger, type Logger } from '../../src/observability/logger';
import { startFlowgate, type Flowgate, type StartOptions } from '../../src/app/start';
import { temporalAddress } from '../setup/root-hooks';
import { recordHistoriesDir, recordHistoryPath } from './ci';

export interface TestFlowgate extends Flowgate {
  url: string;
  adminToken: string;
  dataDir: string;
  taskQueue: string;
  /** fetch relative to the gateway */
  request(pathname: string, init?: RequestInit): Promise<Response>;
  stop(keepData?: boolean): Promise<void>;
  admin<T = unknown>(method: string, pathname: string, body?: unknown): Promise<{ status: number; body: T }>;
}

export interface TestStartOptions extends Pick<StartOptions, 'worker' | 'serverKinds' | 'taskKinds' | 'serverSources' | 'stepKinds'> {
  /** where the instance logs; default: nowhere, or at debug level to the console with FLOWGATE_TEST_LOG */
  log?: Logger;
  /** start on a stopped instance's data dir, task queue and admin token: a restart */
  restartOf?: Pick<TestFlowgate, 'dataDir' | 'taskQueue' | 'adminToken'>;
  /** the registry to use instead of the data dir's SQLite file (a PostgreSQL schema of the test's own, say) */
  database?: Config['database'];
}

export async function startTestFlowgate(env: Record<string, string> = {}, options: TestStartOptions = {}): Promise<TestFlowgate> {
  const dataDir = options.restartOf?.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'flowgate-test-'));
  const adminToken = options.restartOf?.adminToken ?? `fga_test_${randomUUID()}`;
  const taskQueue = options.restartOf?.taskQueue ?? `test-${randomUUID()}`;
  const loaded = loadConfig({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: '0',
    FLOWGATE_DATA_DIR: dataDir,
    FLOWGATE_ADMIN_TOKEN: adminToken,
    TEMPORAL_ADDRESS: temporalAddress(),
    FLOWGATE_TASK_QUEUE: taskQueue,
    FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true',
    // Rate limiting is off by default here: many tests (the fuzz test, say) fire far more than a
    // burst's worth of calls with one key. Tests of the limiter pass their own value.
    FLOWGATE_RATE_LIMIT_PER_MINUTE: '0',
    // A history recorded for the replay tests is kept in clear, so that it replays without this
    // instance's data key (a test that records a sealed one says FLOWGATE_DATA_ENCRYPTION=on).
    // Every test instance shares one key ring, as a deployment's replicas do: they all run on the
    // suite's one Temporal namespace, and each reads the runs the others list there.
    FLOWGATE_DATA_KEYS: FIXTURE_DATA_KEYS,
    ...(recordHistoryPath() !== undefined || recordHistoriesDir() !== undefined ? { FLOWGATE_DATA_ENCRYPTION: 'off' } : {}),
    ...env,
  });
  const config = options.database ? { ...loaded, database: options.database } : loaded;
  const log = options.log ?? (process.env.FLOWGATE_TEST_LOG ? createLogger('debug') : silentLogger);
  const flowgate = await startFlowgate(config, log, { worker: options.worker, serverKinds: options.serverKinds, taskKinds: options.taskKinds, serverSources: options.serverSources, stepKinds: options.stepKinds });
  const url = flowgate.url;
  if (!url) throw new Error('the test flowgate has no gateway');
  const request = (pathname: string, init?: RequestInit): Promise<Response> => fetch(`${url}${pathname}`, init);
  return {
    ...flowgate,
    url,
    adminToken,
    dataDir,
    taskQueue,
    request,
    admin: <T>(method: string, pathname: string, body?: unknown) => adminCall<T>(request, adminToken, method, pathname, body),
    /** stops everything; the data dir is removed unless `keepData` (a restart will reuse it) */
    async stop(keepData = false) {
      await flowgate.stop();
      if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Published {
  workflowId: string;
  triggerId: string;
  apiKey: string;
  apiKeyId: string;
  version: number;
  stepMap: Record<string, number>;
}

/** Creates, publishes and triggers a workflow; returns an API key to call it with. */
async function adminCall<T>(request: TestFlowgate['request'], adminToken: string, method: string, pathname: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await request(pathname, {
    method,
    headers: { Authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** The same flowgate seen as another organization's administrator (publishWorkflow etc. then act for it). */
export function asAdminOf(fg: TestFlowgate, adminToken: string): TestFlowgate {
  return { ...fg, adminToken, admin: <T>(method: string, pathname: string, body?: unknown) => adminCall<T>(fg.request, adminToken, method, pathname, body) };
}

export async function publishWorkflow(fg: TestFlowgate, definition: unknown, trigger: Record<string, unknown> = {}): Promise<Published> {
  const created = await fg.admin<{ id: string }>('POST', '/api/v1/workflows', definition);
  if (created.status !== 201) throw new Error(`create workflow: ${created.status} ${JSON.stringify(created.body)}`);
  const published = await fg.admin<{ version: number; stepMap: Record<string, number> }>('POST', `/api/v1/workflows/${created.body.id}/publish`);
  if (published.status !== 201) throw new Error(`publish: ${published.status} ${JSON.stringify(published.body)}`);
  const triggered = await fg.admin<{ id: string }>('POST', '/api/v1/triggers', { workflowId: created.body.id, ...trigger });
  if (triggered.status !== 201) throw new Error(`trigger: ${triggered.status} ${JSON.stringify(triggered.body)}`);
  const key = await fg.admin<{ id: string; key: string }>('POST', '/api/v1/api-keys', { name: 'test' });
  if (key.status !== 201) throw new Error(`api key: ${key.status} ${JSON.stringify(key.body)}`);
  return {
    workflowId: created.body.id, triggerId: triggered.body.id, apiKey: key.body.key, apiKeyId: key.body.id,
    version: published.body.version, stepMap: published.body.stepMap,
  };
}

export async function trigger(fg: TestFlowgate, p: Published, inputs?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fg.request(`/ext/triggers/${p.triggerId}`, {
    method: 'POST',
    headers: { 'X-API-KEY': p.apiKey, ...(inputs === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: inputs === undefined ? undefined : JSON.stringify(inputs),
  });
}

export async function getJson<T = Record<string, unknown>>(fg: TestFlowgate, pathname: string): Promise<{ status: number; body: T }> {
  const response = await fg.request(pathname);
  return { status: response.status, body: (await response.json()) as T };
}

export interface StatusBody {
  automationId: string;
  runId: string;
  status: string;
  error?: string;
  stepStatus: Record<string, string>;
  stepInfo: Record<string, { status: string; name: string; executionOrder: number | null }>;
}

/** Polls the status endpoint until `done` says so (or the deadline passes, which fails the test). */
export async function pollStatus(fg: TestFlowgate, p: Published, runId: string, done: (s: StatusBody) => boolean = (s) => ['COMPLETE', 'FAILED', 'TIMEOUT'].includes(s.status), timeoutMs = 60_000): Promise<StatusBody> {
  const deadline = Date.now() + timeoutMs;
  let last: StatusBody | undefined;
  while (Date.now() < deadline) {
    const { status, body } = await getJson<StatusBody>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/status`);
    if (status !== 200) throw new Error(`status endpoint answered ${status}: ${JSON.stringify(body)}`);
    last = body;
    if (done(body)) return body;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`run ${runId} did not reach the expected state; last seen ${JSON.stringify(last)}`);
}
