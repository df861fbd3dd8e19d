import assert from 'node:assert/strict';
import { LruCache } from '../../src/common/lru-cache';

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

  it('forgets an entry after ttlMs', () => {
    let now = 0;
    const cache = new LruCache<string, number>({ maxEntries: 10, ttlMs: 900, now: () => now });
    cache.set('a', 1);
    now = 899;
    assert.equal(cache.get('a'), 1);
    now = 900;
    assert.equal(cache.get('a'), undefined);
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
});
