/**
 * The tool gateway's OAuth documents and machine endpoints (docs/tool-gateway.md "Signing in by
 * URL"; the browser pages are oauth-authorize.ts):
 *  - `GET /.well-known/oauth-protected-resource[/tools/<server>]`: RFC 9728 metadata of the gateway
 *    (or of one server) naming this gateway as its authorization server; 404 for a path no
 *    organization has a server at;
 *  - `GET /.well-known/oauth-authorization-server`: RFC 8414 metadata;
 *  - `POST /oauth/register`: dynamic client registration (RFC 7591), public clients only, at most
 *    FLOWGATE_OAUTH_PENDING_CLIENTS not yet used (429 `too_many_requests` with Retry-After past that);
 *  - `POST /oauth/token`: the authorization code (with its PKCE verifier) or a refresh token, for
 *    an access token and a new refresh token;
 *  - `POST /oauth/revoke`: token revocation (RFC 7009), which ends the token's grant.
 * These answer CORS `*` (no cookie is involved): browser-based MCP clients call them. A request from
 * an origin that is not allowed (src/http/origin-policy.ts) is refused 403 before it gets here.
 */
import Router from '@koa/router';
import { koaBody } from 'koa-body';
import type { Context, Next } from 'koa';
import { OAuthError } from '../../oauth/errors';
import type { GatewayDeps, OAuthDeps } from '../deps';
import { AUTHORIZATION_SERVER_METADATA_PATH, PROTECTED_RESOURCE_METADATA_PATH, SERVER_NAME } from '../oauth-resource';
import type { GatewayRouter, GatewayState } from '../state';
import { formOf } from '../validate';

const parseTokenForm = koaBody({ json: false, urlencoded: true, multipart: false, text: false, formLimit: '16kb' });
const parseRegistration = koaBody({ json: true, urlencoded: false, multipart: false, text: false, jsonLimit: '16kb' });

async function anyOrigin(ctx: Context, next: Next): Promise<void> {
  ctx.set('Access-Control-Allow-Origin', '*');
  if (ctx.method === 'OPTIONS') {
    ctx.set('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
    ctx.set('Access-Control-Allow-Headers', 'Content-Type, Authorization, MCP-Protocol-Version');
    ctx.set('Access-Control-Max-Age', '600');
    ctx.status = 204;
    return;
  }
  await next();
}

function oauthError(ctx: Context, error: OAuthError): void {
  ctx.status = error.status;
  ctx.set('Cache-Control', 'no-store');
  if (error.status === 401) ctx.set('WWW-Authenticate', 'Basic realm="flowgate-oauth"');
  if (error.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(error.retryAfterSeconds));
  ctx.body = error.toJSON();
}

/** A form field as a string; a repeated or missing one is undefined. */
function field(form: Record<string, unknown>, name: string): string | undefined {
  const value = form[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The client ID from the form, or from HTTP Basic (a client that authenticates so anyway; public clients have no secret). */
function clientIdOf(ctx: Context, form: Record<string, unknown>): string | undefined {
  const basic = /^Basic\s+(\S+)$/i.exec(ctx.get('Authorization'))?.[1];
  if (basic) {
    const decoded = Buffer.from(basic, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    try {
      return decodeURIComponent(colon === -1 ? decoded : decoded.slice(0, colon));
    } catch {
      return undefined;
    }
  }
  return field(form, 'client_id');
}

export function oauthRoutes(deps: GatewayDeps, oauth: OAuthDeps): GatewayRouter {
  const router = new Router<GatewayState>();
  const { resources, server } = oauth;

  const metadata = (resource: string) => (ctx: Context): void => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = resources.metadata(resource);
  };
  router.all(PROTECTED_RESOURCE_METADATA_PATH, anyOrigin);
  router.get(PROTECTED_RESOURCE_METADATA_PATH, metadata(resources.gateway));
  if (resources.toolsPrefix !== '') router.get(`${PROTECTED_RESOURCE_METADATA_PATH}${resources.toolsPrefix}`, anyOrigin, metadata(resources.gateway));
  router.all(`${PROTECTED_RESOURCE_METADATA_PATH}${resources.toolsPrefix}/:server`, anyOrigin);
  router.get(`${PROTECTED_RESOURCE_METADATA_PATH}${resources.toolsPrefix}/:server`, async (ctx) => {
    const name = ctx.params.server ?? '';
    // a path no organization has a server at (a built-in's, a custom server's id, `workflows`); unauthenticated, so whose is never told
    if (!SERVER_NAME.test(name) || !await deps.tools.mayServe(name)) {
      ctx.status = 404;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { error: 'not_found', error_description: 'no tool server at this path' };
      return;
    }
    metadata(resources.server(name))(ctx);
  });
  router.all(AUTHORIZATION_SERVER_METADATA_PATH, anyOrigin);
  router.get(AUTHORIZATION_SERVER_METADATA_PATH, (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = resources.authorizationServerMetadata();
  });

  router.all('/oauth/register', anyOrigin);
  router.post('/oauth/register', parseRegistration, async (ctx) => {
    try {
      const registered = await server.clients.register(ctx.request.body);
      ctx.status = 201;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = registered;
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      oauthError(ctx, error);
    }
  });

  router.all('/oauth/token', anyOrigin);
  router.post('/oauth/token', parseTokenForm, async (ctx) => {
    const form = formOf(ctx);
    ctx.set('Cache-Control', 'no-store');
    try {
      const clientId = clientIdOf(ctx, form);
      if (!clientId) throw new OAuthError('invalid_client', 'client_id is required', 401);
      const resource = field(form, 'resource');
      const grantType = field(form, 'grant_type');
      if (grantType === 'authorization_code') {
        const code = field(form, 'code');
        const codeVerifier = field(form, 'code_verifier');
        const redirectUri = field(form, 'redirect_uri');
        if (!code || !codeVerifier || !redirectUri) throw new OAuthError('invalid_request', 'code, code_verifier and redirect_uri are required');
        ctx.body = await server.exchangeCode({ code, codeVerifier, clientId, redirectUri, ...(resource ? { resource } : {}) });
      } else if (grantType === 'refresh_token') {
        const refreshToken = field(form, 'refresh_token');
        if (!refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required');
        ctx.body = await server.refresh({ refreshToken, clientId, ...(resource ? { resource } : {}) });
      } else {
        throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
      }
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      deps.log.info('oauth token request refused', { requestId: ctx.state.requestId, error: error.code });
      oauthError(ctx, error);
    }
  });
  router.all('/oauth/revoke', anyOrigin);
  router.post('/oauth/revoke', parseTokenForm, async (ctx) => {
    const form = formOf(ctx);
    ctx.set('Cache-Control', 'no-store');
    const clientId = clientIdOf(ctx, form);
    const token = field(form, 'token');
    if (!clientId || !token) {
      oauthError(ctx, new OAuthError('invalid_request', 'token and client_id are required'));
      return;
    }
    await server.revoke(token, clientId);
    ctx.status = 200;
    ctx.body = '';
  });
  return router;
}
