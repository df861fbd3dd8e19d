import assert from 'node:assert/strict';
import { LruCache } from '../../src/cache/lru-cache';

describe('LruCache', () => {
  it('keeps at most maxEntries, dropping the least recently used', () => {
    const cache = new LruCache<string, number>({ maxEntries: 2, ttlMs: Infinity });
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('a'), 1); // a is now the most recent
    cache.set('c', 3);
    assert.equal(cache.get('b'), undefined);
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.get('c'), 3);
    assert.equal(cache.size, 2);
  });

  it('forgets an entry after ttlMs, counted from when it was set', () => {
    let now = 5_000; // lru-cache takes a start time of 0 for "no start"; a monotonic clock is past it
    const cache = new LruCache<string, number>({ maxEntries: 10, ttlMs: 900, now: () => now });
    cache.set('a', 1);
    now += 899;
    assert.equal(cache.get('a'), 1, 'a read does not extend the entry');
    now += 2;
    assert.equal(cache.get('a'), undefined);
    assert.equal(cache.size, 0);
  });

  it('caches null, and evicts by use rather than by insertion', () => {
    const cache = new LruCache<string, number | null>({ maxEntries: 2, ttlMs: Infinity });
    cache.set('none', null);
    cache.set('b', 2);
    assert.equal(cache.get('none'), null);
    cache.set('c', 3);
    assert.equal(cache.get('b'), undefined, 'b was the least recently used');
    assert.equal(cache.get('none'), null);
  });

  it('shares one load between concurrent misses and keeps neither undefined nor failures', async () => {
    const cache = new LruCache<string, number>({ maxEntries: 10, ttlMs: Infinity });
    let loads = 0;
    const load = async (): Promise<number> => {
      loads++;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return 7;
    };
    assert.deepEqual(await Promise.all([cache.getOrLoad('k', load), cache.getOrLoad('k', load)]), [7, 7]);
    assert.equal(loads, 1);
    assert.equal(await cache.getOrLoad('missing', async () => undefined), undefined);
    assert.equal(await cache.getOrLoad('missing', async () => 5), 5, 'an undefined answer was not kept');
    await assert.rejects(cache.getOrLoad('bad', async () => { throw new Error('db down'); }));
    assert.equal(await cache.getOrLoad('bad', async () => 1), 1, 'a failed load was not kept');
  });

  it('neither keeps nor shares a load that began before its key was deleted or the cache cleared', async () => {
    const cache = new LruCache<string, string>({ maxEntries: 10, ttlMs: Infinity });
    let release: (value: string) => void = () => undefined;
    const stale = cache.getOrLoad('k', () => new Promise<string>((resolve) => {
      release = resolve;
    }));
    cache.delete('k');
    const fresh = cache.getOrLoad('k', async () => 'after');
    release('before');
    assert.equal(await stale, 'before', 'its own caller still gets what it read');
    assert.equal(await fresh, 'after', 'a caller after the delete does not join it');
    assert.equal(cache.get('k'), 'after');

    const again = cache.getOrLoad('j', () => new Promise<string>((resolve) => {
      release = resolve;
    }));
    cache.clear();
    release('old');
    assert.equal(await again, 'old');
    assert.equal(cache.get('j'), undefined, 'the value read before the clear was not kept');
  });
});
