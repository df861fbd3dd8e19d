/**
 * Per-credential rate limiting (ARCHITECTURE.md: "429 rate limited (with Retry-After)"): a token
 * bucket per presented credential that refills at `perMinute` tokens a minute and holds at most
 * `burst`. State lives in this process only.
 *
 * Buckets are keyed by the SHA-256 of the credential, so no secret is kept in memory as a key.
 * Memory stays bounded whatever keys arrive: a bucket left alone long enough to be full again is
 * the same as no bucket and is dropped, and past `maxBuckets` the least recently used one goes.
 */
import { performance } from 'node:perf_hooks';
import { hashSecret } from '../../crypto/secrets';

export const DEFAULT_MAX_BUCKETS = 10_000;

/** Float refill arithmetic may land a hair below a whole token that is due. */
const EPSILON = 1e-9;

export interface RateLimiterOptions {
  perMinute: number;
  burst: number;
  /** how many buckets to keep at most; the least recently used is evicted beyond it */
  maxBuckets?: number;
  /** milliseconds; must not go backwards (default: the monotonic `performance.now`) */
  now?: () => number;
}

export type RateLimitVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly tokensPerMs: number;
  /** a bucket untouched this long has refilled completely */
  private readonly fullRefillMs: number;
  private readonly maxBuckets: number;
  private readonly now: () => number;

  constructor(private readonly options: RateLimiterOptions) {
    if (!(Number.isInteger(options.perMinute) && options.perMinute > 0)) throw new RangeError('perMinute must be a positive integer');
    if (!(Number.isInteger(options.burst) && options.burst >= 1)) throw new RangeError('burst must be an integer of at least 1');
    this.tokensPerMs = options.perMinute / 60_000;
    this.fullRefillMs = options.burst / this.tokensPerMs;
    this.maxBuckets = Math.max(1, options.maxBuckets ?? DEFAULT_MAX_BUCKETS);
    this.now = options.now ?? (() => performance.now());
  }

  get perMinute(): number {
    return this.options.perMinute;
  }

  get burst(): number {
    return this.options.burst;
  }

  /** How many buckets are held now (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }

  /** Takes one token for this credential, or says how many whole seconds until one is there. */
  take(credential: string): RateLimitVerdict {
    const now = this.now();
    this.dropFullBuckets(now);
    const key = hashSecret(credential);
    const bucket = this.buckets.get(key);
    let tokens = this.options.burst;
    if (bucket) {
      tokens = Math.min(this.options.burst, bucket.tokens + (now - bucket.updatedAt) * this.tokensPerMs);
      // re-inserted below, so the map stays in order of last use (oldest first)
      this.buckets.delete(key);
    } else if (this.buckets.size >= this.maxBuckets) {
      const oldest = this.buckets.keys().next();
      if (!oldest.done) this.buckets.delete(oldest.value);
    }
    const allowed = tokens >= 1 - EPSILON;
    if (allowed) tokens = Math.max(0, tokens - 1);
    this.buckets.set(key, { tokens, updatedAt: now });
    if (allowed) return { allowed: true };
    const waitMs = (1 - tokens) / this.tokensPerMs;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000 - EPSILON)) };
  }

  /**
   * The map is in order of last use, which is also the order of `updatedAt` (the clock never goes
   * backwards), so the buckets that are full again are a prefix of it: cheap to drop on every call.
   */
  private dropFullBuckets(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (now - bucket.updatedAt < this.fullRefillMs) return;
      this.buckets.delete(key);
    }
  }
}

/** How many of `count` tokens were granted (always the first ones), and when to retry the rest. */
export interface RateLimitGrant {
  granted: number;
  /** whole seconds until the refused ones may be retried; 0 when all were granted */
  retryAfterSeconds: number;
}

/**
 * What the gateway counts requests with: this process's buckets (`LocalRateLimit`) or a budget
 * every replica shares (`SharedRateLimit`).
 */
export interface RateLimit {
  readonly perMinute: number;
  readonly burst: number;
  take(credential: string): Promise<RateLimitVerdict>;
  /** one token each for `count` calls in order (a JSON-RPC batch's entries) */
  takeMany(credential: string, count: number): Promise<RateLimitGrant>;
  close(): Promise<void>;
}

/** The token buckets of this process alone. */
export class LocalRateLimit implements RateLimit {
  private readonly limiter: RateLimiter;

  constructor(options: RateLimiterOptions) {
    this.limiter = new RateLimiter(options);
  }

  get perMinute(): number {
    return this.limiter.perMinute;
  }

  get burst(): number {
    return this.limiter.burst;
  }

  take(credential: string): Promise<RateLimitVerdict> {
    return Promise.resolve(this.limiter.take(credential));
  }

  takeMany(credential: string, count: number): Promise<RateLimitGrant> {
    return Promise.resolve(this.takeManyNow(credential, count));
  }

  /** Synchronous, for the shared limiter's fallback. */
  takeManyNow(credential: string, count: number): RateLimitGrant {
    let granted = 0;
    for (; granted < count; granted++) {
      const verdict = this.limiter.take(credential);
      if (!verdict.allowed) return { granted, retryAfterSeconds: verdict.retryAfterSeconds };
    }
    return { granted, retryAfterSeconds: 0 };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
