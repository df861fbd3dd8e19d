import assert from 'node:assert/strict';
import { LazyAbortController } from '../../src/common/lazy-abort';

describe('LazyAbortController', () => {
  it('makes a signal already aborted, with the reason, when aborted before the first read', () => {
    const lazy = new LazyAbortController();
    const reason = new Error('gone');
    lazy.abort(reason);
    assert.equal(lazy.aborted, true);
    assert.equal(lazy.reason, reason);
    assert.equal(lazy.signal.aborted, true);
    assert.equal(lazy.signal.reason, reason);
  });

  it('fires abort listeners of a signal read before the abort, once, with the first reason', () => {
    const lazy = new LazyAbortController();
    const reasons: unknown[] = [];
    lazy.signal.addEventListener('abort', () => reasons.push(lazy.signal.reason));
    assert.equal(lazy.aborted, false);
    assert.equal(lazy.reason, undefined);
    const first = new Error('first');
    lazy.abort(first);
    lazy.abort(new Error('second'));
    assert.deepEqual(reasons, [first]);
    assert.equal(lazy.reason, first);
  });

  it('aborts with an AbortError when given no reason, as AbortController does', () => {
    const lazy = new LazyAbortController();
    lazy.abort();
    assert.equal((lazy.signal.reason as DOMException).name, 'AbortError');
  });
});
