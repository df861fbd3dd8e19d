/**
 * Configuration, read once from the environment at start, validated with zod and frozen.
 * Nothing else in flowgate reads `process.env` (STYLE.md, convention 4).
 *
 * One piece (over 300 lines): the environment schema describes every variable once (docs/configuration.md
 * is tested against it); split, a variable's description, default and bounds would drift apart.
 */
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { parseConnectionKey, parseDataKeys, parseSigningKey, SIGNING_KEY_MIN_BYTES } from './key-text';
import { parsePriceTable, type PriceTable } from '../llm/prices';
import { DEFAULT_WORKER_MEMORY_MB, MIN_WORKER_MEMORY_MB, workerMemoryPlan, type WorkerMemoryPlan } from './worker-memory';

const port = z.coerce.number().int().min(0).max(65535);
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');


/**
 * How long a gateway's call to Temporal keeps retrying while Temporal is unreachable before the
 * caller gets its 503 (Temporal's client would retry about 20 s; a trigger call then took 24-28 s).
 */
const DEFAULT_TEMPORAL_UNREACHABLE_MS = 2000;
/**
 * The longest pause between a gateway's attempts to reconnect to an unreachable Temporal (gRPC's
 * own grows to 120 s, so a gateway stayed away up to that long after Temporal came back).
 */
const DEFAULT_TEMPORAL_RECONNECT_MS = 1000;

/** Every variable flowgate reads; docs/configuration.md lists exactly these (test/docs.test.ts). */
export const EnvSchema = z.object({
  PORT: port.default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  FLOWGATE_DATA_DIR: z.string().min(1).default('./data'),
  FLOWGATE_PUBLIC_URL: z.url().optional(),
  FLOWGATE_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  TEMPORAL_TLS: bool.default(false),
  TEMPORAL_TLS_CERT_FILE: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY_FILE: z.string().min(1).optional(),
  TEMPORAL_TLS_CA_FILE: z.string().min(1).optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  FLOWGATE_TASK_QUEUE: z.string().min(1).default('flowgate'),
  TEMPORAL_DEV_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  TEMPORAL_CLI_PATH: z.string().min(1).optional(),
  TEMPORAL_SERVER_PATH: z.string().min(1).optional(),
  TEMPORAL_UI_SERVER_PATH: z.string().min(1).optional(),
  FLOWGATE_EMBEDDED_TEMPORAL: z.enum(['dev', 'postgres'], 'must be "dev" (SQLite in the data dir) or "postgres"').default('dev'),
  FLOWGATE_TEMPORAL_DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').default('postgres://postgres@127.0.0.1:5432/flowgate_temporal'),
  // fixed at a database's first start; Temporal refuses another count later
  FLOWGATE_TEMPORAL_HISTORY_SHARDS: z.coerce.number().int().min(1).max(16_384).optional(),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').optional(),
  FLOWGATE_REDIS_URL: z.string().regex(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL').optional(),
  FLOWGATE_SYNC_WAIT_SECONDS: z.coerce.number().int().min(1).max(60, 'must be at most 60 (the contract\'s window)').default(60),
  FLOWGATE_RESULT_URL_TTL_SECONDS: z.coerce.number().int().min(60).max(7 * 24 * 3600).default(3600),
  FLOWGATE_CONSOLE_SESSION_MINUTES: z.coerce.number().int().min(5).max(30 * 24 * 60).default(480),
  // dynamically registered OAuth clients (src/oauth/clients.ts): not yet used, at once; holding live grants, per organization
  FLOWGATE_OAUTH_PENDING_CLIENTS: z.coerce.number().int().min(1).max(1_000_000).default(1000),
  FLOWGATE_OAUTH_CLIENTS_PER_ORG: z.coerce.number().int().min(1).max(1_000_000).default(1000),
  FLOWGATE_ALLOW_PRIVATE_NETWORK: bool.default(false),
  FLOWGATE_TOOLS_BASE_PATH: z.string().regex(/^\/[A-Za-z0-9/_-]*$/).default('/tools'),
  // origins (scheme://host[:port]) besides the public URL's whose requests the MCP and OAuth endpoints take (DNS rebinding protection)
  FLOWGATE_ALLOWED_ORIGINS: z.string().refine((v) => v.split(',').every((o) => o.trim() === '' || isOrigin(o.trim())),
    'must be origins like https://app.example.com, comma-separated (no path)').optional(),
  // Host headers besides the public URL's that the MCP and OAuth endpoints take: host or host:port, comma-separated; * takes any
  FLOWGATE_ALLOWED_HOSTS: z.string().refine((v) => v.trim() === '*' || v.split(',').every((h) => h.trim() === '' || isHostHeader(h.trim())),
    'must be * or hosts like flowgate.internal or 10.0.0.5:8080, comma-separated').optional(),
  // MB of tool-gateway request bodies over 4 MiB (codeagent calls with images) one process holds at once; 0: none taken
  FLOWGATE_TOOLS_LARGE_BODIES_MB: z.coerce.number().int().min(0).max(65_536).default(256),
  FLOWGATE_SEARCH_URL: z.url().optional(),
  FLOWGATE_SIGNING_KEY: z.string().refine((v) => parseSigningKey(v) !== undefined,
    `must be at least ${SIGNING_KEY_MIN_BYTES} bytes: ${SIGNING_KEY_MIN_BYTES * 2} or more hex digits, or base64 (openssl rand -base64 ${SIGNING_KEY_MIN_BYTES})`).optional(),
  FLOWGATE_CONNECTION_KEY: z.string().refine((v) => parseConnectionKey(v) !== undefined, 'must be 32 bytes: 64 hex digits or base64').optional(),
  FLOWGATE_DATA_ENCRYPTION: z.enum(['on', 'off']).default('on'),
  FLOWGATE_DATA_KEYS: z.string().superRefine((v, ctx) => {
    const keys = parseDataKeys(v);
    if (typeof keys === 'string') ctx.addIssue({ code: 'custom', message: `must be id:key entries, newest first, comma-separated: ${keys}` });
  }).optional(),
  // origins (scheme://host[:port]) of a Temporal Web UI allowed to call the codec endpoint, comma-separated
  FLOWGATE_TEMPORAL_UI_ORIGIN: z.string().refine((v) => v.split(',').every((o) => isOrigin(o.trim())), 'must be origins like https://temporal.example.com, comma-separated (no path)').optional(),
  FLOWGATE_MAX_CHAIN_DEPTH: z.coerce.number().int().min(1).max(100).default(8),
  FLOWGATE_ORG_MAX_RUNNING: z.coerce.number().int().min(0, 'must be at least 0 (0: no limit)').max(100_000).default(0),
  FLOWGATE_SLOT_CHECK_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  FLOWGATE_SLOT_MAX_WAIT_SECONDS: z.coerce.number().int().min(1).max(30 * 86_400).default(86_400),
  FLOWGATE_SCHEDULE_RECONCILE_SECONDS: z.coerce.number().int().min(0, 'must be at least 0 (0: only at start)').max(86_400).default(300),
  FLOWGATE_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0, 'must be at least 0 (0 turns rate limiting off)').default(600),
  FLOWGATE_RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(60),
  FLOWGATE_LLM_BASE_URL: z.url().optional(),
  FLOWGATE_LLM_API_KEY: z.string().min(1).optional(),
  FLOWGATE_LLM_MODEL: z.string().min(1).max(200).optional(),
  FLOWGATE_LLM_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(600).default(120),
  FLOWGATE_AGENT_WAIT_SECONDS: z.coerce.number().int().min(0).max(60, 'must be at most 60 (the contract\'s window)').default(50),
  FLOWGATE_MODEL_PRICES: z.string().transform((value, ctx) => {
    try {
      return parsePriceTable(value);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `not a price table: ${error instanceof Error ? error.message : String(error)}` });
      return z.NEVER;
    }
  }).optional(),
  FLOWGATE_LIVE_POLL_MS: z.coerce.number().int().min(100).max(10_000).default(500),
  // longer than the 60 s idle timeout of common load balancers, which must never find a connection the gateway just closed
  FLOWGATE_KEEP_ALIVE_SECONDS: z.coerce.number().int().min(1).max(600).default(65),
  // a request's headers must be in within this long: a slow mobile link's retransmissions (1+2+4+8 s) fit, a header drip does not
  FLOWGATE_HEADERS_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(600).default(20),
  // a request body may pause this long: a stall past it is a dead link or a client holding the socket on purpose
  FLOWGATE_BODY_IDLE_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(900).default(30),
  // open connections per client address (0: no limit, which is what a gateway behind a load balancer or proxy needs)
  FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(0).max(1_000_000).default(100),
  FLOWGATE_TASKS_PAGE_SIZE: z.coerce.number().int().min(1).max(500).default(50),
  // a task's longest ttl (and the ttl of one that asks for none): 7 days; at most a year
  FLOWGATE_TASKS_MAX_TTL_SECONDS: z.coerce.number().int().min(1).max(365 * 24 * 3600).default(7 * 24 * 3600),
  FLOWGATE_ROLE: z.enum(['all', 'gateway', 'worker']).default('all'),
  FLOWGATE_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  FLOWGATE_CACHE_DIR: z.string().min(1).optional(),
  FLOWGATE_TEMPORAL_UNREACHABLE_MS: z.coerce.number().int().min(100).max(60_000).default(DEFAULT_TEMPORAL_UNREACHABLE_MS),
  FLOWGATE_TEMPORAL_RECONNECT_MS: z.coerce.number().int().min(100).max(120_000).default(DEFAULT_TEMPORAL_RECONNECT_MS),
  FLOWGATE_WORKER_WORKFLOW_TASK_SLOTS: z.coerce.number().int().min(2).max(10_000).optional(),
  FLOWGATE_WORKER_ACTIVITY_SLOTS: z.coerce.number().int().min(1).max(10_000).optional(),
  FLOWGATE_WORKER_MEMORY_MB: z.coerce.number().int().min(MIN_WORKER_MEMORY_MB).max(1_048_576).default(DEFAULT_WORKER_MEMORY_MB),
  // unset: derived from FLOWGATE_WORKER_MEMORY_MB (src/config/worker-memory.ts)
  FLOWGATE_WORKER_CACHED_WORKFLOWS: z.coerce.number().int().min(0).max(100_000).refine((n) => n !== 1, 'must be 0 (no cache) or at least 2').optional(),
  XDG_CACHE_HOME: z.string().min(1).optional(),
  HOME: z.string().min(1).optional(),
  PATH: z.string().default(''),
  FLOWGATE_METRICS_PORT: port.optional(),
  FLOWGATE_METRICS_HOST: z.string().min(1).optional(),
  FLOWGATE_TEMPORAL_METRICS_ADDRESS: z.string().regex(/^[^\s:]+:\d{1,5}$/, 'must be host:port').optional(),
  // OpenTelemetry's standard variables (the subset flowgate honours; docs/operations.md "Traces")
  OTEL_SDK_DISABLED: bool.optional(),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none'], 'must be "otlp" or "none" (the only trace exporters flowgate has)').optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: z.string().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default('flowgate'),
  OTEL_RESOURCE_ATTRIBUTES: z.string().optional(),
  FLOWGATE_BLOB_STORE: z.string().regex(/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[A-Za-z0-9._-]+)*\/?$/, 'must be s3://bucket or s3://bucket/prefix (unset: the data dir)').optional(),
  FLOWGATE_S3_ENDPOINT: z.url().optional(),
  FLOWGATE_S3_REGION: z.string().min(1).optional(),
  AWS_REGION: z.string().min(1).optional(),
  AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  AWS_SESSION_TOKEN: z.string().min(1).optional(),
  AWS_DEFAULT_REGION: z.string().min(1).optional(),
  FLOWGATE_S3_FORCE_PATH_STYLE: bool.default(false),
  FLOWGATE_S3_DOWNLOADS: z.enum(['proxy', 'redirect']).default('proxy'),
  FLOWGATE_RETENTION: z.enum(['on', 'off']).default('on'),
  FLOWGATE_RETENTION_STEP_FILES_DAYS: z.coerce.number().int().min(1).max(36_500).default(30),
  FLOWGATE_RETENTION_FINISHED_RUNS_DAYS: z.coerce.number().int().min(1).max(36_500).default(30),
  FLOWGATE_AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(365),
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(0).max(600_000).default(5000),
});

function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text.replace(/\/$/, '');
  } catch {
    return false;
  }
}

/** What a Host header may name: a DNS name, an IPv4 address or a bracketed IPv6 one, and a port. */
function isHostHeader(text: string): boolean {
  return /^([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/.test(text);
}

/** `key=value,key=value` with percent-encoded parts (the OTel format of headers and resource attributes). */
function keyValueList(text: string | undefined, variable: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of (text ?? '').split(',')) {
    if (item.trim() === '') continue;
    const at = item.indexOf('=');
    if (at <= 0) throw new ConfigError(`invalid configuration: ${variable}: an entry is not key=value`);
    try {
      out[decodeURIComponent(item.slice(0, at).trim())] = decodeURIComponent(item.slice(at + 1).trim());
    } catch {
      throw new ConfigError(`invalid configuration: ${variable}: an entry is not valid percent-encoding`);
    }
  }
  return out;
}

/** On with OTEL_TRACES_EXPORTER=otlp, or when an OTLP endpoint is set and the exporter is not "none". */
function tracingConfig(e: z.infer<typeof EnvSchema>): Config['tracing'] {
  if (e.OTEL_SDK_DISABLED) return undefined;
  const endpointSet = e.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined || e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined;
  if (e.OTEL_TRACES_EXPORTER === 'none' || (e.OTEL_TRACES_EXPORTER === undefined && !endpointSet)) return undefined;
  // The signal-specific endpoint is used as given; the general one gets /v1/traces appended (OTLP spec).
  const tracesUrl = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
    ?? `${(e.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`;
  return {
    tracesUrl,
    serviceName: e.OTEL_SERVICE_NAME,
    headers: { ...keyValueList(e.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS'), ...keyValueList(e.OTEL_EXPORTER_OTLP_TRACES_HEADERS, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS') },
    resourceAttributes: keyValueList(e.OTEL_RESOURCE_ATTRIBUTES, 'OTEL_RESOURCE_ATTRIBUTES'),
    scheduledDelayMs: e.OTEL_BSP_SCHEDULE_DELAY,
  };
}

function blobStoreConfig(e: z.infer<typeof EnvSchema>, dataDir: string): Config['blobStore'] {
  if (!e.FLOWGATE_BLOB_STORE) {
    const s3Only = (['FLOWGATE_S3_ENDPOINT', 'FLOWGATE_S3_REGION'] as const).filter((name) => e[name] !== undefined);
    if (s3Only.length > 0) throw new ConfigError(`invalid configuration: ${s3Only.join(', ')}: set FLOWGATE_BLOB_STORE=s3://bucket too`);
    return { kind: 'local', root: path.join(dataDir, 'blobs') };
  }
  const [bucket = '', ...rest] = e.FLOWGATE_BLOB_STORE.slice('s3://'.length).replace(/\/+$/, '').split('/');
  return {
    kind: 's3', bucket, prefix: rest.join('/'), endpoint: e.FLOWGATE_S3_ENDPOINT,
    region: e.FLOWGATE_S3_REGION ?? e.AWS_REGION ?? e.AWS_DEFAULT_REGION ?? 'us-east-1',
    forcePathStyle: e.FLOWGATE_S3_FORCE_PATH_STYLE, downloads: e.FLOWGATE_S3_DOWNLOADS,
    spoolDir: path.join(dataDir, 'spool'),
    ...(e.AWS_ACCESS_KEY_ID && e.AWS_SECRET_ACCESS_KEY
      ? { credentials: { accessKeyId: e.AWS_ACCESS_KEY_ID, secretAccessKey: e.AWS_SECRET_ACCESS_KEY, ...(e.AWS_SESSION_TOKEN ? { sessionToken: e.AWS_SESSION_TOKEN } : {}) } }
      : {}),
  };
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** base of absolute URLs handed out, without a trailing slash; unset: http://HOST:PORT of the listener */
  publicUrl?: string;
  adminToken?: string;
  temporal: {
    /** undefined: start the embedded Temporal (temporal/embedded.ts) */
    address?: string;
    namespace: string;
    apiKey?: string;
    /** TLS to the frontend: set, or implied by an API key or any TEMPORAL_TLS_* file */
    tls: boolean;
    /** mTLS client certificate and key (PEM files, absolute paths), e.g. for Temporal Cloud */
    tlsCertFile?: string;
    tlsKeyFile?: string;
    /** a CA bundle (PEM) for a self-hosted cluster's own certificate authority */
    tlsCaFile?: string;
    /** the name the server's certificate must carry, when it is not the address's host */
    tlsServerName?: string;
    taskQueue: string;
    devPort: number;
    uiPort: number;
    cliPath?: string;
    /** TEMPORAL_SERVER_PATH: a Temporal server binary (its SQL tool and schemas beside it) instead of the cached build */
    serverPath?: string;
    /** TEMPORAL_UI_SERVER_PATH: a Temporal Web UI server binary instead of the cached build */
    uiServerPath?: string;
    /** the embedded Temporal's shape when address is unset (temporal/embedded.ts) */
    embedded: 'dev' | 'postgres';
    /** the `postgres` shape's PostgreSQL (its database and `<database>_visibility`) */
    embeddedDatabaseUrl: string;
    /** the embedded Temporal's history shards (default 1 on SQLite, 4 on PostgreSQL) */
    historyShards?: number;
    /** where built Temporal binaries are cached, outside any clone */
    cacheDir: string;
    /** the PATH to search for a `temporal` binary */
    searchPath: string;
    /** the worker's sticky cache of workflow executions (0: none): FLOWGATE_WORKER_CACHED_WORKFLOWS, else the memory plan's */
    maxCachedWorkflows: number;
    /** FLOWGATE_WORKER_MEMORY_MB and what is derived from it (src/config/worker-memory.ts) */
    workerMemory: WorkerMemoryPlan;
    /** workflow tasks a worker runs at once (unset: the SDK's default, 40) */
    workflowTaskSlots?: number;
    /** activities (local ones too) a worker runs at once (unset: the SDK's default, 100) */
    activitySlots?: number;
    /** how long a gateway's Temporal call retries an unreachable Temporal before it fails (the caller's 503) */
    unreachableMs: number;
    /** the longest pause between a gateway's attempts to reconnect to an unreachable Temporal */
    reconnectMs: number;
  };
  /** `schema`: tests give each registry a PostgreSQL schema of its own (never from the environment) */
  database: { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string; schema?: string };
  syncWaitSeconds: number;
  resultUrlTtlSeconds: number;
  /** how long a console sign-in lasts (docs/console.md) */
  consoleSessionMinutes: number;
  /** dynamically registered OAuth clients: at most `pending` never used at once, `perOrg` holding live grants per organization (src/oauth/clients.ts) */
  oauthClients: { pending: number; perOrg: number };
  allowPrivateNetwork: boolean;
  toolsBasePath: string;
  /**
   * Origins (besides the public URL's) whose requests the MCP and OAuth endpoints take, each as
   * URL.origin spells it (docs/tool-gateway.md "Origin and Host")
   */
  allowedOrigins: readonly string[];
  /** Host headers (besides the public URL's) those endpoints take, lowercase; `['*']`: any */
  allowedHosts: readonly string[];
  /**
   * Bytes of tool-gateway request bodies over the default 4 MiB that one process reads and holds at
   * once (a codeagent call with five 15 MB images is about 100 MB); a body past it is answered 503.
   */
  toolsLargeBodyBytes: number;
  /** a SearXNG-compatible JSON search endpoint; unset: no web-search server */
  searchUrl?: string;
  /**
   * signs file links, approval links and runtime tokens (hex or base64, at least 32 bytes, checked
   * here); unset: generated into <data>/secrets/signing.key
   */
  signingKey?: string;
  /** encrypts connection credentials; unset: generated into <data>/secrets/connection.key */
  connectionKey?: string;
  /**
   * Run data sealed before it reaches Temporal (src/crypto/payload-codec.ts). `keys`: the key ring,
   * `id:key` newest first (checked here); unset: generated into <data>/secrets/data.keys. enabled
   * false: payloads go in clear, sealed ones still open with the keys there are.
   */
  dataEncryption: { enabled: boolean; keys?: string };
  /** origins of a Temporal Web UI allowed to call the codec endpoint (besides the embedded Temporal's own Web UI) */
  temporalUiOrigins: string[];
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** how deep `trigger` steps may chain runs */
  /** how often the gateway brings Temporal schedules in line with the registry's (0: only at start) */
  scheduleReconcileSeconds: number;
  maxChainDepth: number;
  /**
   * Concurrency limits that queue (issue 36): at most `orgMaxRunning` runs of one organization in
   * progress (0: no limit); a limited run waits at most `slotMaxWaitSeconds` for its slots; each
   * limit's semaphore checks every `slotCheckSeconds` that its holders still run.
   */
  concurrency: { orgMaxRunning: number; slotMaxWaitSeconds: number; slotCheckSeconds: number };
  /**
   * A budget per presented credential; perMinute 0: no limiting. `shared` unset: a token bucket per
   * gateway process; set: every replica counts in Redis (FLOWGATE_REDIS_URL, preferred) or the
   * PostgreSQL registry (DATABASE_URL).
   */
  rateLimit: { perMinute: number; burst: number; shared?: { kind: 'redis'; url: string } | { kind: 'postgres'; url: string } };
  /**
   * The default model of agents: an OpenAI-compatible chat-completions endpoint. `model` unset:
   * agent_invoke fails with a message naming the variables (agents may still name their own).
   */
  llm: { baseUrl?: string; apiKey?: string; model?: string; timeoutMs: number };
  /** USD per million tokens of each model (FLOWGATE_MODEL_PRICES); a model without a price: tokens counted, cost null */
  modelPrices?: PriceTable;
  /** how long agent_invoke waits for an answer before it answers a handle instead */
  agentWaitSeconds: number;
  /** how often a gateway reads an open run that long polls or status streams are waiting on (one reader per run) */
  livePollMs: number;
  /** how long the gateway keeps an idle keep-alive connection open */
  keepAliveMs: number;
  /** bounds on slow clients: headers in within headersTimeoutMs, no body pause over bodyIdleTimeoutMs, open connections per address (0: no limit) */
  inbound: { headersTimeoutMs: number; bodyIdleTimeoutMs: number; maxConnectionsPerAddress: number };
  /** MCP Tasks per tasks/list page */
  tasksPageSize: number;
  /** MCP Tasks: the longest ttl a task gets, and the ttl of one that asks for none */
  tasksMaxTtlSeconds: number;
  /** all: gateway and worker in one process; gateway or worker alone for scale-out */
  role: 'all' | 'gateway' | 'worker';
  metrics: {
    /** a listener of its own serving /metrics without credentials; unset: only the gateway's /metrics (admin token) */
    port?: number;
    host: string;
    /** host:port where the Temporal SDK's core serves its own Prometheus metrics; unset: not served */
    temporalAddress?: string;
  };
  /**
   * Where attachments and step files live: the data dir (`local`), or an S3-compatible bucket.
   * `downloads`: `/files/...` streams the object through the gateway (proxy) or answers 302 to a
   * presigned URL of the object store (redirect).
   */
  blobStore: { kind: 'local'; root: string } | {
    kind: 's3'; bucket: string; prefix: string; endpoint?: string; region: string; forcePathStyle: boolean;
    downloads: 'proxy' | 'redirect'; spoolDir: string;
    /** AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN); unset: the AWS SDK's default credential chain (profile, web identity, instance role) */
    credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  };
  /** What the retention sweep (a Temporal Schedule) deletes, and when; enabled false: no sweep. */
  retention: { enabled: boolean; stepFilesDays: number; finishedRunsDays: number; auditDays: number };
  /** OpenTelemetry traces; undefined: off */
  tracing?: {
    tracesUrl: string;
    serviceName: string;
    headers: Record<string, string>;
    resourceAttributes: Record<string, string>;
    scheduledDelayMs: number;
  };
}

export class ConfigError extends Error {}

/** Parses the environment; throws ConfigError naming every offending variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const blanksRemoved = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const parsed = EnvSchema.safeParse(blanksRemoved);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.FLOWGATE_DATA_DIR);
  const memory = workerMemoryPlan(e.FLOWGATE_WORKER_MEMORY_MB, e.FLOWGATE_WORKER_CACHED_WORKFLOWS);
  const config: Config = {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    publicUrl: e.FLOWGATE_PUBLIC_URL?.replace(/\/+$/, ''),
    adminToken: e.FLOWGATE_ADMIN_TOKEN,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      apiKey: e.TEMPORAL_API_KEY,
      tls: e.TEMPORAL_TLS || e.TEMPORAL_API_KEY !== undefined || [e.TEMPORAL_TLS_CERT_FILE, e.TEMPORAL_TLS_KEY_FILE, e.TEMPORAL_TLS_CA_FILE, e.TEMPORAL_TLS_SERVER_NAME].some((v) => v !== undefined),
      tlsCertFile: e.TEMPORAL_TLS_CERT_FILE === undefined ? undefined : path.resolve(e.TEMPORAL_TLS_CERT_FILE),
      tlsKeyFile: e.TEMPORAL_TLS_KEY_FILE === undefined ? undefined : path.resolve(e.TEMPORAL_TLS_KEY_FILE),
      tlsCaFile: e.TEMPORAL_TLS_CA_FILE === undefined ? undefined : path.resolve(e.TEMPORAL_TLS_CA_FILE),
      tlsServerName: e.TEMPORAL_TLS_SERVER_NAME,
      taskQueue: e.FLOWGATE_TASK_QUEUE,
      devPort: e.TEMPORAL_DEV_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      cliPath: e.TEMPORAL_CLI_PATH,
      serverPath: e.TEMPORAL_SERVER_PATH === undefined ? undefined : path.resolve(e.TEMPORAL_SERVER_PATH),
      uiServerPath: e.TEMPORAL_UI_SERVER_PATH === undefined ? undefined : path.resolve(e.TEMPORAL_UI_SERVER_PATH),
      embedded: e.FLOWGATE_EMBEDDED_TEMPORAL,
      embeddedDatabaseUrl: e.FLOWGATE_TEMPORAL_DATABASE_URL,
      historyShards: e.FLOWGATE_TEMPORAL_HISTORY_SHARDS,
      cacheDir: path.resolve(e.FLOWGATE_CACHE_DIR ?? path.join(e.XDG_CACHE_HOME ?? path.join(e.HOME ?? os.tmpdir(), '.cache'), 'flowgate')),
      searchPath: e.PATH,
      maxCachedWorkflows: memory.maxCachedWorkflows,
      workerMemory: memory,
      ...(e.FLOWGATE_WORKER_WORKFLOW_TASK_SLOTS === undefined ? {} : { workflowTaskSlots: e.FLOWGATE_WORKER_WORKFLOW_TASK_SLOTS }),
      ...(e.FLOWGATE_WORKER_ACTIVITY_SLOTS === undefined ? {} : { activitySlots: e.FLOWGATE_WORKER_ACTIVITY_SLOTS }),
      unreachableMs: e.FLOWGATE_TEMPORAL_UNREACHABLE_MS,
      reconnectMs: e.FLOWGATE_TEMPORAL_RECONNECT_MS,
    },
    database: e.DATABASE_URL ? { kind: 'postgres', url: e.DATABASE_URL } : { kind: 'sqlite', file: path.join(dataDir, 'registry.sqlite') },
    syncWaitSeconds: e.FLOWGATE_SYNC_WAIT_SECONDS,
    resultUrlTtlSeconds: e.FLOWGATE_RESULT_URL_TTL_SECONDS,
    consoleSessionMinutes: e.FLOWGATE_CONSOLE_SESSION_MINUTES,
    oauthClients: { pending: e.FLOWGATE_OAUTH_PENDING_CLIENTS, perOrg: e.FLOWGATE_OAUTH_CLIENTS_PER_ORG },
    allowPrivateNetwork: e.FLOWGATE_ALLOW_PRIVATE_NETWORK,
    toolsBasePath: e.FLOWGATE_TOOLS_BASE_PATH,
    allowedOrigins: listOf(e.FLOWGATE_ALLOWED_ORIGINS).map((o) => new URL(o).origin),
    allowedHosts: listOf(e.FLOWGATE_ALLOWED_HOSTS).map((h) => h.toLowerCase()),
    toolsLargeBodyBytes: e.FLOWGATE_TOOLS_LARGE_BODIES_MB * 1024 * 1024,
    searchUrl: e.FLOWGATE_SEARCH_URL,
    signingKey: e.FLOWGATE_SIGNING_KEY,
    connectionKey: e.FLOWGATE_CONNECTION_KEY,
    dataEncryption: { enabled: e.FLOWGATE_DATA_ENCRYPTION === 'on', keys: e.FLOWGATE_DATA_KEYS },
    temporalUiOrigins: (e.FLOWGATE_TEMPORAL_UI_ORIGIN ?? '').split(',').map((o) => o.trim().replace(/\/$/, '')).filter((o) => o !== ''),
    logLevel: e.FLOWGATE_LOG_LEVEL,
    role: e.FLOWGATE_ROLE,
    llm: { baseUrl: e.FLOWGATE_LLM_BASE_URL, apiKey: e.FLOWGATE_LLM_API_KEY, model: e.FLOWGATE_LLM_MODEL, timeoutMs: e.FLOWGATE_LLM_TIMEOUT_SECONDS * 1000 },
    ...(e.FLOWGATE_MODEL_PRICES === undefined ? {} : { modelPrices: e.FLOWGATE_MODEL_PRICES }),
    agentWaitSeconds: e.FLOWGATE_AGENT_WAIT_SECONDS,
    livePollMs: e.FLOWGATE_LIVE_POLL_MS,
    keepAliveMs: e.FLOWGATE_KEEP_ALIVE_SECONDS * 1000,
    inbound: {
      headersTimeoutMs: e.FLOWGATE_HEADERS_TIMEOUT_SECONDS * 1000, bodyIdleTimeoutMs: e.FLOWGATE_BODY_IDLE_TIMEOUT_SECONDS * 1000,
      maxConnectionsPerAddress: e.FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS,
    },
    tasksPageSize: e.FLOWGATE_TASKS_PAGE_SIZE,
    tasksMaxTtlSeconds: e.FLOWGATE_TASKS_MAX_TTL_SECONDS,
    maxChainDepth: e.FLOWGATE_MAX_CHAIN_DEPTH,
    concurrency: { orgMaxRunning: e.FLOWGATE_ORG_MAX_RUNNING, slotMaxWaitSeconds: e.FLOWGATE_SLOT_MAX_WAIT_SECONDS, slotCheckSeconds: e.FLOWGATE_SLOT_CHECK_SECONDS },
    scheduleReconcileSeconds: e.FLOWGATE_SCHEDULE_RECONCILE_SECONDS,
    rateLimit: {
      perMinute: e.FLOWGATE_RATE_LIMIT_PER_MINUTE, burst: e.FLOWGATE_RATE_LIMIT_BURST,
      ...(e.FLOWGATE_REDIS_URL ? { shared: { kind: 'redis', url: e.FLOWGATE_REDIS_URL } } : e.DATABASE_URL ? { shared: { kind: 'postgres', url: e.DATABASE_URL } } : {}),
    },
    metrics: { port: e.FLOWGATE_METRICS_PORT, host: e.FLOWGATE_METRICS_HOST ?? e.HOST, temporalAddress: e.FLOWGATE_TEMPORAL_METRICS_ADDRESS },
    blobStore: blobStoreConfig(e, dataDir),
    retention: { enabled: e.FLOWGATE_RETENTION === 'on', stepFilesDays: e.FLOWGATE_RETENTION_STEP_FILES_DAYS, finishedRunsDays: e.FLOWGATE_RETENTION_FINISHED_RUNS_DAYS, auditDays: e.FLOWGATE_AUDIT_RETENTION_DAYS },
    tracing: tracingConfig(e),
  };
  if ((e.TEMPORAL_TLS_CERT_FILE === undefined) !== (e.TEMPORAL_TLS_KEY_FILE === undefined)) {
    throw new ConfigError('invalid configuration: TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE: mTLS needs both the client certificate and its key');
  }
  if (config.role !== 'all' && !config.temporal.address) {
    throw new ConfigError(`invalid configuration: FLOWGATE_ROLE: a ${config.role}-only process needs TEMPORAL_ADDRESS (the embedded Temporal belongs to role "all")`);
  }
  return deepFreeze(config);
}

/** A comma-separated list's entries, trimmed, empty ones left out. */
function listOf(text: string | undefined): string[] {
  return (text ?? '').split(',').map((item) => item.trim()).filter((item) => item !== '');
}

function deepFreeze<T extends object>(value: T): Readonly<T> {
  const children: unknown[] = Object.values(value);
  for (const child of children) {
    if (child !== null && typeof child === 'object') deepFreeze(child);
  }
  return Object.freeze(value);
}
