import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { loadConfig } from '../../src/config/config';
import { formatDataKeys, parseDataKeys } from '../../src/config/key-text';
import { createCodecSessions } from '../../src/crypto/codec-sessions';
import { dataKeys } from '../../src/crypto/data-dir';
import { DataDecryptionError, ENCRYPTED_ENCODING, EncryptionCodec, KEY_ID_METADATA, type DataKey } from '../../src/crypto/payload-codec';
import { WatchedCodec, WrongDataKeyError } from '../../src/crypto/run-data-converter';

const key = (id: string): DataKey => ({ id, key: randomBytes(32) });
const text = (bytes: Uint8Array | null | undefined): string => Buffer.from(bytes ?? []).toString('utf8');
/** A payload with every bytes field as a Buffer, to compare by content. */
const norm = (p: Payload | undefined): unknown => ({
  metadata: Object.fromEntries(Object.entries(p?.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? [])])),
  data: Buffer.from(p?.data ?? []),
});
const MARKER = 'marker-7c1f-secret-input';

describe('the run-data codec (AES-256-GCM payload codec)', () => {
  const plain: Payload = { ...defaultPayloadConverter.toPayload({ note: MARKER, n: 3 }), metadata: { ...defaultPayloadConverter.toPayload({ note: MARKER, n: 3 }).metadata, extra: Buffer.from('kept') } };

  it('seals a payload whole (metadata and data) under the newest key and opens it to exactly what it was', async () => {
    const [k1, k2] = [key('k2'), key('k1')];
    const codec = new EncryptionCodec({ keys: [k1, k2], encrypt: true });
    const [sealed] = await codec.encode([plain]);
    assert.ok(sealed);
    assert.equal(text(sealed.metadata?.encoding), ENCRYPTED_ENCODING);
    assert.equal(text(sealed.metadata?.[KEY_ID_METADATA]), 'k2');
    assert.deepEqual(Object.keys(sealed.metadata ?? {}).sort(), ['encoding', KEY_ID_METADATA].sort(), 'the original metadata travels inside');
    assert.ok(!text(sealed.data).includes(MARKER) && !text(sealed.data).includes('json/plain'));
    const [opened] = await codec.decode([sealed]);
    assert.deepEqual(norm(opened), norm(plain));
    assert.deepEqual(defaultPayloadConverter.fromPayload(opened!), { note: MARKER, n: 3 });
  });

  it('draws a fresh IV for every payload', async () => {
    const codec = new EncryptionCodec({ keys: [key('a')], encrypt: true });
    const [one, two] = await codec.encode([plain, plain]);
    assert.notDeepEqual(Buffer.from(one!.data!), Buffer.from(two!.data!));
    assert.notDeepEqual(Buffer.from(one!.data!).subarray(0, 12), Buffer.from(two!.data!).subarray(0, 12));
  });

  it('after a rotation (new key first, old second) opens what the old key sealed and seals with the new one', async () => {
    const old = key('2025-old');
    const fresh = key('2026-new');
    const [before] = await new EncryptionCodec({ keys: [old], encrypt: true }).encode([plain]);
    const rotated = new EncryptionCodec({ keys: [fresh, old], encrypt: true });
    assert.deepEqual(norm((await rotated.decode([before!]))[0]), norm(plain));
    const [after] = await rotated.encode([plain]);
    assert.equal(text(after!.metadata?.[KEY_ID_METADATA]), '2026-new');
    assert.equal(rotated.currentKeyId, '2026-new');
  });

  it('fails clearly on a payload sealed with a key it does not have, naming the ids and no key material', async () => {
    const secret = key('gone');
    const [sealed] = await new EncryptionCodec({ keys: [secret], encrypt: true }).encode([plain]);
    const other = new EncryptionCodec({ keys: [key('here')], encrypt: true });
    await assert.rejects(other.decode([sealed!]), (err: Error) => {
      assert.ok(err instanceof DataDecryptionError);
      assert.match(err.message, /data key "gone", which this process does not have \(it has "here"\)/);
      assert.ok(!err.message.includes(secret.key.toString('base64')) && !err.message.includes(secret.key.toString('hex')));
      return true;
    });
  });

  it('refuses an altered payload, and one relabelled with another key id', async () => {
    const a = key('a');
    const b = { id: 'b', key: a.key };
    const codec = new EncryptionCodec({ keys: [a, b], encrypt: true });
    const [sealed] = await codec.encode([plain]);
    const flipped = Buffer.from(sealed!.data!);
    flipped[20] = flipped[20]! ^ 1;
    await assert.rejects(codec.decode([{ ...sealed!, data: flipped }]), /does not open with data key "a"/);
    await assert.rejects(codec.decode([{ ...sealed!, metadata: { ...sealed!.metadata, [KEY_ID_METADATA]: Buffer.from('b') } }]), /does not open with data key "b"/);
  });

  it('passes payloads in clear through decoding unchanged (runs started before the codec)', async () => {
    const codec = new EncryptionCodec({ keys: [key('a')], encrypt: true });
    const [same] = await codec.decode([plain]);
    assert.equal(same, plain);
  });

  it('turned off, sends payloads in clear and still opens the sealed ones it has keys for', async () => {
    const a = key('a');
    const [sealed] = await new EncryptionCodec({ keys: [a], encrypt: true }).encode([plain]);
    const off = new EncryptionCodec({ keys: [a], encrypt: false });
    assert.equal(off.currentKeyId, undefined);
    assert.equal((await off.encode([plain]))[0], plain);
    assert.deepEqual(norm((await off.decode([sealed!]))[0]), norm(plain));
    assert.throws(() => new EncryptionCodec({ keys: [], encrypt: true }), /no data key/);
  });
});

describe('the data key ring', () => {
  const dirs: string[] = [];
  const dataDir = (): string => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-data-keys-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('reads id:key entries newest first, in base64 or hex, separated by commas or lines', () => {
    const [a, b] = [randomBytes(32), randomBytes(32)];
    assert.deepEqual(parseDataKeys(`new:${a.toString('base64')}, old:${b.toString('hex')}`), [{ id: 'new', key: a }, { id: 'old', key: b }]);
    assert.deepEqual(parseDataKeys(formatDataKeys([{ id: 'x', key: a }, { id: 'y', key: b }])), [{ id: 'x', key: a }, { id: 'y', key: b }]);
  });

  it('refuses malformed rings with a sentence that holds no key material', () => {
    const short = randomBytes(16).toString('base64');
    for (const [ring, why] of [['', /no key/], [`nokey`, /not id:key/], [`a b:${randomBytes(32).toString('base64')}`, /not id:key/], [`a:${short}`, /"a" is not 32 bytes/],
      [`a:${randomBytes(32).toString('base64')},a:${randomBytes(32).toString('base64')}`, /"a" appears twice/]] as const) {
      const parsed = parseDataKeys(ring);
      assert.equal(typeof parsed, 'string', ring);
      assert.match(parsed as string, why);
      assert.ok(!(parsed as string).includes(short));
    }
    assert.throws(() => loadConfig({ FLOWGATE_DATA_KEYS: `a:${short}` }), /FLOWGATE_DATA_KEYS: must be id:key entries/);
    assert.throws(() => loadConfig({ FLOWGATE_DATA_ENCRYPTION: 'maybe' }), /FLOWGATE_DATA_ENCRYPTION/);
    assert.throws(() => loadConfig({ FLOWGATE_TEMPORAL_UI_ORIGIN: 'https://ui.example.com/path' }), /FLOWGATE_TEMPORAL_UI_ORIGIN/);
    assert.deepEqual(loadConfig({ FLOWGATE_TEMPORAL_UI_ORIGIN: 'https://ui.example.com/, http://127.0.0.1:8233' }).temporalUiOrigins, ['https://ui.example.com', 'http://127.0.0.1:8233']);
    assert.deepEqual(loadConfig({}).dataEncryption, { enabled: true, keys: undefined });
  });

  it('is generated once into <data>/secrets/data.keys (owner only) when none is configured, and only read when encryption is off', async () => {
    const dir = dataDir();
    assert.deepEqual(await dataKeys(dir, { create: false }), [], 'off and no file: no keys, no file made');
    assert.ok(!existsSync(path.join(dir, 'secrets', 'data.keys')));
    const first = await dataKeys(dir, { create: true });
    assert.equal(first.length, 1);
    assert.match(first[0]!.id, /^local-[0-9a-f]{8}$/);
    const file = path.join(dir, 'secrets', 'data.keys');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(await dataKeys(dir, { create: true }), first, 'the same ring on the next start');
    assert.deepEqual(await dataKeys(dir, { create: false }), first, 'off: the ring is still read, to open what was sealed');
    assert.match(readFileSync(file, 'utf8'), /^local-[0-9a-f]{8}:[A-Za-z0-9+/]+=*\n$/);
    const configured = `ops-1:${randomBytes(32).toString('base64')}`;
    assert.equal((await dataKeys(dataDir(), { configured, create: true }))[0]?.id, 'ops-1', 'a configured ring makes no file');
  });
});

describe('codec sign-in sessions', () => {
  const hash = 'a'.repeat(64);
  it('accept their own unexpired cookie and nothing else', () => {
    let now = 1_000_000_000_000;
    const sessions = createCodecSessions(randomBytes(32), () => now);
    const value = sessions.issue(hash, 60);
    assert.equal(sessions.verify(value), hash);
    assert.equal(createCodecSessions(randomBytes(32), () => now).verify(value), undefined, 'another signing key');
    const [exp, , mac] = value.split('.');
    assert.equal(sessions.verify(`${exp}.${'b'.repeat(64)}.${mac}`), undefined, 'another token hash');
    assert.equal(sessions.verify(`${Number(exp) + 3600}.${hash}.${mac}`), undefined, 'a longer life');
    assert.equal(sessions.verify('garbage'), undefined);
    now += 61_000;
    assert.equal(sessions.verify(value), undefined, 'expired');
  });
});

describe('the run-data codec in logs', () => {
  it('shows no key material when serialized (the SDK logs a worker\'s options, codec included)', () => {
    const secret = key('logged');
    const codec = new EncryptionCodec({ keys: [secret], encrypt: true });
    const text = `${JSON.stringify({ dataConverter: { payloadCodecs: [codec] } })} ${String(codec)}`;
    assert.ok(!text.includes(JSON.stringify([...secret.key])) && !text.includes(secret.key.toString('base64')) && !text.includes('"data":['), text);
  });
});

describe('a worker\'s watched codec', () => {
  const plain = defaultPayloadConverter.toPayload({ note: MARKER });

  it('tells once, naming the key and the run, when a payload is sealed under a key the ring lacks or does not open, and still fails the decoding', async () => {
    const told: [string, boolean, string | undefined][] = [];
    const mine = key('mine');
    const watched = new WatchedCodec(new EncryptionCodec({ keys: [mine], encrypt: true }), (...args) => told.push(args));
    const [own] = await watched.encode([plain]);
    assert.deepEqual(norm((await watched.decode([own!]))[0]), norm(plain));
    assert.deepEqual((await watched.decode([plain]))[0], plain, 'payloads in clear pass');
    assert.deepEqual(told, []);

    const [foreign] = await new EncryptionCodec({ keys: [key('theirs')], encrypt: true }).encode([plain]);
    await assert.rejects(watched.decode([foreign!], { type: 'workflow', namespace: 'default', workflowId: 'run_1' }), /data key "theirs", which this process does not have/);
    await assert.rejects(watched.decode([foreign!]), DataDecryptionError);
    assert.deepEqual(told, [['theirs', true, 'run_1']], 'told once');

    const sameId: [string, boolean, string | undefined][] = [];
    const [underMine] = await new EncryptionCodec({ keys: [{ id: 'mine', key: randomBytes(32) }], encrypt: true }).encode([plain]);
    await assert.rejects(new WatchedCodec(new EncryptionCodec({ keys: [mine], encrypt: true }), (...args) => sameId.push(args)).decode([underMine!]), /does not open with data key "mine"/);
    assert.deepEqual(sameId, [['mine', false, undefined]], 'another key under the same ID');
  });

  it('is not told of a payload that is not a sealed one at all (no key named)', async () => {
    const told: string[] = [];
    const watched = new WatchedCodec(new EncryptionCodec({ keys: [key('mine')], encrypt: true }), (keyId) => told.push(keyId));
    await assert.rejects(watched.decode([{ metadata: { encoding: Buffer.from(ENCRYPTED_ENCODING) }, data: Buffer.from('x') }]), /names no key/);
    assert.deepEqual(told, []);
  });

  it('names the key, the run and the ring\'s key IDs (never a key) in the error a process stops with', () => {
    const error = new WrongDataKeyError('2026-11', { runId: 'run_9', missing: true, ring: new EncryptionCodec({ keys: [key('2027-05')], encrypt: true }).ringText(), taskQueue: 'flowgate', role: 'worker' });
    assert.match(error.message, /^run run_9 of task queue "flowgate" is sealed with data key "2026-11", which this worker does not have \(it has "2027-05"\): every gateway and worker needs the same FLOWGATE_DATA_KEYS/);
  });
});
