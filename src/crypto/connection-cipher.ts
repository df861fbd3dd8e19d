/**
 * Connection credentials are encrypted at rest with AES-256-GCM. The key comes from the
 * configuration (FLOWGATE_CONNECTION_KEY) or is generated once into `<data>/secrets/connection.key`,
 * as the URL-signing key is. The connection's id and org are bound in as associated data, so a
 * ciphertext copied onto another row does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { CONNECTION_KEY_BYTES, parseConnectionKey } from '../config/key-text';
import { errorCode } from '../common/narrow';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export { CONNECTION_KEY_BYTES, parseConnectionKey };

export interface ConnectionCipher {
  seal(plaintext: string, binding: string): string;
  open(sealed: string, binding: string): string;
}

export function createConnectionCipher(key: Buffer): ConnectionCipher {
  if (key.length !== CONNECTION_KEY_BYTES) throw new Error(`the connection key must be ${CONNECTION_KEY_BYTES} bytes`);
  return {
    seal(plaintext, binding) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(binding, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
    },
    open(sealed, binding) {
      const [version, data] = sealed.split('.');
      if (version !== VERSION || data === undefined) throw new Error('unknown connection ciphertext format');
      const raw = Buffer.from(data, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(binding, 'utf8'));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    },
  };
}

/** The key file in the data dir, created once (0600) by whichever process gets there first. */
export async function connectionKeyFile(dataDir: string): Promise<Buffer> {
  const file = path.join(dataDir, 'secrets', 'connection.key');
  try {
    return await fs.readFile(file);
  } catch (err) {
    if (errorCode(err) !== 'ENOENT') throw err;
  }
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${randomBytes(6).toString('hex')}.partial`;
  await fs.writeFile(temp, randomBytes(CONNECTION_KEY_BYTES), { mode: 0o600, flag: 'wx' });
  try {
    // link() fails if another process created the file first; then theirs wins.
    await fs.link(temp, file);
  } catch (err) {
    if (errorCode(err) !== 'EEXIST') throw err;
  } finally {
    await fs.rm(temp, { force: true });
  }
  return fs.readFile(file);
}

/**
 * The key connections and webhook secrets are sealed with: the configured one (every replica the
 * same), else the data dir's key file, created on first start.
 */
export async function connectionKey(dataDir: string, configured?: string): Promise<Buffer> {
  const key = configured === undefined ? await connectionKeyFile(dataDir) : parseConnectionKey(configured);
  if (!key) throw new Error('FLOWGATE_CONNECTION_KEY is not a 32-byte key');
  return key;
}
