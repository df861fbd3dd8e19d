/**
 * Sessions of the codec endpoint's sign-in (src/http/routes/codec.ts): a browser showing the
 * Temporal Web UI cannot send a bearer token with the UI's codec calls, only a cookie. The cookie
 * holds its expiry and the SHA-256 of the administrator token it was signed in with, signed with
 * the signing key (so every replica that shares it accepts it); each call looks the token up again,
 * so replacing the administrator token ends its sessions.
 */
import { hmac, safeEqual } from './secrets';

export const CODEC_SESSION_COOKIE = 'flowgate_codec_session';
/** A sign-in lasts an hour: long enough to look into a few runs, short for a cookie that opens every organization's data. */
export const CODEC_SESSION_SECONDS = 3600;

/**
 * The Set-Cookie value of a codec sign-in (`value` from issue(); '' with 0 clears it): HttpOnly,
 * SameSite=Strict, sent only to /codec (the Web UI's calls carry it; no other route sees it).
 */
export function codecCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${CODEC_SESSION_COOKIE}=${value}; Path=/codec; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export interface CodecSessions {
  /** the cookie's value for a token (by its hash), valid `ttlSeconds` from `now` */
  issue(tokenHash: string, ttlSeconds: number): string;
  /** the token hash of a valid, unexpired cookie; undefined otherwise */
  verify(value: string): string | undefined;
}

export function createCodecSessions(secret: Buffer, now: () => number = Date.now): CodecSessions {
  const sign = (exp: number, tokenHash: string): string => hmac(secret, JSON.stringify(['codec-session', exp, tokenHash]));
  return {
    issue(tokenHash, ttlSeconds) {
      const exp = Math.floor(now() / 1000) + ttlSeconds;
      return `${exp}.${tokenHash}.${sign(exp, tokenHash)}`;
    },
    verify(value) {
      const [expText, tokenHash, signature, extra] = value.split('.');
      if (!expText || !tokenHash || !signature || extra !== undefined || !/^\d{1,12}$/.test(expText) || !/^[0-9a-f]{64}$/.test(tokenHash)) return undefined;
      const exp = Number(expText);
      if (!safeEqual(signature, sign(exp, tokenHash)) || exp * 1000 <= now()) return undefined;
      return tokenHash;
    },
  };
}
