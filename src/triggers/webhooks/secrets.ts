/**
 * Verified triggers' signing secrets at rest: sealed with the connection key (AES-256-GCM,
 * src/crypto/connection-cipher.ts), bound to the trigger, so a ciphertext copied onto another
 * trigger does not open. Taken once (on create, on a rotation) and never shown again: the API
 * shows how many a trigger holds and when they last changed.
 */
import type { ConnectionCipher } from '../../crypto/connection-cipher';

function binding(triggerId: string): string {
  return `trigger-secret:${triggerId}`;
}

export class TriggerSecrets {
  constructor(private readonly cipher: ConnectionCipher) {}

  seal(triggerId: string, secrets: readonly string[]): string[] {
    return secrets.map((secret) => this.cipher.seal(secret, binding(triggerId)));
  }

  open(triggerId: string, sealed: readonly string[]): string[] {
    return sealed.map((secret) => this.cipher.open(secret, binding(triggerId)));
  }
}
