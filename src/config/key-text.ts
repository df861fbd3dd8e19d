/**
 * How the keys given in the environment are written (FLOWGATE_SIGNING_KEY, FLOWGATE_CONNECTION_KEY):
 * pure decoders, so that the configuration checks a key's form without loading the cipher or the
 * data-dir files that use it (src/crypto/ imports these, not the other way round).
 */

/** The fewest bytes a configured signing key may have: HMAC-SHA-256 gains nothing from more, loses from fewer. */
export const SIGNING_KEY_MIN_BYTES = 32;

/** AES-256-GCM: the connection key is exactly this long. */
export const CONNECTION_KEY_BYTES = 32;

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

/** Decodes FLOWGATE_CONNECTION_KEY: 64 hex digits or base64 of 32 bytes. */
export function parseConnectionKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  return key.length === CONNECTION_KEY_BYTES ? key : undefined;
}

/** AES-256-GCM: every data key (FLOWGATE_DATA_KEYS) is exactly this long. */
export const DATA_KEY_BYTES = 32;

/** One key of the run-data key ring: its id travels with every payload sealed under it. */
export interface DataKey {
  id: string;
  key: Buffer;
}

const DATA_KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Decodes a data key ring: `id:key` entries, newest first, separated by commas or newlines (the
 * environment's FLOWGATE_DATA_KEYS and the data dir's `secrets/data.keys` are written alike); a key
 * is 64 hex digits or base64 of 32 bytes. Answers the keys, or a sentence saying what is wrong
 * (never the key material).
 */
export function parseDataKeys(text: string): DataKey[] | string {
  const entries = text.split(/[,\n]/).map((e) => e.trim()).filter((e) => e !== '');
  if (entries.length === 0) return 'no key given';
  const keys: DataKey[] = [];
  for (const [index, entry] of entries.entries()) {
    const colon = entry.indexOf(':');
    const id = colon === -1 ? '' : entry.slice(0, colon);
    if (!DATA_KEY_ID.test(id)) return `entry ${index + 1} is not id:key with an id of letters, digits, ".", "_" or "-" (at most 64)`;
    const key = parseConnectionKey(entry.slice(colon + 1));
    if (!key) return `key "${id}" is not 32 bytes: 64 hex digits or base64 (openssl rand -base64 32)`;
    if (keys.some((k) => k.id === id)) return `key id "${id}" appears twice`;
    keys.push({ id, key });
  }
  return keys;
}

/** A key ring written as parseDataKeys reads it, one key a line. */
export function formatDataKeys(keys: readonly DataKey[]): string {
  return keys.map((k) => `${k.id}:${k.key.toString('base64')}\n`).join('');
}
