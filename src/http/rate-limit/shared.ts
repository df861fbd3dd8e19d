/**
 * The rate limit every gateway replica counts together (issue 15): each credential's budget lives
 * in Redis (FLOWGATE_REDIS_URL) or in the PostgreSQL registry (DATABASE_URL), kept by
 * rate-limiter-flexible; without either, in this process (`LocalRateLimit`, the token bucket).
 *
 * The shared budget is a fixed window per credential: BURST requests, and the window renews
 * BURST × 60 / PER_MINUTE seconds after it began (rounded up to a whole second, Redis expires keys
 * in seconds). That is the token bucket's burst at once and at most its rate over time; requests on
 * both sides of a window's end may see up to two bursts close together. A refused request counts
 * in its window but never moves the window's end, so hammering does not push the next budget back.
 *
 * When the store cannot answer (down, unreachable, slower than STORE_TIMEOUT_MS), the gateway does
 * not fail open and does not refuse: it limits per process with the local token bucket, logs one
 * warning, tries the store again after RETRY_STORE_MS, and logs when the store answers again.
 */
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { RLWrapperTimeouts, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Logger } from '../../observability/logger';
import { hashSecret } from '../../crypto/secrets';
import { LocalRateLimit, type RateLimit, type RateLimitGrant, type RateLimitVerdict } from './local';
import { errorCode } from '../../common/narrow';

/** How long a request waits for the store before this process counts it alone. */
export const STORE_TIMEOUT_MS = 1_000;
/** After the store failed, requests are counted locally for this long before it is tried again. */
export const RETRY_STORE_MS = 5_000;
/** The PostgreSQL table (in the registry's schema) and the prefix of Redis keys. */
export const RATE_LIMIT_TABLE = 'flowgate_rate_limits';
const KEY_PREFIX = 'flowgate:rl';

export type RateLimitStoreConfig =
  | { kind: 'redis'; url: string }
  | { kind: 'postgres'; url: string; schema?: string };

export interface SharedRateLimitOptions {
  perMinute: number;
  burst: number;
  store: RateLimitStoreConfig;
  log: Logger;
}

/** The fixed window the shared store keeps for a bucket of BURST that refills at PER_MINUTE. */
export function sharedWindow(perMinute: number, burst: number): { points: number; seconds: number } {
  return { points: burst, seconds: Math.max(1, Math.ceil((burst * 60) / perMinute)) };
}

export class SharedRateLimit implements RateLimit {
  readonly perMinute: number;
  readonly burst: number;
  /** 'redis' or 'postgres': where the budget is kept while the store answers */
  readonly storeKind: RateLimitStoreConfig['kind'];
  private readonly fallback: LocalRateLimit;
  private readonly limiter: RateLimiterAbstract;
  private readonly points: number;
  /** until when requests are counted locally (epoch ms); 0 while the store answers */
  private localUntil = 0;
  private degraded = false;
  private readonly log: Logger;

  private constructor(
    options: SharedRateLimitOptions,
    limiter: RateLimiterAbstract,
    private readonly closeStore: () => Promise<void>,
  ) {
    this.perMinute = options.perMinute;
    this.burst = options.burst;
    this.storeKind = options.store.kind;
    this.points = sharedWindow(options.perMinute, options.burst).points;
    // a store slower than STORE_TIMEOUT_MS fails the call like a store that is down
    this.limiter = new RLWrapperTimeouts({ limiter, timeoutMs: STORE_TIMEOUT_MS });
    this.fallback = new LocalRateLimit({ perMinute: options.perMinute, burst: options.burst });
    this.log = options.log;
  }

  /**
   * Connects to the store and makes sure the PostgreSQL table exists. A store that is down at start
   * does not stop the gateway: it limits per process until the store answers.
   */
  static async open(options: SharedRateLimitOptions): Promise<SharedRateLimit> {
    const { perMinute, burst, store, log } = options;
    if (!(Number.isInteger(perMinute) && perMinute > 0)) throw new RangeError('perMinute must be a positive integer');
    if (!(Number.isInteger(burst) && burst >= 1)) throw new RangeError('burst must be an integer of at least 1');
    const window = sharedWindow(perMinute, burst);
    const common = { keyPrefix: KEY_PREFIX, points: window.points, duration: window.seconds };
    if (store.kind === 'redis') {
      const client = new Redis(store.url, {
        // A command while disconnected fails at once instead of queueing behind the reconnection.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        connectTimeout: STORE_TIMEOUT_MS * 2,
        // keep trying to reconnect, but not faster than every 2 s
        retryStrategy: (times) => Math.min(times * 200, 2_000),
      });
      // ioredis reports connection failures as 'error' events; the requests that meet them log once.
      client.on('error', () => undefined);
      // Give the first connection a moment, so the first requests are shared; a Redis that is down
      // does not hold the start up (requests are counted per process until it answers).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, STORE_TIMEOUT_MS * 2);
        function done(): void {
          clearTimeout(timer);
          client.off('ready', done);
          resolve();
        }
        client.once('ready', done);
      });
      const limiter = new RateLimiterRedis({ ...common, storeClient: client, rejectIfRedisNotReady: true });
      return new SharedRateLimit(options, limiter, async () => {
        client.disconnect();
      });
    }
    const pool = new Pool({ connectionString: store.url, max: 4, connectionTimeoutMillis: STORE_TIMEOUT_MS * 2, query_timeout: STORE_TIMEOUT_MS * 2 });
    pool.on('error', () => undefined); // an idle connection the server dropped; the next query reconnects
    const tableCreated = await createTable(pool, store.schema).then(() => true, (error: unknown) => {
      log.warn('the shared rate-limit table could not be made; limiting per process until it can', { error: errorMessage(error) });
      return false;
    });
    const limiter = new RateLimiterPostgres({
      ...common, storeClient: pool, storeType: 'pool', tableName: RATE_LIMIT_TABLE, schemaName: store.schema, tableCreated,
      clearExpiredByTimeout: true,
    }, (error) => {
      // only called when tableCreated was false and the library's own attempt ended
      if (error) log.warn('the shared rate-limit table could not be made; limiting per process until it can', { error: errorMessage(error) });
    });
    return new SharedRateLimit(options, limiter, () => pool.end());
  }

  async take(credential: string): Promise<RateLimitVerdict> {
    const grant = await this.takeMany(credential, 1);
    return grant.granted === 1 ? { allowed: true } : { allowed: false, retryAfterSeconds: grant.retryAfterSeconds };
  }

  async takeMany(credential: string, count: number): Promise<RateLimitGrant> {
    if (count <= 0) return { granted: 0, retryAfterSeconds: 0 };
    if (Date.now() < this.localUntil) return this.fallback.takeManyNow(credential, count);
    const key = hashSecret(credential);
    try {
      await this.limiter.consume(key, count);
      this.recovered();
      return { granted: count, retryAfterSeconds: 0 };
    } catch (outcome) {
      if (outcome instanceof RateLimiterRes) {
        this.recovered();
        // The counter went up by `count` atomically: the entries that still fitted are granted.
        const before = outcome.consumedPoints - count;
        const granted = Math.max(0, Math.min(count, this.points - before));
        return { granted, retryAfterSeconds: Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)) };
      }
      this.failed(outcome);
      return this.fallback.takeManyNow(credential, count);
    }
  }

  async close(): Promise<void> {
    await this.closeStore();
  }

  private failed(error: unknown): void {
    this.localUntil = Date.now() + RETRY_STORE_MS;
    if (this.degraded) return;
    this.degraded = true;
    this.log.warn(`the shared rate-limit store (${this.storeKind}) did not answer; each gateway limits on its own until it does`, { error: errorMessage(error) });
  }

  private recovered(): void {
    this.localUntil = 0;
    if (!this.degraded) return;
    this.degraded = false;
    this.log.info(`the shared rate-limit store (${this.storeKind}) answers again; the limit is shared again`);
  }
}

/** PostgreSQL's codes for a table or type made by a concurrent replica between check and create. */
const ALREADY_EXISTS = new Set(['42P07', '23505']);

async function createTable(pool: Pool, schema: string | undefined): Promise<void> {
  const table = schema ? `"${schema}"."${RATE_LIMIT_TABLE}"` : `"${RATE_LIMIT_TABLE}"`;
  try {
    // the library's own layout (RateLimiterPostgres): key, points in the window, its end (epoch ms)
    await pool.query(`create table if not exists ${table} (key varchar(255) primary key, points integer not null default 0, expire bigint)`);
  } catch (error) {
    const code = errorCode(error);
    if (typeof code !== 'string' || !ALREADY_EXISTS.has(code)) throw error;
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
