/**
 * The signature presets of verified triggers (issue 51, docs/webhooks.md): each checks a call's
 * signature over the raw body bytes, before anything parses them, against every secret the
 * trigger holds (two during a rotation), comparing in constant time. A refusal names the check
 * that failed (`missing_signature`, `malformed_signature`, `missing_timestamp`,
 * `stale_timestamp`, `signature_mismatch`) and never the expected value.
 *
 *   github             X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>
 *   stripe             Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">[,v1=…]
 *   slack              X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:ts:body">, X-Slack-Request-Timestamp
 *   standard-webhooks  webhook-id, webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256 of "id.ts.body"> …
 *   hmac               a configured header, algorithm, hex or base64, prefix, optional timestamp header ("ts.body")
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TriggerVerify } from './config';

export type RefusalCheck = 'missing_signature' | 'malformed_signature' | 'missing_timestamp' | 'stale_timestamp' | 'signature_mismatch';

export type Verdict = { ok: true } | { ok: false; check: RefusalCheck; reason: string };

/** A call as the presets see it: the raw body and its headers (names in lower case). */
export interface SignedCall {
  raw: Buffer;
  header(name: string): string | undefined;
  /** the gateway's clock, ms since the epoch */
  now: number;
}

function refuse(check: RefusalCheck, reason: string): Verdict {
  return { ok: false, check, reason };
}

type Algorithm = 'sha1' | 'sha256' | 'sha512';

function hmac(algorithm: Algorithm, key: Buffer | string, ...parts: (Buffer | string)[]): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/**
 * Whether any given signature equals any expected one. Every pair is compared (no early exit), each
 * in constant time; only the lengths, which are public, decide before a comparison.
 */
function anyMatches(given: readonly Buffer[], expected: readonly Buffer[]): boolean {
  let matched = false;
  for (const g of given) {
    for (const e of expected) {
      if (g.length === e.length && timingSafeEqual(g, e)) matched = true;
    }
  }
  return matched;
}

const HEX = /^[0-9a-f]+$/i;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function decodeHex(text: string): Buffer | undefined {
  return text.length % 2 === 0 && HEX.test(text) ? Buffer.from(text, 'hex') : undefined;
}

function decodeBase64(text: string): Buffer | undefined {
  return BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/** A Unix timestamp in seconds within `toleranceSeconds` of now, or the refusal. */
function checkTimestamp(text: string | undefined, header: string, toleranceSeconds: number, now: number): Verdict | undefined {
  if (text === undefined || text === '') return refuse('missing_timestamp', `the ${header} timestamp is missing`);
  if (!/^\d{1,12}$/.test(text)) return refuse('malformed_signature', `the ${header} timestamp is not a Unix time in seconds`);
  const skew = Math.abs(now / 1000 - Number(text));
  if (skew > toleranceSeconds) return refuse('stale_timestamp', `the ${header} timestamp is ${Math.round(skew)} s away from the gateway's clock; at most ${toleranceSeconds} s is accepted`);
  return undefined;
}

function mismatch(header: string): Verdict {
  return refuse('signature_mismatch', `no signature in ${header} matches the body under the trigger's secrets`);
}

function github(call: SignedCall, secrets: readonly string[]): Verdict {
  const header = 'X-Hub-Signature-256';
  const value = call.header('x-hub-signature-256');
  if (!value) return refuse('missing_signature', `the ${header} header is missing`);
  const hex = /^sha256=(.+)$/.exec(value.trim())?.[1];
  const given = hex === undefined ? undefined : decodeHex(hex);
  if (!given) return refuse('malformed_signature', `${header} is not sha256=<hex>`);
  return anyMatches([given], secrets.map((s) => hmac('sha256', s, call.raw))) ? { ok: true } : mismatch(header);
}

function stripe(call: SignedCall, secrets: readonly string[], toleranceSeconds: number): Verdict {
  const header = 'Stripe-Signature';
  const value = call.header('stripe-signature');
  if (!value) return refuse('missing_signature', `the ${header} header is missing`);
  const pairs = value.split(',').map((part) => part.trim().split('=', 2));
  const timestamp = pairs.find(([name]) => name === 't')?.[1];
  const given = pairs.filter(([name]) => name === 'v1').map(([, sig]) => decodeHex(sig ?? ''));
  if (given.length === 0 || given.some((g) => g === undefined)) return refuse('malformed_signature', `${header} has no v1=<hex> signature`);
  const stale = checkTimestamp(timestamp, `${header} t=`, toleranceSeconds, call.now);
  if (stale) return stale;
  const expected = secrets.map((s) => hmac('sha256', s, `${timestamp}.`, call.raw));
  return anyMatches(given.filter((g): g is Buffer => g !== undefined), expected) ? { ok: true } : mismatch(header);
}

function slack(call: SignedCall, secrets: readonly string[], toleranceSeconds: number): Verdict {
  const header = 'X-Slack-Signature';
  const value = call.header('x-slack-signature');
  if (!value) return refuse('missing_signature', `the ${header} header is missing`);
  const hex = /^v0=(.+)$/.exec(value.trim())?.[1];
  const given = hex === undefined ? undefined : decodeHex(hex);
  if (!given) return refuse('malformed_signature', `${header} is not v0=<hex>`);
  const timestamp = call.header('x-slack-request-timestamp');
  const stale = checkTimestamp(timestamp, 'X-Slack-Request-Timestamp', toleranceSeconds, call.now);
  if (stale) return stale;
  const expected = secrets.map((s) => hmac('sha256', s, `v0:${timestamp}:`, call.raw));
  return anyMatches([given], expected) ? { ok: true } : mismatch(header);
}

/** A Standard Webhooks secret's key: the base64 after `whsec_`. */
function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

function standardWebhooks(call: SignedCall, secrets: readonly string[], toleranceSeconds: number): Verdict {
  const header = 'webhook-signature';
  const value = call.header('webhook-signature');
  const id = call.header('webhook-id');
  if (!value) return refuse('missing_signature', `the ${header} header is missing`);
  if (!id) return refuse('malformed_signature', 'the webhook-id header is missing');
  const timestamp = call.header('webhook-timestamp');
  const stale = checkTimestamp(timestamp, 'webhook-timestamp', toleranceSeconds, call.now);
  if (stale) return stale;
  // space-separated `version,signature` pairs; only v1 (HMAC-SHA256) is checked
  const given = value.trim().split(/\s+/).map((part) => part.split(',', 2)).filter(([version]) => version === 'v1').map(([, sig]) => decodeBase64(sig ?? ''));
  if (given.length === 0 || given.some((g) => g === undefined)) return refuse('malformed_signature', `${header} has no v1,<base64> signature`);
  const expected = secrets.map((s) => hmac('sha256', standardKey(s), `${id}.${timestamp}.`, call.raw));
  return anyMatches(given.filter((g): g is Buffer => g !== undefined), expected) ? { ok: true } : mismatch(header);
}

function generic(call: SignedCall, secrets: readonly string[], options: Extract<TriggerVerify, { preset: 'hmac' }>): Verdict {
  const header = options.header;
  let value = call.header(header.toLowerCase())?.trim();
  if (!value) return refuse('missing_signature', `the ${header} header is missing`);
  if (options.prefix) {
    if (!value.startsWith(options.prefix)) return refuse('malformed_signature', `${header} does not start with ${JSON.stringify(options.prefix)}`);
    value = value.slice(options.prefix.length);
  }
  const given = options.encoding === 'hex' ? decodeHex(value) : decodeBase64(value);
  if (!given) return refuse('malformed_signature', `${header} is not ${options.encoding}`);
  let signedPrefix = '';
  if (options.timestampHeader) {
    const timestamp = call.header(options.timestampHeader.toLowerCase());
    const stale = checkTimestamp(timestamp, options.timestampHeader, options.toleranceSeconds, call.now);
    if (stale) return stale;
    signedPrefix = `${timestamp}.`;
  }
  const expected = secrets.map((s) => hmac(options.algorithm, s, signedPrefix, call.raw));
  return anyMatches([given], expected) ? { ok: true } : mismatch(header);
}

/** Checks the call's signature under the trigger's preset and secrets. */
export function verifySignature(verify: TriggerVerify, secrets: readonly string[], call: SignedCall): Verdict {
  switch (verify.preset) {
    case 'github': return github(call, secrets);
    case 'stripe': return stripe(call, secrets, verify.toleranceSeconds);
    case 'slack': return slack(call, secrets, verify.toleranceSeconds);
    case 'standard-webhooks': return standardWebhooks(call, secrets, verify.toleranceSeconds);
    case 'hmac': return generic(call, secrets, verify);
  }
}

/**
 * The delivery's ID, which becomes the run's idempotency key: the configured header's, else the
 * provider's (X-GitHub-Delivery, the Stripe event's `id`, webhook-id, Slack's `event_id`; for
 * the generic preset none). Only visible ASCII up to 200 characters counts.
 */
export function deliveryIdOf(verify: TriggerVerify, call: Pick<SignedCall, 'header'>, body: unknown): string | undefined {
  const field = (name: string): unknown => (typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.getOwnPropertyDescriptor(body, name)?.value : undefined);
  let id: unknown;
  if (verify.deliveryIdHeader) id = call.header(verify.deliveryIdHeader.toLowerCase());
  else if (verify.preset === 'github') id = call.header('x-github-delivery');
  else if (verify.preset === 'stripe') id = field('id');
  else if (verify.preset === 'standard-webhooks') id = call.header('webhook-id');
  else if (verify.preset === 'slack') id = field('event_id');
  return typeof id === 'string' && /^[\x21-\x7e]{1,200}$/.test(id) ? id : undefined;
}
