/**
 * A bounded in-process cache: at most `maxEntries` (the least recently used goes first), each
 * entry good for `ttlMs` (Infinity for values that never change), and one load at a time per key
 * (concurrent misses share it). Failed loads and `undefined` results are not kept, so a record
 * created a moment later is found at once. A load that began before a `delete` of its key or a
 * `clear()` is neither kept nor joined by later callers: what it read may be what was just changed.
 *
 * The cache itself is lru-cache's; this class adds only the shared load (`getOrLoad`), kept here
 * rather than on lru-cache's `fetch`, whose in-flight entries count against `max` and fail their
 * callers when a `clear()` or an eviction aborts them. Values are boxed so that `null` may be cached.
 * It lives outside src/common/ because lru-cache's Node build imports node:diagnostics_channel,
 * which the workflow sandbox lacks.
 */
import { LRUCache } from 'lru-cache';

export interface LruCacheOptions {
  maxEntries: number;
  ttlMs: number;
  /** milliseconds, monotonic (tests pass their own) */
  now?: () => number;
}

export class LruCache<K extends string, V> {
  private readonly entries: LRUCache<K, { value: V }>;
  private readonly loading = new Map<K, Promise<V | undefined>>();
  /** bumped by delete() and clear(): a load begun under an older value is not kept */
  private epoch = 0;

  constructor(options: LruCacheOptions) {
    this.entries = new LRUCache<K, { value: V }>({
      max: options.maxEntries,
      ...(options.ttlMs === Infinity ? {} : { ttl: options.ttlMs }),
      // read the clock on every check (the default reuses a reading for 1 ms)
      ttlResolution: 0,
      ...(options.now ? { perf: { now: options.now } } : {}),
    });
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  set(key: K, value: V): void {
    this.entries.set(key, { value });
  }

  delete(key: K): void {
    this.entries.delete(key);
    this.loading.delete(key);
    this.epoch++;
  }

  clear(): void {
    this.entries.clear();
    this.loading.clear();
    this.epoch++;
  }

  /** The cached value, else `load()`'s (kept unless undefined). */
  async getOrLoad(key: K, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const cached = this.entries.get(key);
    if (cached) return cached.value;
    const pending = this.loading.get(key);
    if (pending) return pending;
    const epoch = this.epoch;
    const started: Promise<V | undefined> = load().then((value) => {
      if (value !== undefined && epoch === this.epoch) this.set(key, value);
      return value;
    }).finally(() => {
      if (this.loading.get(key) === started) this.loading.delete(key);
    });
    this.loading.set(key, started);
    return started;
  }
}
