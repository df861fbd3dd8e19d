/**
 * Completion callback URLs: absolute http or https URLs without credentials. Whether the address
 * may be reached is decided at delivery (src/net/http-client.ts, private addresses refused unless
 * FLOWGATE_ALLOW_PRIVATE_NETWORK), since a name may resolve elsewhere by then.
 */
import { z } from 'zod';

export const CALLBACK_URL_MAX_LENGTH = 2048;

export const CallbackUrlSchema = z.string().max(CALLBACK_URL_MAX_LENGTH).refine((text) => {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
  } catch {
    return false;
  }
}, 'must be an absolute http or https URL without user or password');

/** The header a trigger call names its completion callback in. */
export const CALLBACK_URL_HEADER = 'X-Pf-Callback-Url';
