/** An OAuth error as RFC 6749 section 5.2 (and RFC 7591 section 3.2.2) answer it: a code, a description, a status. */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  /** `retryAfterSeconds`: answered as `Retry-After` (a refusal that lifts by itself: a full pool of registered clients) */
  constructor(readonly code: string, readonly description: string, readonly status = 400, readonly retryAfterSeconds?: number) {
    super(`${code}: ${description}`);
  }

  toJSON(): { error: string; error_description: string } {
    return { error: this.code, error_description: this.description };
  }
}
