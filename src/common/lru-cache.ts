/**
 * A bounded in-process cache: at most `maxEntries` (the least recently used goes first), each
 * entry good for `ttlMs` (Infinity for values that never change), and one load at a time per key
 * (concurrent misses share it). Failed loads and `undefined` results are not kept, so a record
 * created a moment later is found at once.
 */
export interface LruCacheOptions {
  maxEntries: number;
  ttlMs: number;
  /** milliseconds, monotonic (tests pass their own) */
  now?: () => number;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

export class LruCache<K, V> {
  private readonly entries = new Map<K, Entry<V>>();
  private readonly loading = new Map<K, Promise<V | undefined>>();
  private readonly now: () => number;

  constructor(private readonly options: LruCacheOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) return undefined;
    this.entries.set(key, entry); // most recently used last
    return entry.value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.options.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: this.now() + this.options.ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** The cached value, else `load()`'s (kept unless undefined). */
  async getOrLoad(key: K, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const cached = this.get(key);
    if (cached !== undefined) return cached;
    const pending = this.loading.get(key);
    if (pending) return pending;
    const started = load().then((value) => {
      if (value !== undefined) this.set(key, value);
      return value;
    }).finally(() => this.loading.delete(key));
    this.loading.set(key, started);
    return started;
  }
}
