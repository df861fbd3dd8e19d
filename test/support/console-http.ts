/**
 * A console session over plain HTTP for tests: sign in with an admin token (the session cookie
 * and the page's CSRF token), GET a console page with it, POST a console form with it.
 */
import assert from 'node:assert/strict';
import type { TestFlowgate } from './flowgate';

export interface ConsoleSession {
  cookie: string;
  csrf: string;
}

export interface ConsoleHttp {
  signIn(token: string): Promise<ConsoleSession>;
  get(s: ConsoleSession, pathname: string): Promise<Response>;
  /** a form POST from the console's origin; without `csrf` (or `cookie`) it goes without one */
  post(s: Partial<ConsoleSession>, pathname: string, form: Record<string, string>): Promise<Response>;
}

/** `csrfPage`: the console page whose forms carry the CSRF token read after signing in. */
export function consoleHttp(fg: () => TestFlowgate, csrfPage = '/console/workflows'): ConsoleHttp {
  return {
    async signIn(token) {
      const response = await fg().request('/console/sign-in', {
        method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: fg().url }, body: new URLSearchParams({ token }),
      });
      assert.equal(response.status, 303);
      const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      const csrf = /name="csrf" value="([^"]+)"/.exec(await (await fg().request(csrfPage, { headers: { Cookie: cookie } })).text())?.[1] ?? '';
      assert.ok(csrf.length > 20);
      return { cookie, csrf };
    },
    get: (s, pathname) => fg().request(pathname, { headers: { Cookie: s.cookie } }),
    post: (s, pathname, form) => fg().request(pathname, {
      method: 'POST', redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: fg().url, ...(s.cookie ? { Cookie: s.cookie } : {}) },
      body: new URLSearchParams({ ...(s.csrf ? { csrf: s.csrf } : {}), ...form }),
    }),
  };
}
