/**
 * A small customer API on loopback (Koa), speaking the real wire formats a custom connection
 * meets: an OAuth 2.0 authorization server (`/oauth/authorize` with PKCE, `/oauth/token` for the
 * client-credentials, authorization-code and refresh-token grants, RFC 6749 error bodies), and a
 * Petstore-shaped API under `/api/v3` that accepts a bearer token it issued, an API key (header
 * `api_key` or query `api_key`) or basic auth. Every request is recorded.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import { koaBody } from 'koa-body';
import { listenOnLoopback } from './loopback';

export const CLIENT_ID = 'flowgate-client';
export const CLIENT_SECRET = 'client-secret-42';
export const API_KEY = 'pets-api-key-7';
export const BASIC_USER = 'ada';
export const BASIC_PASSWORD = 'lovelace';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export interface FakeCustomerApi {
  url: string;
  requests: RecordedRequest[];
  /** token requests by grant type */
  tokenRequests: { grant: string; fields: Record<string, string>; authorization?: string }[];
  /** seconds an access token lives */
  expiresIn: number;
  /** how long the token endpoint takes to answer, in ms */
  tokenDelayMs: number;
  /** refuse refresh-token grants with invalid_grant */
  refuseRefresh: boolean;
  /**
   * Hold this many of the next API requests (recorded, authorized) without ever answering them,
   * until their client goes away: a call in flight when its caller dies.
   */
  holdNext: number;
  /** forget every access token issued so far (the API then answers 401 to them) */
  revokeAccessTokens(): void;
  pets: Map<number, Record<string, unknown>>;
  close(): Promise<void>;
}

interface IssuedCode {
  redirectUri: string;
  challenge?: string;
  scope?: string;
}

export async function startFakeCustomerApi(): Promise<FakeCustomerApi> {
  const accessTokens = new Set<string>();
  const refreshTokens = new Set<string>();
  const codes = new Map<string, IssuedCode>();
  const fake: FakeCustomerApi = {
    url: '', requests: [], tokenRequests: [], expiresIn: 3600, tokenDelayMs: 0, refuseRefresh: false, holdNext: 0,
    revokeAccessTokens: () => accessTokens.clear(),
    pets: new Map([[10, { id: 10, name: 'doggie', category: { id: 1, name: 'Dogs' }, photoUrls: ['https://pets.example/d.jpg'], tags: [{ id: 1, name: 'good' }], status: 'available' }]]),
    close: async () => undefined,
  };
  const issue = (): Record<string, unknown> => {
    const token = `at-${randomBytes(12).toString('hex')}`;
    accessTokens.add(token);
    return { access_token: token, token_type: 'Bearer', expires_in: fake.expiresIn };
  };

  const app = new Koa();
  const router = new Router();
  app.use(koaBody({ urlencoded: true, json: true, text: true, multipart: false, includeUnparsed: false }));
  app.use(async (ctx, next) => {
    fake.requests.push({ method: ctx.method, path: ctx.path, query: { ...ctx.query } as Record<string, string | string[]>, headers: { ...ctx.headers }, body: ctx.request.body });
    await next();
  });

  router.get('/oauth/authorize', (ctx) => {
    const q = ctx.query as Record<string, string>;
    if (q.client_id !== CLIENT_ID || q.response_type !== 'code' || !q.redirect_uri) {
      ctx.status = 400;
      ctx.body = 'bad authorization request';
      return;
    }
    const target = new URL(q.redirect_uri);
    target.searchParams.set('state', q.state ?? '');
    if (q.scope?.includes('forbidden')) {
      target.searchParams.set('error', 'access_denied');
      target.searchParams.set('error_description', 'The user denied access');
    } else {
      const code = `code-${randomBytes(8).toString('hex')}`;
      codes.set(code, { redirectUri: q.redirect_uri, challenge: q.code_challenge, scope: q.scope });
      target.searchParams.set('code', code);
    }
    ctx.redirect(target.toString());
  });

  router.post('/oauth/token', async (ctx) => {
    const fields = (ctx.request.body ?? {}) as Record<string, string>;
    fake.tokenRequests.push({ grant: fields.grant_type ?? '', fields, authorization: ctx.get('Authorization') || undefined });
    if (fake.tokenDelayMs) await new Promise((r) => setTimeout(r, fake.tokenDelayMs));
    const refuse = (status: number, error: string, description: string): void => {
      ctx.status = status;
      ctx.body = { error, error_description: description };
    };
    const basic = /^Basic (.+)$/.exec(ctx.get('Authorization'))?.[1];
    const [id, secret] = basic ? Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent) : [fields.client_id, fields.client_secret];
    if (id !== CLIENT_ID || secret !== CLIENT_SECRET) return refuse(401, 'invalid_client', 'Client authentication failed');
    ctx.set('Cache-Control', 'no-store');
    if (fields.grant_type === 'client_credentials') {
      ctx.body = issue();
      return;
    }
    if (fields.grant_type === 'authorization_code') {
      const issued = codes.get(fields.code ?? '');
      codes.delete(fields.code ?? '');
      if (!issued || issued.redirectUri !== fields.redirect_uri) return refuse(400, 'invalid_grant', 'The authorization code is invalid');
      if (issued.challenge && createHash('sha256').update(fields.code_verifier ?? '').digest('base64url') !== issued.challenge) {
        return refuse(400, 'invalid_grant', 'PKCE verification failed');
      }
      const refresh = `rt-${randomBytes(12).toString('hex')}`;
      refreshTokens.add(refresh);
      ctx.body = { ...issue(), refresh_token: refresh };
      return;
    }
    if (fields.grant_type === 'refresh_token') {
      if (fake.refuseRefresh || !refreshTokens.has(fields.refresh_token ?? '')) return refuse(400, 'invalid_grant', 'Token has been expired or revoked.');
      ctx.body = issue();
      return;
    }
    refuse(400, 'unsupported_grant_type', `grant ${fields.grant_type} is not supported`);
  });

  // the API: any of a bearer token it issued, the API key, or basic auth
  const api = new Router({ prefix: '/api/v3' });
  api.use(async (ctx, next) => {
    const auth = ctx.get('Authorization');
    const bearer = /^Bearer (.+)$/.exec(auth)?.[1];
    const basic = /^Basic (.+)$/.exec(auth)?.[1];
    const ok = (bearer !== undefined && accessTokens.has(bearer))
      || ctx.get('api_key') === API_KEY || ctx.query.api_key === API_KEY
      || (basic !== undefined && Buffer.from(basic, 'base64').toString() === `${BASIC_USER}:${BASIC_PASSWORD}`);
    if (!ok) {
      ctx.status = 401;
      ctx.set('WWW-Authenticate', 'Bearer error="invalid_token"');
      ctx.body = { code: 401, type: 'error', message: 'not authorized' };
      return;
    }
    if (fake.holdNext > 0) {
      fake.holdNext--;
      await new Promise((resolve) => ctx.req.socket.once('close', resolve));
      ctx.respond = false;
      return;
    }
    await next();
  });
  api.get('/health', (ctx) => {
    ctx.body = { ok: true };
  });
  api.get('/pet/findByStatus', (ctx) => {
    const status = ctx.query.status ?? 'available';
    ctx.body = [...fake.pets.values()].filter((p) => p.status === status);
  });
  api.get('/pet/findByTags', (ctx) => {
    const raw = ctx.query.tags;
    const tags = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
    ctx.body = [...fake.pets.values()].filter((p) => (p.tags as { name: string }[] | undefined)?.some((t) => tags.includes(t.name)));
  });
  api.get('/pet/:petId', (ctx) => {
    const pet = fake.pets.get(Number(ctx.params.petId));
    if (!pet) {
      ctx.status = 404;
      ctx.body = { code: 1, type: 'error', message: 'Pet not found' };
      return;
    }
    ctx.body = pet;
  });
  api.post('/pet', (ctx) => {
    const pet = ctx.request.body as Record<string, unknown>;
    const id = typeof pet.id === 'number' ? pet.id : fake.pets.size + 100;
    fake.pets.set(id, { ...pet, id });
    ctx.body = { ...pet, id };
  });
  api.delete('/pet/:petId', (ctx) => {
    fake.pets.delete(Number(ctx.params.petId));
    ctx.body = 'Pet deleted';
    ctx.type = 'text/plain';
  });
  api.get('/store/inventory', (ctx) => {
    ctx.body = { available: [...fake.pets.values()].filter((p) => p.status === 'available').length };
  });
  api.get('/user/login', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(`logged in user session:${ctx.query.username}`);
  });
  // the org-chart fixture's routes (circular-tree.yaml)
  api.get('/teams/:teamId/report.pdf', (ctx) => {
    ctx.type = 'application/pdf';
    ctx.body = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from([0, 1, 2, 255]), Buffer.from(ctx.params.teamId ?? '')]);
  });
  api.put('/teams/:teamId', (ctx) => {
    ctx.body = { stored: ctx.params.teamId, team: ctx.request.body };
  });
  api.get('/people/search', (ctx) => {
    ctx.body = [{ name: 'Ada', skills: String(ctx.query.skill ?? '').split(','), source: ctx.get('X-Request-Source') }];
  });

  app.use(router.routes()).use(api.routes());
  const handle = app.callback();
  // Koa answers its own errors; the handler's promise never rejects
  const listening = await listenOnLoopback(http.createServer((req, res) => {
    void handle(req, res);
  }));
  fake.url = listening.url;
  fake.close = listening.close;
  return fake;
}

// `node dist/test/support/fake-customer-api.js`: the fake on its own, for the example in docs/tool-gateway.md
if (require.main === module) {
  void startFakeCustomerApi().then((fake) => {
    console.log(`fake customer API at ${fake.url} (Petstore under ${fake.url}/api/v3, api_key ${API_KEY}); Ctrl-C stops it`);
  });
}
