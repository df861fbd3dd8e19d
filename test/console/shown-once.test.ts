import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createConnectionCipher } from '../../src/crypto/connection-cipher';
import { SHOWN_ONCE_SECONDS, ShownOnce } from '../../src/console/shown-once';

describe('ShownOnce: a new API key carried to the next console page in a sealed cookie', () => {
  let now = 1_000_000;
  const cipher = createConnectionCipher(randomBytes(32));
  const shown = new ShownOnce(cipher, () => now);

  it('opens for the same session within its lifetime, on any replica with the same key', () => {
    const sealed = shown.seal('session-a', 'fgk_secret');
    assert.ok(!sealed.includes('fgk_secret'), 'the cookie does not carry the key in clear');
    assert.match(sealed, /^[A-Za-z0-9._-]+$/, 'cookie-safe characters only');
    assert.equal(new ShownOnce(cipher, () => now).open('session-a', sealed), 'fgk_secret');
  });

  it('refuses another session, an expired, a tampered or a missing cookie', () => {
    const sealed = shown.seal('session-a', 'fgk_secret');
    assert.equal(shown.open('session-b', sealed), undefined);
    assert.equal(shown.open('session-a', `${sealed.slice(0, -2)}AA`), undefined);
    assert.equal(shown.open('session-a', undefined), undefined);
    assert.equal(new ShownOnce(createConnectionCipher(randomBytes(32)), () => now).open('session-a', sealed), undefined);
    now += SHOWN_ONCE_SECONDS * 1000 + 1;
    assert.equal(shown.open('session-a', sealed), undefined);
  });
});
