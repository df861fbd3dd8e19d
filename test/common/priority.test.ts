import assert from 'node:assert/strict';
import { FAIRNESS_KEY_MAX_BYTES, fairnessKeyOf, startPriority } from '../../src/common/priority';
import { PrioritySchema } from '../../src/common/priority-schema';
import { varintFields } from '../../temporal/legacy-backlog';

describe('fairness keys and priorities', () => {
  it('starts with the organization as fairness key and the priority only when one is set', () => {
    assert.deepEqual(startPriority('org_abc'), { fairnessKey: 'org_abc' });
    assert.deepEqual(startPriority('org_abc', null), { fairnessKey: 'org_abc' });
    assert.deepEqual(startPriority('org_abc', 1), { fairnessKey: 'org_abc', priorityKey: 1 });
    assert.deepEqual(startPriority('org_abc', 5), { fairnessKey: 'org_abc', priorityKey: 5 });
  });

  it('keeps an organization ID as it is and cuts one longer than Temporal allows to 64 bytes', () => {
    assert.equal(fairnessKeyOf('org_0123456789abcdef'), 'org_0123456789abcdef');
    const long = 'o'.repeat(100);
    assert.equal(fairnessKeyOf(long), 'o'.repeat(FAIRNESS_KEY_MAX_BYTES));
    const wide = 'é'.repeat(40); // 80 bytes in UTF-8
    assert.equal(Buffer.byteLength(fairnessKeyOf(wide)), 64);
  });

  it('accepts priorities 1 to 5 and refuses anything else', () => {
    for (const ok of [1, 2, 3, 4, 5]) assert.equal(PrioritySchema.safeParse(ok).success, true);
    for (const bad of [0, 6, -1, 2.5, '2', null]) assert.equal(PrioritySchema.safeParse(bad).success, false, String(bad));
  });
});

describe('reading Temporal task queue records (temporal/legacy-backlog.ts)', () => {
  it('reads the top-level varint fields of a protobuf message and skips the others', () => {
    // field 1 string "ns", field 4 varint 2, field 5 varint 300, field 6 message {1: 7}, field 7 fixed64
    const message = Uint8Array.from([
      0x0a, 0x02, 0x6e, 0x73,
      0x20, 0x02,
      0x28, 0xac, 0x02,
      0x32, 0x02, 0x08, 0x07,
      0x39, 1, 2, 3, 4, 5, 6, 7, 8,
    ]);
    const fields = varintFields(message);
    assert.equal(fields.get(4), 2n);
    assert.equal(fields.get(5), 300n);
    assert.equal(fields.has(1), false);
    assert.equal(fields.has(6), false);
  });

  it('refuses a truncated message', () => {
    assert.throws(() => varintFields(Uint8Array.from([0x28, 0xac])), /truncated/);
  });
});
