import assert from 'node:assert/strict';
import { anyDurable, durablePolicyFor, durableToolsProblem } from '../../src/common/durable-tools';
import { DurableToolsSchema } from '../../src/contracts/durable-policy';

describe('durable tool overrides (durableTools)', () => {
  const server = { maxAttempts: 3 };
  const own = { maxAttempts: 9, backoff: 1.5 };

  it('resolves a tool\'s policy: its own, else the server\'s; false is a plain proxied call', () => {
    assert.deepEqual(durablePolicyFor(server, { a: own, b: false }, 'a'), own);
    assert.equal(durablePolicyFor(server, { a: own, b: false }, 'b'), undefined);
    assert.deepEqual(durablePolicyFor(server, { a: own }, 'c'), server);
    assert.deepEqual(durablePolicyFor(null, { a: own }, 'a'), own);
    assert.equal(durablePolicyFor(null, { a: own }, 'c'), undefined);
    assert.equal(durablePolicyFor(undefined, undefined, 'c'), undefined);
    // a name from the object's prototype is no override
    assert.deepEqual(durablePolicyFor(server, { a: own }, 'constructor'), server);
    assert.equal(durablePolicyFor(null, {}, 'toString'), undefined);
  });

  it('says whether any tool is durable', () => {
    assert.equal(anyDurable(server, null), true);
    assert.equal(anyDurable(null, { a: own }), true);
    assert.equal(anyDurable(null, { a: false }), false);
    assert.equal(anyDurable(undefined, undefined), false);
  });

  it('refuses unknown tools, false on a plain server and bad policies, with a message naming them', () => {
    assert.equal(durableToolsProblem(null, { a: own }, ['a', 'b']), undefined);
    assert.match(durableToolsProblem(server, { nope: own }, ['a', 'b']) ?? '', /no tool nope \(its tools: a, b\)/);
    assert.match(durableToolsProblem(null, { a: false }, ['a']) ?? '', /a set to false, but the server is not durable/);
    assert.equal(DurableToolsSchema.safeParse({ a: { maxAttempts: 0 } }).success, false);
    assert.equal(DurableToolsSchema.safeParse({ a: true }).success, false);
    assert.equal(DurableToolsSchema.safeParse({ a: { maxAttempts: 2, retries: 1 } }).success, false);
    assert.equal(DurableToolsSchema.safeParse({ '': false }).success, false);
  });
});
