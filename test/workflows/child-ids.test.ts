import assert from 'node:assert/strict';
import { hash128, uuidShape } from '../../workflows/run/child-ids';

describe('derived child IDs', () => {
  it('are version-4-shaped UUIDs, the same for the same input and distinct for 200,000 neighbouring inputs', () => {
    const seen = new Set<string>();
    for (let n = 1; n <= 100_000; n++) {
      for (const purpose of ['child-run', 'chat']) {
        const id = uuidShape(hash128(`3f0c7a52-9b1e-4d6a-8c33-0a1b2c3d4e5f\n0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b\n${purpose}\n${n}`));
        assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        seen.add(id);
      }
    }
    assert.equal(seen.size, 200_000);
    assert.equal(hash128('a'), hash128('a'));
    assert.notEqual(hash128('run-1\nx\nchild-run\n1'), hash128('run-2\nx\nchild-run\n1'));
  });
});
