/**
 * Files flowgate keeps in its data dir besides the registry and blobs: the URL-signing key and the
 * generated admin token. Both are created once, atomically, readable by the owner only.
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

export async function signingKey(dataDir: string): Promise<Buffer> {
  return (await readOrCreate(path.join(dataDir, 'secrets', 'signing.key'), () => randomBytes(32))).value;
}

export async function generatedAdminToken(dataDir: string, generate: () => string): Promise<{ token: string; created: boolean; file: string }> {
  const file = path.join(dataDir, 'admin-token');
  const { value, created } = await readOrCreate(file, () => Buffer.from(`${generate()}\n`));
  return { token: value.toString('utf8').trim(), created, file };
}
