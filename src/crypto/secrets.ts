/**
 * Credential helpers: generation, hashing for storage, and HMAC signing. Keys and tokens are
 * 256-bit random values, so a plain SHA-256 is a sound storage hash (no stretching needed).
 */
import crypto, { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export function randomToken(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

/** Short unique IDs for records: a prefix and 16 characters of base62-ish randomness. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
}

/**
 * Every API key, token and admin token is looked up by this: once per trigger call and poll. Node's
 * one-shot `crypto.hash` (20.12 and later; the engines range starts at 20.3) costs half of a Hash
 * object's create, update and digest.
 */
export function hashSecret(secret: string): string {
  return typeof crypto.hash === 'function' ? crypto.hash('sha256', secret, 'hex') : createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function hmac(key: Buffer, message: string): string {
  return createHmac('sha256', key).update(message, 'utf8').digest('base64url');
}

export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
