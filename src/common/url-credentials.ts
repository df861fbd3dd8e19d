/**
 * Credentials written into a URL (`https://x-access-token:<token>@git.example.com/…`, the way CI
 * systems hand a token to Git) are for the one request that uses them: a URL that is shown,
 * logged or recorded loses its user and password first (either can be the token).
 */

/** `scheme://user:password@` in any text: the user information ends at the authority's last `@`. */
const USER_INFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#'"]*@/gi;

/** `url` without the user and password of its authority; a text without them is answered as it is. */
export function withoutCredentials(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  if (!scheme) return url;
  const rest = url.slice(scheme[0].length);
  const authorityEnd = rest.search(/[/?#]/);
  const at = (authorityEnd < 0 ? rest : rest.slice(0, authorityEnd)).lastIndexOf('@');
  return at < 0 ? url : `${scheme[0]}${rest.slice(at + 1)}`;
}

/** `text` (a message, a command line) with the user and password taken out of every URL in it. */
export function scrubCredentials(text: string): string {
  return text.replace(USER_INFO, '$1');
}
