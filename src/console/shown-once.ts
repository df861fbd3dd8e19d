/**
 * A secret the console shows once (a new API key): handed from the POST that created it to the page
 * its redirect leads to in a short-lived cookie sealed with the connection key (AES-256-GCM, bound
 * to the session), so any gateway replica can show it; the page clears the cookie, and the registry
 * keeps only the key's hash. Never in a URL; gone after five minutes even if the page never loaded.
 */
import { fieldOf } from '../common/narrow';
import type { ConnectionCipher } from '../crypto/connection-cipher';

/** How long the sealed secret is good for. */
export const SHOWN_ONCE_SECONDS = 300;

export class ShownOnce {
  constructor(private readonly cipher: ConnectionCipher, private readonly now: () => number = Date.now) {}

  /** The sealed value for the cookie: only the same session can open it, within SHOWN_ONCE_SECONDS. */
  seal(sessionIdHash: string, value: string): string {
    return this.cipher.seal(JSON.stringify({ value, until: this.now() + SHOWN_ONCE_SECONDS * 1000 }), binding(sessionIdHash));
  }

  /** The value, or undefined (no cookie, another session's, expired, or tampered with). */
  open(sessionIdHash: string, sealed: string | undefined): string | undefined {
    if (!sealed || sealed.length > 4096) return undefined;
    try {
      const held: unknown = JSON.parse(this.cipher.open(sealed, binding(sessionIdHash)));
      const value = fieldOf(held, 'value');
      const until = fieldOf(held, 'until');
      return typeof value === 'string' && typeof until === 'number' && until > this.now() ? value : undefined;
    } catch {
      return undefined;
    }
  }
}

function binding(sessionIdHash: string): string {
  return `console-shown-once:${sessionIdHash}`;
}
