/**
 * The input-field filter of bulk actions (issue 54; src/common/run-batch.ts): a dotted path into a
 * run's inputs must hold exactly the value given; a missing field, another type or another value
 * does not match. The selection that applies it to Temporal's candidates is src/runs/run-batch.ts.
 */
import assert from 'node:assert/strict';
import { inputAt, inputsMatch } from '../../src/common/run-batch';

describe('the input-field filter of bulk actions', () => {
  const inputs = { customer: { id: 'c-42', vip: true }, items: [{ sku: 'A1' }], count: 3, note: null };

  it('reads a value by dotted path, array indexes included', () => {
    assert.equal(inputAt(inputs, 'customer.id'), 'c-42');
    assert.equal(inputAt(inputs, 'items.0.sku'), 'A1');
    assert.equal(inputAt(inputs, 'customer.missing'), undefined);
    assert.equal(inputAt(inputs, 'count.deeper'), undefined);
    assert.equal(inputAt('', 'customer'), undefined);
    assert.equal(inputAt(inputs, 'constructor'), undefined, 'no inherited property is a field');
  });

  it('matches when every field holds exactly its value', () => {
    assert.ok(inputsMatch(inputs, { 'customer.id': 'c-42', count: 3 }));
    assert.ok(inputsMatch(inputs, { note: null, 'customer.vip': true }));
    assert.ok(!inputsMatch(inputs, { 'customer.id': 'c-43' }));
    assert.ok(!inputsMatch(inputs, { count: '3' }), 'a number is not its text');
    assert.ok(!inputsMatch(inputs, { 'customer.id': 'c-42', missing: null }), 'a missing field is not null');
    assert.ok(!inputsMatch(undefined, { count: 3 }), 'unreadable inputs match nothing');
  });
});
