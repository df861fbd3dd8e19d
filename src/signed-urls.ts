/**
 * Signed, expiring links to blobs (`/files/<key>?exp=&name=&sig=`). The signature covers the key,
 * the expiry and the download name, so none of them can be changed without breaking it.
 */
import { hmac, safeEqual } from './secrets';

export interface SignedUrlSigner {
  /** `name` becomes the download's file name, `type` its Content-Type; both are signed. */
  sign(key: string, ttlSeconds: number, options?: { name?: string; type?: string }): string;
  /**
   * The `exp` a link signed now with this TTL carries (whole seconds): links signed while it stays
   * the same are identical, so a body of links can be reused until it changes.
   */
  expiry(ttlSeconds: number): string;
  verify(key: string, params: { exp?: string; sig?: string; name?: string; type?: string }): 'ok' | 'expired' | 'invalid';
}

export function createSigner(secret: Buffer, publicUrl: string, now: () => number = Date.now): SignedUrlSigner {
  // JSON keeps the fields apart whatever they contain, so text cannot move from one to another.
  const payload = (key: string, exp: string, name: string, type: string): string => JSON.stringify(['files', key, exp, name, type]);
  const expiry = (ttlSeconds: number): string => String(Math.floor(now() / 1000) + ttlSeconds);
  return {
    expiry,
    sign(key, ttlSeconds, options = {}) {
      const exp = expiry(ttlSeconds);
      const name = options.name ?? '';
      const type = options.type ?? '';
      const query = new URLSearchParams({ exp });
      if (name) query.set('name', name);
      if (type) query.set('type', type);
      query.set('sig', hmac(secret, payload(key, exp, name, type)));
      return `${publicUrl}/files/${key}?${query.toString()}`;
    },
    verify(key, params) {
      if (!params.exp || !params.sig || !/^\d{1,12}$/.test(params.exp)) return 'invalid';
      if (!safeEqual(params.sig, hmac(secret, payload(key, params.exp, params.name ?? '', params.type ?? '')))) return 'invalid';
      if (Number(params.exp) * 1000 < now()) return 'expired';
      return 'ok';
    },
  };
}

/** The blob key of a `/files/<key>` path; undefined for malformed percent-encoding (`%E0`, say): such a link was never handed out. */
export function decodeFileKey(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}
