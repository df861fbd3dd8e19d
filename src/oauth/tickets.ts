/**
 * Sealed tickets: the authorization request, once validated, travels between the sign-in page,
 * the consent page and (later) an identity provider's round trip as an encrypted and
 * authenticated (AES-256-GCM), expiring value in the form, bound to the browser's CSRF cookie:
 * nothing is kept server-side until a code is issued. Encrypted because the consent ticket holds
 * the hash of the admin token that signed in (never the token), which the page has no business
 * showing.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ownJson } from '../common/narrow';
import { hmac, safeEqual } from '../crypto/secrets';

const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface AuthorizationRequest {
  clientId: string;
  clientName?: string;
  redirectUri: string;
  codeChallenge: string;
  state?: string;
  resource: string;
  scope?: string;
  /** the organization, when known (the authorize URL's `org`, or the page's first step): its identity provider is offered */
  org?: string;
}

/** Who the sign-in step signed in (the seam for other sign-in methods: they produce one of these). */
export interface SignedInSubject {
  orgId: string;
  /** `admin-token:<fingerprint>` for the bootstrap credential; a member's ID once people sign in */
  subject: string;
  /** the admin token, when that was the credential: rotating it ends the grant */
  adminTokenHash: string | null;
  /** the member, when they signed in through the organization's identity provider */
  memberId?: string;
}

interface Sealed<T> {
  v: 1;
  /** what the ticket is for: a request ticket cannot pass as a consent ticket */
  use: string;
  /** the HMAC of the browser's CSRF cookie it was issued to */
  bound: string;
  exp: number;
  data: T;
}

export class Tickets {
  /** binds a ticket to a browser */
  private readonly key: Buffer;
  /** seals it (AES-256-GCM) */
  private readonly sealKey: Buffer;

  constructor(signingKey: Buffer, private readonly now: () => number = Date.now) {
    this.key = Buffer.from(hmac(signingKey, 'flowgate oauth ticket key v1'), 'base64url');
    this.sealKey = Buffer.from(hmac(signingKey, 'flowgate oauth ticket sealing key v1'), 'base64url');
  }

  seal<T>(use: string, browser: string, ttlSeconds: number, data: T): string {
    const sealed: Sealed<T> = { v: 1, use, bound: hmac(this.key, `browser:${browser}`), exp: Math.floor(this.now() / 1000) + ttlSeconds, data };
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.sealKey, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(sealed), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The ticket's data, when it is ours, for this use, this browser's, and unexpired. */
  open<T>(use: string, browser: string, ticket: unknown): T | undefined {
    if (typeof ticket !== 'string' || ticket.length > 16_384 || !/^[A-Za-z0-9_-]+$/.test(ticket)) return undefined;
    const raw = Buffer.from(ticket, 'base64url');
    if (raw.length <= IV_BYTES + TAG_BYTES) return undefined;
    let sealed: Sealed<T>;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.sealKey, raw.subarray(0, IV_BYTES));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]);
      // sealed by seal() above under our key: the authentication tag vouches for the JSON
      sealed = ownJson<Sealed<T>>(plain.toString('utf8'));
    } catch {
      return undefined;
    }
    if (sealed.v !== 1 || sealed.use !== use || sealed.exp * 1000 <= this.now()) return undefined;
    if (typeof sealed.bound !== 'string' || !safeEqual(sealed.bound, hmac(this.key, `browser:${browser}`))) return undefined;
    return sealed.data;
  }
}
