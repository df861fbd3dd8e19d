import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/config';
import { connectionKeyFile, createConnectionCipher, parseConnectionKey } from '../../src/crypto/connection-cipher';

describe('connection credential encryption', () => {
  it('seals with AES-256-GCM bound to its org and connection: moved or tampered, it does not open', () => {
    const cipher = createConnectionCipher(randomBytes(32));
    const sealed = cipher.seal('{"password":"s3cret"}', 'connection:org_a:pc_1');
    assert.doesNotMatch(sealed, /s3cret/);
    assert.notEqual(cipher.seal('{"password":"s3cret"}', 'connection:org_a:pc_1'), sealed, 'a fresh IV each time');
    assert.equal(cipher.open(sealed, 'connection:org_a:pc_1'), '{"password":"s3cret"}');
    assert.throws(() => cipher.open(sealed, 'connection:org_b:pc_1'));
    // Change the second-to-last character (a full six bits of ciphertext; the last one may be padding bits).
    const at = sealed.length - 2;
    const flipped = `${sealed.slice(0, at)}${sealed[at] === 'A' ? 'B' : 'A'}${sealed.slice(at + 1)}`;
    assert.notEqual(flipped, sealed);
    assert.throws(() => cipher.open(flipped, 'connection:org_a:pc_1'));
  });

  it('generates the key into the data dir once, readable by the owner only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flowgate-ckey-'));
    try {
      const [a, b] = await Promise.all([connectionKeyFile(dir), connectionKeyFile(dir)]);
      assert.equal(a.length, 32);
      assert.deepEqual(a, b, 'two processes starting together agree on one key');
      assert.deepEqual(await connectionKeyFile(dir), a);
      assert.equal(statSync(join(dir, 'secrets', 'connection.key')).mode & 0o777, 0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads FLOWGATE_CONNECTION_KEY as hex or base64 of 32 bytes and refuses anything else at start', () => {
    const key = randomBytes(32);
    assert.deepEqual(parseConnectionKey(key.toString('hex')), key);
    assert.deepEqual(parseConnectionKey(key.toString('base64')), key);
    assert.equal(loadConfig({ FLOWGATE_CONNECTION_KEY: key.toString('hex') }).connectionKey, key.toString('hex'));
    assert.throws(() => loadConfig({ FLOWGATE_CONNECTION_KEY: 'too-short' }), (e: unknown) => e instanceof ConfigError && /FLOWGATE_CONNECTION_KEY/.test(e.message));
    assert.throws(() => loadConfig({ FLOWGATE_SEARCH_URL: 'not a url' }), (e: unknown) => e instanceof ConfigError && /FLOWGATE_SEARCH_URL/.test(e.message));
    assert.equal(loadConfig({ FLOWGATE_SEARCH_URL: 'http://127.0.0.1:8888/search' }).searchUrl, 'http://127.0.0.1:8888/search');
    assert.equal(loadConfig({}).searchUrl, undefined);
  });
});
