import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRegistry, type Registry } from '../../src/registry';
import { hashSecret, hmac, randomToken } from '../../src/crypto/secrets';
import { KEY_RECHECK_MS, createRuntimeTokens } from '../../src/crypto/runtime-tokens';
import { eventually } from '../support/eventually';

describe('runtime tokens', () => {
  let dir: string;
  let registry: Registry;
  let orgId: string;
  let keyId: string;
  const signingKey = randomBytes(32);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'flowgate-token-'));
    registry = await openRegistry({ kind: 'sqlite', file: join(dir, 'r.db') });
    orgId = (await registry.orgs.create('o')).id;
    keyId = (await registry.apiKeys.create(orgId, null, hashSecret(randomToken('fgk_')))).id;
  });
  after(async () => {
    await registry?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('verifies a token it issued to the key\'s organization, expiring after 60 minutes', async () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const tokens = createRuntimeTokens(signingKey, registry, () => now);
    const { token, expiresAt } = tokens.issue({ orgId, keyId });
    assert.equal(expiresAt, '2030-01-01T01:00:00.000Z');
    assert.deepEqual(await tokens.verify(token), { orgId, keyId });
    now += 59 * 60_000;
    assert.deepEqual(await tokens.verify(token), { orgId, keyId });
    now += 60_000;
    assert.equal(await tokens.verify(token), undefined);
  });

  it('names the API key of a genuine unexpired token without the registry, and nothing for a forged one', () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const tokens = createRuntimeTokens(signingKey, registry, () => now);
    const { token } = tokens.issue({ orgId, keyId });
    assert.equal(tokens.keyIdOf(token), keyId);
    assert.equal(tokens.keyIdOf(`${token.slice(0, -2)}xx`), undefined);
    assert.equal(createRuntimeTokens(randomBytes(32), registry, () => now).keyIdOf(token), undefined);
    now += 60 * 60_000;
    assert.equal(tokens.keyIdOf(token), undefined);
  });

  it('refuses tokens under another key, with edited claims, or for another org', async () => {
    const tokens = createRuntimeTokens(signingKey, registry);
    const { token } = tokens.issue({ orgId, keyId });
    assert.equal(await createRuntimeTokens(randomBytes(32), registry).verify(token), undefined);
    const [payload, sig] = token.slice(4).split('.');
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()) as Record<string, unknown>;
    const edited = Buffer.from(JSON.stringify({ ...claims, exp: 9_999_999_999 })).toString('base64url');
    assert.equal(await tokens.verify(`fgr_${edited}.${sig}`), undefined);
    // a URL-signing signature over the same bytes is not a token signature
    assert.equal(await tokens.verify(`fgr_${payload}.${hmac(signingKey, payload ?? '')}`), undefined);
    assert.equal(await tokens.verify(tokens.issue({ orgId: 'org_other', keyId }).token), undefined);
    for (const junk of ['', 'fgr_', 'fgr_a.b.c', 'Bearer x', `fgr_${'a'.repeat(2000)}.b`]) assert.equal(await tokens.verify(junk), undefined);
  });

  it('stops verifying once the API key is revoked: at once after forgetKeys, else within KEY_RECHECK_MS', async () => {
    const id = (await registry.apiKeys.create(orgId, null, hashSecret(randomToken('fgk_')))).id;
    const tokens = createRuntimeTokens(signingKey, registry);
    const { token } = tokens.issue({ orgId, keyId: id });
    assert.ok(await tokens.verify(token));
    await registry.apiKeys.revoke(orgId, id);
    tokens.forgetKeys();
    assert.equal(await tokens.verify(token), undefined);

    // Revoked elsewhere (another replica): this process's cached key expires within KEY_RECHECK_MS.
    const other = (await registry.apiKeys.create(orgId, null, hashSecret(randomToken('fgk_')))).id;
    const elsewhere = createRuntimeTokens(signingKey, registry);
    const second = elsewhere.issue({ orgId, keyId: other }).token;
    assert.ok(await elsewhere.verify(second));
    await registry.apiKeys.revoke(orgId, other);
    // no fixed sleep: look again until the cached key expired, no later than KEY_RECHECK_MS (plus slack for a loaded machine)
    await eventually(async () => ((await elsewhere.verify(second)) === undefined ? true : undefined), 'the revoked key refused elsewhere', KEY_RECHECK_MS + 5_000);
  });
});
