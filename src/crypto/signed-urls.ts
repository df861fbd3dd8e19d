/**
 * Signed, expiring links to blobs (`/files/<key>?exp=&name=&sig=`). The signature covers the key,
 * the expiry and the download name, so none of them can be changed without breaking it.
 */
import { hmac, safeEqual } from './secrets';

export interface SignedUrlSigner {
  /**
   * `name` becomes the download's file name, `type` its Content-Type; both are signed. `notAfter`
   * (ms since the epoch): the link expires then at the latest (when its blob is deleted).
   */
  sign(key: string, ttlSeconds: number, options?: { name?: string; type?: string; notAfter?: number }): string;
  /**
   * The `exp` a link signed now with this TTL carries (whole seconds) when no retention bound cuts it:
   * links signed while it stays the same are identical (the bounds depend only on the key and
   * `notAfter`), so a body of links can be reused until it changes.
   */
  expiry(ttlSeconds: number): string;
  verify(key: string, params: { exp?: string; sig?: string; name?: string; type?: string }): 'ok' | 'expired' | 'invalid';
}

export interface SignerOptions {
  /**
   * The longest a link to `key` may live (the retention period of its family): a link is never
   * signed for longer than its blob is kept. undefined: no bound.
   */
  maxTtlSeconds?: (key: string) => number | undefined;
}

export function createSigner(secret: Buffer, publicUrl: string, now: () => number = Date.now, signerOptions: SignerOptions = {}): SignedUrlSigner {
  // JSON keeps the fields apart whatever they contain, so text cannot move from one to another.
  const payload = (key: string, exp: string, name: string, type: string): string => JSON.stringify(['files', key, exp, name, type]);
  const expiry = (ttlSeconds: number): string => String(Math.floor(now() / 1000) + ttlSeconds);
  return {
    expiry,
    sign(key, ttlSeconds, options = {}) {
      const nowSeconds = Math.floor(now() / 1000);
      const longest = signerOptions.maxTtlSeconds?.(key);
      let expSeconds = nowSeconds + (longest === undefined ? ttlSeconds : Math.min(ttlSeconds, longest));
      if (options.notAfter !== undefined) expSeconds = Math.min(expSeconds, Math.floor(options.notAfter / 1000));
      const exp = String(expSeconds);
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
