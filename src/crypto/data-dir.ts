/**
 * Files flowgate keeps in its data dir besides the registry and blobs: the URL-signing key, the
 * run-data key ring and the generated admin token. Each is created once, atomically, readable by
 * the owner only. Replicas that share no data dir are given the keys instead (FLOWGATE_SIGNING_KEY,
 * FLOWGATE_DATA_KEYS), so no file is made.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { DATA_KEY_BYTES, formatDataKeys, parseDataKeys, parseSigningKey, SIGNING_KEY_MIN_BYTES, type DataKey } from '../config/key-text';
import { errorCode } from '../common/narrow';

/** Reads the file, or creates it with `make()` (mode 0600) if it does not exist yet. */
async function readOrCreate(file: string, make: () => Buffer): Promise<{ value: Buffer; created: boolean }> {
  try {
    return { value: await fs.readFile(file), created: false };
  } catch (err) {
    if (errorCode(err) !== 'ENOENT') throw err;
  }
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const value = make();
  const temp = `${file}.${randomBytes(6).toString('hex')}.partial`;
  await fs.writeFile(temp, value, { mode: 0o600, flag: 'wx' });
  try {
    // link() fails if another process created the file first; then theirs wins.
    await fs.link(temp, file);
    return { value, created: true };
  } catch (err) {
    if (errorCode(err) !== 'EEXIST') throw err;
    return { value: await fs.readFile(file), created: false };
  } finally {
    await fs.rm(temp, { force: true });
  }
}

export { parseSigningKey, SIGNING_KEY_MIN_BYTES };

/**
 * The key of signed file links, approval links and runtime tokens: the configured one (every
 * replica the same), else `<data>/secrets/signing.key`, created on first start.
 */
export async function signingKey(dataDir: string, configured?: string): Promise<Buffer> {
  if (configured !== undefined) {
    const key = parseSigningKey(configured);
    if (!key) throw new Error(`FLOWGATE_SIGNING_KEY is not a key of at least ${SIGNING_KEY_MIN_BYTES} bytes`);
    return key;
  }
  return (await readOrCreate(path.join(dataDir, 'secrets', 'signing.key'), () => randomBytes(32))).value;
}

/**
 * The key ring run data is sealed with before it reaches Temporal (src/crypto/payload-codec.ts),
 * newest first: the configured one (FLOWGATE_DATA_KEYS, every replica the same), else
 * `<data>/secrets/data.keys`, created with one fresh key on first start when `create` (encryption
 * on), only read when not (encryption off still opens what was sealed before). The file is written
 * as FLOWGATE_DATA_KEYS is, so rotating the local ring is adding a line at its top.
 */
export async function dataKeys(dataDir: string, options: { configured?: string; create: boolean }): Promise<DataKey[]> {
  const parse = (text: string, where: string): DataKey[] => {
    const keys = parseDataKeys(text);
    if (typeof keys === 'string') throw new Error(`${where}: ${keys}`);
    return keys;
  };
  if (options.configured !== undefined) return parse(options.configured, 'FLOWGATE_DATA_KEYS');
  const file = path.join(dataDir, 'secrets', 'data.keys');
  if (!options.create) {
    try {
      return parse(await fs.readFile(file, 'utf8'), file);
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return [];
      throw err;
    }
  }
  const fresh = (): Buffer => Buffer.from(formatDataKeys([{ id: `local-${randomBytes(4).toString('hex')}`, key: randomBytes(DATA_KEY_BYTES) }]));
  return parse((await readOrCreate(file, fresh)).value.toString('utf8'), file);
}

export async function generatedAdminToken(dataDir: string, generate: () => string): Promise<{ token: string; created: boolean; file: string }> {
  const file = path.join(dataDir, 'admin-token');
  const { value, created } = await readOrCreate(file, () => Buffer.from(`${generate()}\n`));
  return { token: value.toString('utf8').trim(), created, file };
}
