import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/config';
import { CACHED_RUN_MB, cachedWorkflowsFor, WORKFLOW_THREAD_BASE_MB } from '../../src/config/worker-memory';

/** Asserts that loading `env` fails with a ConfigError and returns its message. */
function refusal(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    return err.message;
  }
  assert.fail(`expected ${JSON.stringify(env)} to be refused`);
}

describe('loadConfig', () => {
  it('listens on 127.0.0.1:8080 with a 60 s sync window when nothing is set', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.syncWaitSeconds, 60);
    assert.equal(config.dataDir, path.resolve('data'));
  });

  it('keeps the registry in SQLite under the data dir when DATABASE_URL is unset', () => {
    const dataDir = path.join(os.tmpdir(), `flowgate-config-${process.pid}`);
    const config = loadConfig({ FLOWGATE_DATA_DIR: dataDir });
    assert.equal(config.dataDir, dataDir);
    assert.deepEqual(config.database, { kind: 'sqlite', file: path.join(dataDir, 'registry.sqlite') });
  });

  it('uses PostgreSQL when DATABASE_URL is a postgres URL', () => {
    for (const url of ['postgres://u:p@db.example:5432/flowgate', 'postgresql://db.example/flowgate']) {
      assert.deepEqual(loadConfig({ DATABASE_URL: url }).database, { kind: 'postgres', url });
    }
  });

  it('refuses a DATABASE_URL that is not a postgres URL, naming the variable', () => {
    assert.match(refusal({ DATABASE_URL: 'mysql://db.example/flowgate' }), /DATABASE_URL/);
  });

  it('accepts a sync window of 60 s and refuses 61 s, naming FLOWGATE_SYNC_WAIT_SECONDS', () => {
    assert.equal(loadConfig({ FLOWGATE_SYNC_WAIT_SECONDS: '60' }).syncWaitSeconds, 60);
    assert.equal(loadConfig({ FLOWGATE_SYNC_WAIT_SECONDS: '1' }).syncWaitSeconds, 1);
    assert.match(refusal({ FLOWGATE_SYNC_WAIT_SECONDS: '61' }), /FLOWGATE_SYNC_WAIT_SECONDS/);
  });

  it('limits each credential to 600 requests a minute with a burst of 60 when nothing is set', () => {
    assert.deepEqual(loadConfig({}).rateLimit, { perMinute: 600, burst: 60 });
    assert.deepEqual(loadConfig({ FLOWGATE_RATE_LIMIT_PER_MINUTE: '60', FLOWGATE_RATE_LIMIT_BURST: '3' }).rateLimit, { perMinute: 60, burst: 3 });
  });

  it('shares the rate limit in Redis when FLOWGATE_REDIS_URL is set, else in PostgreSQL with DATABASE_URL', () => {
    const pg = 'postgres://u@db.example/flowgate';
    assert.deepEqual(loadConfig({ DATABASE_URL: pg }).rateLimit.shared, { kind: 'postgres', url: pg });
    assert.deepEqual(loadConfig({ DATABASE_URL: pg, FLOWGATE_REDIS_URL: 'redis://cache:6379/2' }).rateLimit.shared, { kind: 'redis', url: 'redis://cache:6379/2' });
    assert.deepEqual(loadConfig({ FLOWGATE_REDIS_URL: 'rediss://cache:6380' }).rateLimit.shared, { kind: 'redis', url: 'rediss://cache:6380' });
    assert.equal(loadConfig({}).rateLimit.shared, undefined, 'SQLite alone: per process');
    assert.throws(() => loadConfig({ FLOWGATE_REDIS_URL: 'http://cache:6379' }), /FLOWGATE_REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL/);
  });

  it('reads Temporal TLS: mTLS files (both or neither), a CA, a server name; each implies TLS', () => {
    const plain = loadConfig({ TEMPORAL_ADDRESS: 'temporal.internal:7233' }).temporal;
    assert.equal(plain.tls, false);
    const cloud = loadConfig({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_NAMESPACE: 'ns.acct', TEMPORAL_TLS_CERT_FILE: 'certs/client.pem', TEMPORAL_TLS_KEY_FILE: '/etc/flowgate/client.key' }).temporal;
    assert.equal(cloud.tls, true);
    assert.equal(cloud.tlsCertFile, path.resolve('certs/client.pem'), 'relative paths resolve against the working directory');
    assert.equal(cloud.tlsKeyFile, '/etc/flowgate/client.key');
    assert.equal(cloud.namespace, 'ns.acct');
    const selfHosted = loadConfig({ TEMPORAL_TLS_CA_FILE: '/etc/ca.pem', TEMPORAL_TLS_SERVER_NAME: 'temporal.corp' }).temporal;
    assert.equal(selfHosted.tls, true);
    assert.equal(selfHosted.tlsCaFile, '/etc/ca.pem');
    assert.equal(selfHosted.tlsServerName, 'temporal.corp');
    assert.equal(loadConfig({ TEMPORAL_API_KEY: 'key' }).temporal.tls, true, 'an API key implies TLS');
    assert.throws(() => loadConfig({ TEMPORAL_TLS_CERT_FILE: '/c.pem' }), /TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE/);
    assert.throws(() => loadConfig({ TEMPORAL_TLS_KEY_FILE: '/c.key' }), /TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE/);
  });

  it('takes FLOWGATE_SIGNING_KEY as 32 or more bytes in hex or base64, and refuses a shorter one without echoing it', () => {
    const hex = 'ab'.repeat(32);
    assert.equal(loadConfig({ FLOWGATE_SIGNING_KEY: hex }).signingKey, hex);
    assert.equal(loadConfig({}).signingKey, undefined, 'unset: the key file in the data dir');
    const base64 = Buffer.alloc(48, 7).toString('base64');
    assert.equal(loadConfig({ FLOWGATE_SIGNING_KEY: base64 }).signingKey, base64);
    for (const short of ['ab'.repeat(31), Buffer.alloc(31, 9).toString('base64'), 'secret-but-short', 'not a key at all, though long enough to be one!']) {
      const message = refusal({ FLOWGATE_SIGNING_KEY: short });
      assert.match(message, /FLOWGATE_SIGNING_KEY: must be at least 32 bytes/);
      assert.ok(!message.includes(short), 'the refused value is not repeated');
    }
  });

  it('takes FLOWGATE_RATE_LIMIT_PER_MINUTE=0 as limiting off, and refuses negative or fractional values, naming it', () => {
    assert.equal(loadConfig({ FLOWGATE_RATE_LIMIT_PER_MINUTE: '0' }).rateLimit.perMinute, 0);
    for (const value of ['-1', '1.5', 'many']) {
      assert.match(refusal({ FLOWGATE_RATE_LIMIT_PER_MINUTE: value }), /FLOWGATE_RATE_LIMIT_PER_MINUTE/, value);
    }
  });

  it('refuses a FLOWGATE_RATE_LIMIT_BURST below 1 or not an integer, naming it', () => {
    assert.equal(loadConfig({ FLOWGATE_RATE_LIMIT_BURST: '1' }).rateLimit.burst, 1);
    for (const value of ['0', '-5', '2.5', 'lots']) {
      assert.match(refusal({ FLOWGATE_RATE_LIMIT_BURST: value }), /FLOWGATE_RATE_LIMIT_BURST/, value);
    }
  });

  it('derives the worker\'s workflow heap, its cache and the code sandboxes\' share from FLOWGATE_WORKER_MEMORY_MB (768), refusing under 256', () => {
    const shipped = loadConfig({}).temporal;
    assert.deepEqual(shipped.workerMemory, { budgetMb: 768, workflowHeapMb: 307, maxCachedWorkflows: 345, sandboxMb: 192 });
    assert.equal(shipped.maxCachedWorkflows, 345);
    // the cache fills at most half of the workflow heap above its base, at 384 KiB a run
    const small = loadConfig({ FLOWGATE_WORKER_MEMORY_MB: '256' }).temporal;
    assert.deepEqual(small.workerMemory, { budgetMb: 256, workflowHeapMb: 102, maxCachedWorkflows: 72, sandboxMb: 64 });
    assert.ok(small.workerMemory.maxCachedWorkflows * CACHED_RUN_MB <= (small.workerMemory.workflowHeapMb - WORKFLOW_THREAD_BASE_MB) / 2);
    const large = loadConfig({ FLOWGATE_WORKER_MEMORY_MB: '4096' }).temporal.workerMemory;
    assert.equal(large.maxCachedWorkflows, cachedWorkflowsFor(large.workflowHeapMb));
    assert.equal(large.workflowHeapMb, 1638);
    // a cache size given wins over the derived one
    assert.equal(loadConfig({ FLOWGATE_WORKER_MEMORY_MB: '256', FLOWGATE_WORKER_CACHED_WORKFLOWS: '500' }).temporal.maxCachedWorkflows, 500);
    for (const value of ['255', '0', '1.5', 'lots']) {
      assert.match(refusal({ FLOWGATE_WORKER_MEMORY_MB: value }), /FLOWGATE_WORKER_MEMORY_MB/, value);
    }
  });

  it('takes 0 as no workflow cache, and refuses 1, naming FLOWGATE_WORKER_CACHED_WORKFLOWS', () => {
    assert.equal(loadConfig({ FLOWGATE_WORKER_CACHED_WORKFLOWS: '0' }).temporal.maxCachedWorkflows, 0);
    assert.match(refusal({ FLOWGATE_WORKER_CACHED_WORKFLOWS: '1' }), /FLOWGATE_WORKER_CACHED_WORKFLOWS: must be 0 \(no cache\) or at least 2/);
  });

  it('bounds slow clients at 20 s for headers, 30 s of body silence and 100 connections per address, 0 turning the last off', () => {
    assert.deepEqual(loadConfig({}).inbound, { headersTimeoutMs: 20_000, bodyIdleTimeoutMs: 30_000, maxConnectionsPerAddress: 100 });
    const set = loadConfig({ FLOWGATE_HEADERS_TIMEOUT_SECONDS: '5', FLOWGATE_BODY_IDLE_TIMEOUT_SECONDS: '90', FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS: '0' });
    assert.deepEqual(set.inbound, { headersTimeoutMs: 5000, bodyIdleTimeoutMs: 90_000, maxConnectionsPerAddress: 0 });
    for (const [name, value] of [['FLOWGATE_HEADERS_TIMEOUT_SECONDS', '0'], ['FLOWGATE_HEADERS_TIMEOUT_SECONDS', '601'], ['FLOWGATE_BODY_IDLE_TIMEOUT_SECONDS', '0'],
      ['FLOWGATE_BODY_IDLE_TIMEOUT_SECONDS', '1.5'], ['FLOWGATE_BODY_IDLE_TIMEOUT_SECONDS', '901'], ['FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS', '-1']] as const) {
      assert.match(refusal({ [name]: value }), new RegExp(name), `${name}=${value}`);
    }
  });

  it('gives up on an unreachable Temporal after 2 s and reconnects at most 1 s apart by default; refuses values outside their bounds, naming them', () => {
    assert.equal(loadConfig({}).temporal.unreachableMs, 2000);
    assert.equal(loadConfig({}).temporal.reconnectMs, 1000);
    assert.equal(loadConfig({ FLOWGATE_TEMPORAL_UNREACHABLE_MS: '500', FLOWGATE_TEMPORAL_RECONNECT_MS: '250' }).temporal.unreachableMs, 500);
    for (const value of ['50', '60001', '1.5', 'soon']) {
      assert.match(refusal({ FLOWGATE_TEMPORAL_UNREACHABLE_MS: value }), /FLOWGATE_TEMPORAL_UNREACHABLE_MS/, value);
      assert.match(refusal({ FLOWGATE_TEMPORAL_RECONNECT_MS: value === '60001' ? '120001' : value }), /FLOWGATE_TEMPORAL_RECONNECT_MS/, value);
    }
  });

  it('takes FLOWGATE_ALLOWED_ORIGINS as origins and FLOWGATE_ALLOWED_HOSTS as hosts or *, and refuses others, naming them', () => {
    assert.deepEqual([loadConfig({}).allowedOrigins, loadConfig({}).allowedHosts], [[], []]);
    const config = loadConfig({ FLOWGATE_ALLOWED_ORIGINS: ' https://app.example.com, http://localhost:6274/ ,', FLOWGATE_ALLOWED_HOSTS: 'Flowgate.Internal, 10.0.0.5:8080,[::1]:9' });
    assert.deepEqual(config.allowedOrigins, ['https://app.example.com', 'http://localhost:6274']);
    assert.deepEqual(config.allowedHosts, ['flowgate.internal', '10.0.0.5:8080', '[::1]:9']);
    assert.deepEqual(loadConfig({ FLOWGATE_ALLOWED_HOSTS: '*' }).allowedHosts, ['*']);
    for (const origin of ['https://app.example.com/path', 'app.example.com', 'ftp://files.example.com', 'https://a.example,*']) {
      assert.match(refusal({ FLOWGATE_ALLOWED_ORIGINS: origin }), /FLOWGATE_ALLOWED_ORIGINS: must be origins/, origin);
    }
    for (const host of ['http://flowgate.internal', 'flowgate.internal/x', 'a b', 'flowgate.internal,*', 'host:port']) {
      assert.match(refusal({ FLOWGATE_ALLOWED_HOSTS: host }), /FLOWGATE_ALLOWED_HOSTS: must be \* or hosts/, host);
    }
  });

  it('refuses a PORT that is not a number, naming PORT', () => {
    const message = refusal({ PORT: 'abc' });
    assert.match(message, /\bPORT\b/);
  });

  it('refuses a PORT outside 0–65535', () => {
    assert.match(refusal({ PORT: '65536' }), /\bPORT\b/);
    assert.match(refusal({ PORT: '-1' }), /\bPORT\b/);
  });

  it('names every offending variable in one message', () => {
    const message = refusal({
      PORT: 'abc',
      FLOWGATE_SYNC_WAIT_SECONDS: '61',
      DATABASE_URL: 'mysql://db.example/flowgate',
      FLOWGATE_LOG_LEVEL: 'loud',
      HOST: '0.0.0.0',
    });
    for (const name of ['PORT', 'FLOWGATE_SYNC_WAIT_SECONDS', 'DATABASE_URL', 'FLOWGATE_LOG_LEVEL']) {
      assert.match(message, new RegExp(`\\b${name}\\b`), `${name} is not named in: ${message}`);
    }
    assert.doesNotMatch(message, /\bHOST\b/, 'a valid variable is named as a problem');
  });

  it('returns a deeply frozen value', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://db.example/flowgate' });
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.temporal));
    assert.ok(Object.isFrozen(config.database));
    assert.throws(() => {
      (config as { port: number }).port = 1;
    }, TypeError);
    assert.throws(() => {
      (config.temporal as { namespace: string }).namespace = 'other';
    }, TypeError);
    assert.equal(config.port, 8080);
    assert.equal(config.temporal.namespace, 'default');
  });

  it('treats blank values as unset', () => {
    const config = loadConfig({
      PORT: '',
      HOST: '',
      FLOWGATE_SYNC_WAIT_SECONDS: '',
      DATABASE_URL: '',
      TEMPORAL_ADDRESS: '',
      FLOWGATE_ADMIN_TOKEN: '',
      TEMPORAL_TLS: '',
    });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.syncWaitSeconds, 60);
    assert.equal(config.database.kind, 'sqlite');
    assert.equal(config.temporal.address, undefined);
    assert.equal(config.adminToken, undefined);
    assert.equal(config.temporal.tls, false);
  });

  it('treats whitespace-only values as unset, not as zero', () => {
    assert.equal(loadConfig({ PORT: ' ' }).port, 8080);
    assert.equal(loadConfig({ FLOWGATE_SYNC_WAIT_SECONDS: '  ' }).syncWaitSeconds, 60);
  });
});

describe('config: blob store and retention', () => {
  it('defaults to the data dir and retention on (30 days for step files and finished runs)', () => {
    const config = loadConfig({ FLOWGATE_DATA_DIR: '/srv/flowgate' });
    assert.deepEqual(config.blobStore, { kind: 'local', root: path.join('/srv/flowgate', 'blobs') });
    assert.deepEqual(config.retention, { enabled: true, stepFilesDays: 30, finishedRunsDays: 30, auditDays: 365 });
  });

  it('reads an s3:// store with its endpoint, region, path style, download mode and AWS credentials', () => {
    const config = loadConfig({
      FLOWGATE_DATA_DIR: '/srv/flowgate', FLOWGATE_BLOB_STORE: 's3://my-bucket/flowgate/prod/', FLOWGATE_S3_ENDPOINT: 'http://127.0.0.1:7070',
      FLOWGATE_S3_FORCE_PATH_STYLE: 'true', FLOWGATE_S3_DOWNLOADS: 'redirect', AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret-example',
      FLOWGATE_RETENTION: 'off', FLOWGATE_RETENTION_STEP_FILES_DAYS: '7', FLOWGATE_RETENTION_FINISHED_RUNS_DAYS: '90', FLOWGATE_AUDIT_RETENTION_DAYS: '30',
    });
    assert.deepEqual(config.blobStore, {
      kind: 's3', bucket: 'my-bucket', prefix: 'flowgate/prod', endpoint: 'http://127.0.0.1:7070', region: 'eu-west-1',
      forcePathStyle: true, downloads: 'redirect', spoolDir: path.join('/srv/flowgate', 'spool'),
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret-example' },
    });
    assert.deepEqual(config.retention, { enabled: false, stepFilesDays: 7, finishedRunsDays: 90, auditDays: 30 });
    const plain = loadConfig({ FLOWGATE_BLOB_STORE: 's3://bucket' });
    assert.deepEqual([plain.blobStore.kind === 's3' && plain.blobStore.prefix, plain.blobStore.kind === 's3' && plain.blobStore.region], ['', 'us-east-1']);
    assert.equal(plain.blobStore.kind === 's3' && plain.blobStore.credentials, undefined, 'unset: the SDK\'s default chain');
  });

  it('refuses a malformed store URL, S3 settings without a store, and bad retention values', () => {
    assert.throws(() => loadConfig({ FLOWGATE_BLOB_STORE: 'https://bucket' }), /FLOWGATE_BLOB_STORE/);
    assert.throws(() => loadConfig({ FLOWGATE_BLOB_STORE: 's3://Bad_Bucket' }), /FLOWGATE_BLOB_STORE/);
    assert.throws(() => loadConfig({ FLOWGATE_S3_ENDPOINT: 'http://127.0.0.1:7070' }), /FLOWGATE_BLOB_STORE=s3/);
    assert.throws(() => loadConfig({ FLOWGATE_S3_DOWNLOADS: 'direct' }), /FLOWGATE_S3_DOWNLOADS/);
    assert.throws(() => loadConfig({ FLOWGATE_RETENTION: 'maybe' }), /FLOWGATE_RETENTION/);
    assert.throws(() => loadConfig({ FLOWGATE_RETENTION_STEP_FILES_DAYS: '0' }), /FLOWGATE_RETENTION_STEP_FILES_DAYS/);
  });
});
