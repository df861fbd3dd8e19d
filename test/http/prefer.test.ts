import assert from 'node:assert/strict';
import { parsePrefer, preferredWaitSeconds } from '../../src/http/prefer';

describe('Prefer header (RFC 7240)', () => {
  it('reads wait=N among other preferences, with quotes, parameters and any case', () => {
    assert.equal(preferredWaitSeconds('wait=10'), 10);
    assert.equal(preferredWaitSeconds('respond-async, wait=5'), 5);
    assert.equal(preferredWaitSeconds('WAIT="7"; foo=bar'), 7);
    assert.equal(preferredWaitSeconds('wait = 0'), 0);
    assert.equal(preferredWaitSeconds('wait=3, wait=9'), 3, 'the first occurrence wins');
  });

  it('ignores malformed or absent wait preferences', () => {
    for (const header of ['', 'respond-async', 'wait', 'wait=', 'wait=-1', 'wait=1.5', 'wait=soon', 'wait=99999999999']) {
      assert.equal(preferredWaitSeconds(header), undefined, header);
    }
  });

  it('parses names without values as true', () => {
    assert.deepEqual([...parsePrefer('respond-async, handling=lenient')], [['respond-async', true], ['handling', 'lenient']]);
  });
});
