/**
 * Files flowgate keeps in its data dir besides the registry and blobs: the URL-signing key and the
 * generated admin token. Both are created once, atomically, readable by the owner only. Replicas
 * that share no data dir are given the signing key instead (FLOWGATE_SIGNING_KEY), so no file is
 * made.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';

/** Reads the file, or creates it with `make()` (mode 0600) if it does not exist yet. */
async function readOrCreate(file: string, make: () => Buffer): Promise<{ value: Buffer; created: boolean }> {
  try {
    return { value: await fs.readFile(file), created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
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
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { value: await fs.readFile(file), created: false };
  } finally {
    await fs.rm(temp, { force: true });
  }
}

/** The fewest bytes a configured signing key may have: HMAC-SHA-256 gains nothing from more, loses from fewer. */
export const SIGNING_KEY_MIN_BYTES = 32;

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
/** standard or URL-safe alphabet, padding optional */
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * Decodes FLOWGATE_SIGNING_KEY: hex digits (an even number, at least 64) or base64 (standard or
 * URL-safe) of at least SIGNING_KEY_MIN_BYTES bytes. undefined: not a key (too short, or neither
 * encoding), so that start-up refuses it rather than sign with something guessable.
 */
export function parseSigningKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  let key: Buffer;
  if (HEX.test(trimmed)) key = Buffer.from(trimmed, 'hex');
  else if (BASE64.test(trimmed)) key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  else return undefined;
  return key.length >= SIGNING_KEY_MIN_BYTES ? key : undefined;
}

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

export async function generatedAdminToken(dataDir: string, generate: () => string): Promise<{ token: string; created: boolean; file: string }> {
  const file = path.join(dataDir, 'admin-token');
  const { value, created } = await readOrCreate(file, () => Buffer.from(`${generate()}\n`));
  return { token: value.toString('utf8').trim(), created, file };
}
