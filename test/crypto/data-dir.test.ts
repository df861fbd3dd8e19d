import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseSigningKey, signingKey } from '../../src/crypto/data-dir';
import { createSigner } from '../../src/crypto/signed-urls';

describe('the URL-signing key', () => {
  const dirs: string[] = [];
  const dataDir = (): string => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-data-dir-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('decodes hex and base64 (standard and URL-safe, padded or not) of at least 32 bytes', () => {
    const raw = randomBytes(32);
    for (const text of [raw.toString('hex'), raw.toString('hex').toUpperCase(), raw.toString('base64'), raw.toString('base64url'), `  ${raw.toString('base64')}\n`]) {
      assert.deepEqual(parseSigningKey(text), raw, text);
    }
    const long = randomBytes(64);
    assert.deepEqual(parseSigningKey(long.toString('hex')), long, 'longer keys are taken whole');
  });

  it('refuses fewer than 32 bytes, and text in neither encoding', () => {
    for (const text of [randomBytes(31).toString('hex'), randomBytes(31).toString('base64'), '', 'password', 'a key with spaces in it that is long enough!!']) {
      assert.equal(parseSigningKey(text), undefined, JSON.stringify(text));
    }
  });

  it('is generated once into <data>/secrets/signing.key when none is configured', async () => {
    const dir = dataDir();
    const first = await signingKey(dir);
    assert.equal(first.length, 32);
    assert.ok(existsSync(path.join(dir, 'secrets', 'signing.key')));
    assert.deepEqual(await signingKey(dir), first, 'the same key on the next start');
    assert.notDeepEqual(await signingKey(dataDir()), first, 'another data dir, another key');
  });

  it('is the configured one in every data dir, and no file is written', async () => {
    const configured = randomBytes(32).toString('base64');
    const [a, b] = [dataDir(), dataDir()];
    const keyA = await signingKey(a, configured);
    const keyB = await signingKey(b, configured);
    assert.deepEqual(keyA, keyB);
    assert.equal(existsSync(path.join(a, 'secrets', 'signing.key')), false);
    assert.equal(existsSync(path.join(b, 'secrets')), false);
    // a link one replica signs is good at the other
    const link = new URL(createSigner(keyA, 'http://lb.example').sign('attachments/o/u/report.pdf', 60, { name: 'report.pdf' }));
    const params = Object.fromEntries(link.searchParams);
    assert.equal(createSigner(keyB, 'http://lb.example').verify('attachments/o/u/report.pdf', params), 'ok');
    assert.equal(createSigner(await signingKey(dataDir()), 'http://lb.example').verify('attachments/o/u/report.pdf', params), 'invalid', 'a replica with its own key refuses it');
  });

  it('refuses a configured key that is too short, naming the variable', async () => {
    await assert.rejects(signingKey(dataDir(), 'ab'.repeat(16)), /FLOWGATE_SIGNING_KEY is not a key of at least 32 bytes/);
  });
});
