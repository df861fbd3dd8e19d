/**
 * A real OpenID Connect provider on loopback for tests: panva's oidc-provider (OpenID Certified),
 * with one confidential client and test accounts. Its login and consent are finished by the
 * provider's own interaction API for whichever account the test names (`signInAs`), so a sign-in
 * is driven headlessly with fetch and a cookie jar (`browse`): the provider's authorization
 * endpoint, its session and interaction cookies, the code, all real.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { listenOnLoopback, type LoopbackServer } from './loopback';

export interface TestAccount {
  email: string;
  name?: string;
  groups?: string[];
  emailVerified?: boolean;
}

export interface TestIssuer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, TestAccount>;
  /** the account the next login signs in as */
  signInAs(accountId: string): void;
  stop(): Promise<void>;
}

export async function startTestIssuer(redirectUri: string): Promise<TestIssuer> {
  let handler: http.RequestListener = (_req, res) => res.end();
  const server: LoopbackServer = await listenOnLoopback(http.createServer((req, res) => handler(req, res)));
  const { default: Provider } = await import('oidc-provider');
  const accounts = new Map<string, TestAccount>();
  const clientId = 'flowgate-console';
  const clientSecret = `secret-${randomUUID()}`;
  let current = '';
  const provider = new Provider(server.url, {
    clients: [{
      client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri],
      grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_post',
    }],
    cookies: { keys: [randomUUID()] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
    // scope claims in the ID token itself (flowgate reads the ID token, not userinfo)
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    async findAccount(_ctx: unknown, id: string) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        claims: () => ({ sub: id, email: account.email, email_verified: account.emailVerified ?? true, name: account.name ?? id, groups: account.groups ?? [] }),
      };
    },
  });
  const callback = provider.callback();
  handler = (req, res) => {
    if (!req.url?.startsWith('/interaction/')) {
      callback(req, res);
      return;
    }
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        await provider.interactionFinished(req, res, { login: { accountId: current } }, { mergeWithLastSubmission: false });
        return;
      }
      const grant = new provider.Grant({ accountId: details.session?.accountId ?? current, clientId });
      grant.addOIDCScope(String(details.params.scope ?? 'openid'));
      await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
    })().catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  };
  return {
    issuer: server.url, clientId, clientSecret, accounts,
    signInAs: (accountId) => {
      current = accountId;
    },
    stop: () => server.close(),
  };
}

/** A browser's cookies, per host (paths ignored: the tests' cookies do not collide by name). */
export class CookieJar {
  private readonly jar = new Map<string, Map<string, string>>();

  take(url: URL, response: Response): void {
    const cookies = this.jar.get(url.host) ?? new Map<string, string>();
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (/max-age=0\b/i.test(line) || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
    this.jar.set(url.host, cookies);
  }

  header(url: URL): string {
    return [...(this.jar.get(url.host) ?? new Map<string, string>())].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  get(host: string, name: string): string | undefined {
    return this.jar.get(host)?.get(name);
  }
}

/** Follows redirects as a browser would (GET, cookies per host) from `start`; the last answer and its URL. */
export async function browse(start: string, jar: CookieJar, maxHops = 20): Promise<{ response: Response; url: URL; body: string }> {
  let url = new URL(start);
  for (let hop = 0; hop < maxHops; hop++) {
    const response = await fetch(url, { redirect: 'manual', headers: { Cookie: jar.header(url) } });
    jar.take(url, response);
    const location = response.headers.get('Location');
    if (response.status >= 300 && response.status < 400 && location) {
      await response.arrayBuffer();
      url = new URL(location, url);
      continue;
    }
    return { response, url, body: await response.text() };
  }
  throw new Error(`more than ${maxHops} redirects from ${start}`);
}
