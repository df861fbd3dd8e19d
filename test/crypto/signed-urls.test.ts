import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createSigner, type SignedUrlSigner } from '../../src/crypto/signed-urls';

const PUBLIC_URL = 'https://flowgate.example';

interface Link {
  key: string;
  params: { exp?: string; sig?: string; name?: string; type?: string };
}

/** Reads a signed link back the way the files route does: key from the path, the rest from the query. */
function parse(url: string): Link {
  const parsed = new URL(url);
  assert.equal(parsed.origin, PUBLIC_URL);
  assert.ok(parsed.pathname.startsWith('/files/'));
  const params: Link['params'] = {};
  for (const name of ['exp', 'sig', 'name', 'type'] as const) {
    const value = parsed.searchParams.get(name);
    if (value !== null) params[name] = value;
  }
  return { key: decodeURIComponent(parsed.pathname.slice('/files/'.length)), params };
}

function setup(): { signer: SignedUrlSigner; clock: { now: number }; key: string } {
  const clock = { now: Date.UTC(2024, 4, 1, 12, 0, 0) };
  const signer = createSigner(randomBytes(32), PUBLIC_URL, () => clock.now);
  return { signer, clock, key: `runs/org_1/run_${randomBytes(4).toString('hex')}/steps/1/output.txt` };
}

describe('createSigner', () => {
  it('signs a link that verifies as ok for its key, name and type', () => {
    const { signer, key } = setup();
    const link = parse(signer.sign(key, 60, { name: 'report.md', type: 'text/markdown; charset=utf-8' }));
    assert.equal(link.key, key);
    assert.equal(link.params.name, 'report.md');
    assert.equal(link.params.type, 'text/markdown; charset=utf-8');
    assert.equal(signer.verify(link.key, link.params), 'ok');
  });

  it('names the expiry a link signed now carries, and signs the same link while it stays the same', () => {
    const { signer, clock, key } = setup();
    const exp = signer.expiry(60);
    const first = signer.sign(key, 60, { type: 'text/plain' });
    assert.equal(parse(first).params.exp, exp);
    clock.now += 999 - (clock.now % 1000);
    assert.equal(signer.expiry(60), exp, 'the same second');
    assert.equal(signer.sign(key, 60, { type: 'text/plain' }), first, 'a body of links can be reused within the second');
    clock.now += 1;
    assert.equal(signer.expiry(60), String(Number(exp) + 1));
    assert.notEqual(signer.sign(key, 60, { type: 'text/plain' }), first);
  });

  it('signs a link without name and type', () => {
    const { signer, key } = setup();
    const link = parse(signer.sign(key, 60));
    assert.equal(link.params.name, undefined);
    assert.equal(signer.verify(link.key, link.params), 'ok');
  });

  it('stays ok until the expiry and reports expired after it', () => {
    const { signer, clock, key } = setup();
    const link = parse(signer.sign(key, 60));
    clock.now += 59_000;
    assert.equal(signer.verify(link.key, link.params), 'ok');
    clock.now += 2_000;
    assert.equal(signer.verify(link.key, link.params), 'expired');
  });

  it('refuses a link for another key as invalid', () => {
    const { signer, key } = setup();
    const link = parse(signer.sign(key, 60, { name: 'a.txt', type: 'text/plain' }));
    assert.equal(signer.verify(key.replace('steps/1/', 'steps/2/'), link.params), 'invalid');
  });

  it('refuses a link whose expiry was changed as invalid, even to revive an expired link', () => {
    const { signer, clock, key } = setup();
    const link = parse(signer.sign(key, 60));
    const later = String(Number(link.params.exp) + 3600);
    assert.equal(signer.verify(link.key, { ...link.params, exp: later }), 'invalid');
    clock.now += 120_000;
    assert.equal(signer.verify(link.key, link.params), 'expired');
    assert.equal(signer.verify(link.key, { ...link.params, exp: later }), 'invalid');
  });

  it('refuses a link whose name or type was changed, added or dropped as invalid', () => {
    const { signer, key } = setup();
    const link = parse(signer.sign(key, 60, { name: 'a.txt', type: 'text/plain' }));
    assert.equal(signer.verify(link.key, { ...link.params, name: 'b.txt' }), 'invalid');
    assert.equal(signer.verify(link.key, { ...link.params, type: 'text/html' }), 'invalid');
    assert.equal(signer.verify(link.key, { ...link.params, name: undefined }), 'invalid');
    assert.equal(signer.verify(link.key, { ...link.params, type: undefined }), 'invalid');
    const bare = parse(signer.sign(key, 60));
    assert.equal(signer.verify(bare.key, { ...bare.params, type: 'text/html' }), 'invalid');
  });

  it('refuses a link when text is moved between the name and the type', () => {
    const { signer, key } = setup();
    const link = parse(signer.sign(key, 60, { name: 'report\ntext/html', type: '' }));
    assert.equal(signer.verify(link.key, { ...link.params, name: 'report', type: 'text/html\n' }), 'invalid');
  });

  it('refuses a tampered signature as invalid', () => {
    const { signer, key } = setup();
    const link = parse(signer.sign(key, 60));
    const sig = link.params.sig ?? '';
    const flipped = `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`;
    assert.equal(signer.verify(link.key, { ...link.params, sig: flipped }), 'invalid');
    assert.equal(signer.verify(link.key, { ...link.params, sig: sig.slice(1) }), 'invalid');
    assert.equal(signer.verify(link.key, { ...link.params, sig: `${sig}x` }), 'invalid');
  });

  it('refuses a link signed with another secret as invalid', () => {
    const { signer, key } = setup();
    const other = createSigner(randomBytes(32), PUBLIC_URL);
    const link = parse(other.sign(key, 60));
    assert.equal(signer.verify(link.key, link.params), 'invalid');
  });

  it('refuses a link with a missing or malformed exp or sig as invalid', () => {
    const { signer, key } = setup();
    const link = parse(signer.sign(key, 60));
    assert.equal(signer.verify(link.key, { ...link.params, exp: undefined }), 'invalid');
    assert.equal(signer.verify(link.key, { ...link.params, sig: undefined }), 'invalid');
    assert.equal(signer.verify(link.key, { ...link.params, sig: '' }), 'invalid');
    assert.equal(signer.verify(link.key, { ...link.params, exp: `${link.params.exp ?? ''}.0` }), 'invalid');
    assert.equal(signer.verify(link.key, { ...link.params, exp: `-${link.params.exp ?? ''}` }), 'invalid');
    assert.equal(signer.verify(link.key, {}), 'invalid');
  });
});
