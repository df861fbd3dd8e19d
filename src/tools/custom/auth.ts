/**
 * How a custom connection authenticates at its API: an API key, basic auth, or an OAuth 2.0 access
 * token (client credentials, or authorization code with a stored refresh token). Access tokens are
 * cached in memory until shortly before they expire, and one token request serves every call that
 * needs a token at the same time. A refused refresh marks the connection `error` with the
 * provider's reason; a connection still waiting for consent is `pending`.
 * One piece (over 300 lines): token requests, their cache and the consent's sealed state are one
 * protocol with one secret (the connection's sealed state), read and written in one place.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Logger } from '../../observability/logger';
import { httpRequest, type BufferedResponse } from '../../net/http-client';
import type { ToolServerStore } from '../../registry/tool-servers';
import type { ConnectionStore } from '../connections';
import { ToolCallError } from '../server';
import type { CustomCredentials } from './credentials';

const TOKEN_TIMEOUT_MS = 10_000;
const TOKEN_MAX_BYTES = 64 * 1024;
/** a token is renewed this long before the provider says it expires (at most half its life) */
const EXPIRY_MARGIN_MS = 30_000;
/** a token without `expires_in` is used this long before it is fetched again */
const DEFAULT_TOKEN_LIFE_MS = 5 * 60_000;
const CONSENT_VALIDITY_MS = 10 * 60_000;

const TokenResponseSchema = z.object({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  expires_in: z.coerce.number().positive().optional(),
  refresh_token: z.string().min(1).optional(),
});

const TokenErrorSchema = z.object({ error: z.string(), error_description: z.string().optional() });

/** What a custom connection keeps sealed besides its credentials. */
const ConnectionSecretSchema = z.object({
  refreshToken: z.string().optional(),
  consent: z.object({
    nonceHash: z.string(), verifier: z.string().optional(), redirectUri: z.string(), expiresAt: z.number(),
    /** where the callback sends the browser back to (a console page), when the consent was started there */
    returnTo: z.string().optional(),
  }).optional(),
});
type ConnectionSecret = z.infer<typeof ConnectionSecretSchema>;

interface CachedToken {
  accessToken: string;
  expiresAt: number;
}

/** A token endpoint that refused: its reason, as the provider gave it. */
export class TokenRefusedError extends Error {
  override readonly name = 'TokenRefusedError';
  constructor(message: string, readonly status: number, readonly body: unknown) {
    super(message);
  }
}

export interface CustomConnectionRef {
  orgId: string;
  id: string;
  credentials: CustomCredentials;
}

export interface CustomAuthDeps {
  store: ToolServerStore;
  /** the connection store (it seals what a connection learns); a function, as it is assembled later */
  connections(): ConnectionStore;
  allowPrivateNetwork: boolean;
  log: Logger;
}

export class CustomAuth {
  private readonly tokens = new Map<string, CachedToken>();
  private readonly inFlight = new Map<string, Promise<CachedToken>>();

  constructor(private readonly deps: CustomAuthDeps) {}

  /** The headers (and query parameters) that authenticate a request on this connection. */
  async credentialsFor(connection: CustomConnectionRef): Promise<{ headers: Record<string, string>; query: Record<string, string> }> {
    const { auth } = connection.credentials;
    switch (auth.kind) {
      case 'api_key':
        return auth.in === 'query' ? { headers: {}, query: { [auth.name]: auth.value } } : { headers: { [auth.name]: auth.value }, query: {} };
      case 'basic':
        return { headers: { authorization: basic(auth.username, auth.password) }, query: {} };
      case 'oauth2_client_credentials':
      case 'oauth2_authorization_code':
        return { headers: { authorization: `Bearer ${(await this.accessToken(connection)).accessToken}` }, query: {} };
    }
  }

  /** Whether a 401 from the API is worth one retry with a fresh token. */
  canRenew(connection: CustomConnectionRef): boolean {
    return connection.credentials.auth.kind === 'oauth2_client_credentials' || connection.credentials.auth.kind === 'oauth2_authorization_code';
  }

  /** Forgets the cached token (the API answered 401 to it). */
  invalidate(connection: CustomConnectionRef): void {
    this.tokens.delete(cacheKey(connection));
  }

  /** One token request at a time per connection, not tied to one caller's signal: it serves every waiting call. */
  private accessToken(connection: CustomConnectionRef): Promise<CachedToken> {
    const key = cacheKey(connection);
    const cached = this.tokens.get(key);
    if (cached && cached.expiresAt > Date.now()) return Promise.resolve(cached);
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const request = this.fetchToken(connection).then((token) => {
      this.tokens.set(key, token);
      return token;
    }).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, request);
    return request;
  }

  private async fetchToken(connection: CustomConnectionRef): Promise<CachedToken> {
    const { auth } = connection.credentials;
    if (auth.kind === 'oauth2_client_credentials') {
      try {
        const token = await this.tokenRequest(auth, { grant_type: 'client_credentials', ...(auth.scopes.length ? { scope: auth.scopes.join(' ') } : {}) });
        await this.markConnected(connection);
        return token.cached;
      } catch (error) {
        if (error instanceof TokenRefusedError) await this.deps.store.setConnectionState(connection.orgId, connection.id, { status: 'error', error: error.message });
        throw error;
      }
    }
    if (auth.kind !== 'oauth2_authorization_code') throw new Error('not an OAuth connection');
    const state = await this.deps.store.connectionState(connection.orgId, connection.id);
    const secret = this.readSecret(connection, state?.secret ?? null);
    if (!secret.refreshToken) {
      if (state?.status === 'error') throw new ToolCallError('CONNECTION_REFUSED', `connection ${connection.id} needs consent again: ${state.error ?? 'refused'}`);
      throw new ToolCallError('CONNECTION_REFUSED', `connection ${connection.id} is waiting for consent (status pending): open /api/v1/connections/${connection.id}/oauth/authorize`);
    }
    try {
      const token = await this.tokenRequest(auth, { grant_type: 'refresh_token', refresh_token: secret.refreshToken });
      // providers that rotate refresh tokens hand out a new one with every refresh
      const refreshToken = token.refreshToken ?? secret.refreshToken;
      await this.deps.store.setConnectionState(connection.orgId, connection.id, {
        status: 'connected', error: null, secret: this.sealSecret(connection, { ...secret, refreshToken }),
      });
      return token.cached;
    } catch (error) {
      if (error instanceof TokenRefusedError) {
        await this.deps.store.setConnectionState(connection.orgId, connection.id, { status: 'error', error: error.message });
        throw new ToolCallError('CONNECTION_REFUSED', `connection ${connection.id} could not refresh its access token: ${error.message}`);
      }
      throw error;
    }
  }

  private async markConnected(connection: CustomConnectionRef): Promise<void> {
    const state = await this.deps.store.connectionState(connection.orgId, connection.id);
    if (state?.status !== 'connected') await this.deps.store.setConnectionState(connection.orgId, connection.id, { status: 'connected', error: null });
  }

  private async tokenRequest(auth: { tokenUrl: string; clientId: string; clientSecret: string; clientAuth: 'basic' | 'body' }, fields: Record<string, string>): Promise<{ cached: CachedToken; refreshToken?: string }> {
    const form = new URLSearchParams(fields);
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (auth.clientAuth === 'basic') headers.authorization = basic(encodeURIComponent(auth.clientId), encodeURIComponent(auth.clientSecret));
    else {
      form.set('client_id', auth.clientId);
      form.set('client_secret', auth.clientSecret);
    }
    const response = await httpRequest({
      method: 'POST', url: auth.tokenUrl, headers, body: form.toString(), timeoutMs: TOKEN_TIMEOUT_MS, maxResponseBytes: TOKEN_MAX_BYTES,
      allowPrivateNetwork: this.deps.allowPrivateNetwork,
    });
    const body = parseBody(response);
    if (response.status < 200 || response.status >= 300) {
      const reason = TokenErrorSchema.safeParse(body);
      const message = reason.success ? `${reason.data.error}${reason.data.error_description ? `: ${reason.data.error_description}` : ''}` : `the token endpoint answered ${response.status}`;
      throw new TokenRefusedError(message, response.status, body);
    }
    const token = TokenResponseSchema.safeParse(body);
    if (!token.success) throw new TokenRefusedError('the token endpoint answered without an access_token', response.status, undefined);
    const lifeMs = token.data.expires_in === undefined ? DEFAULT_TOKEN_LIFE_MS : token.data.expires_in * 1000;
    const margin = Math.min(EXPIRY_MARGIN_MS, lifeMs / 2);
    return { cached: { accessToken: token.data.access_token, expiresAt: Date.now() + lifeMs - margin }, refreshToken: token.data.refresh_token };
  }

  // --- authorization code consent ---

  /**
   * The provider's authorize URL for a fresh consent. `state` names the organization and the
   * connection, and carries a nonce whose hash (and the PKCE verifier) is stored sealed with the
   * connection, so the callback can tell its own consent from a forged or replayed one.
   */
  async startConsent(connection: CustomConnectionRef, redirectUri: string, returnTo?: string): Promise<string> {
    const { auth } = connection.credentials;
    if (auth.kind !== 'oauth2_authorization_code') throw new Error('not an authorization-code connection');
    const nonce = randomBytes(24).toString('base64url');
    const verifier = auth.pkce ? randomBytes(32).toString('base64url') : undefined;
    const state = await this.deps.store.connectionState(connection.orgId, connection.id);
    const secret = this.readSecret(connection, state?.secret ?? null);
    const consent = { nonceHash: sha256(nonce), verifier, redirectUri, expiresAt: Date.now() + CONSENT_VALIDITY_MS, ...(returnTo ? { returnTo } : {}) };
    await this.deps.store.setConnectionState(connection.orgId, connection.id, {
      status: state?.status ?? 'pending', error: state?.error ?? null, secret: this.sealSecret(connection, { ...secret, consent }),
    });
    const url = new URL(auth.authorizeUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', auth.clientId);
    url.searchParams.set('redirect_uri', redirectUri);
    if (auth.scopes.length) url.searchParams.set('scope', auth.scopes.join(' '));
    url.searchParams.set('state', `${connection.orgId}.${connection.id}.${nonce}`);
    if (verifier) {
      url.searchParams.set('code_challenge', createHash('sha256').update(verifier).digest('base64url'));
      url.searchParams.set('code_challenge_method', 'S256');
    }
    return url.toString();
  }

  /**
   * Finishes a consent: checks `state`, exchanges the code for tokens and stores the refresh token.
   * `open` finds the connection the state names. Answers the connection's id; throws a
   * TokenRefusedError with the provider's reason, or an Error for a state that is not ours.
   */
  async finishConsent(stateText: string, outcome: { code?: string; error?: string; errorDescription?: string },
    open: (orgId: string, id: string) => Promise<CustomConnectionRef | undefined>): Promise<CustomConnectionRef> {
    const { orgId, id, connection, secret, consent } = await this.pendingConsent(stateText, open);
    if (consent.expiresAt < Date.now()) throw new ConsentStateError('the consent took too long; start it again');
    const { auth } = connection.credentials;
    if (auth.kind !== 'oauth2_authorization_code') throw new ConsentStateError('the connection does not use the authorization code flow');
    const withoutConsent: ConnectionSecret = { refreshToken: secret.refreshToken };
    if (outcome.error !== undefined || outcome.code === undefined) {
      const reason = `${outcome.error ?? 'no code'}${outcome.errorDescription ? `: ${outcome.errorDescription}` : ''}`;
      await this.deps.store.setConnectionState(orgId, id, { status: 'error', error: reason, secret: this.sealSecret(connection, withoutConsent) });
      throw new TokenRefusedError(reason, 400, undefined);
    }
    try {
      const token = await this.tokenRequest(auth, {
        grant_type: 'authorization_code', code: outcome.code, redirect_uri: consent.redirectUri, ...(consent.verifier ? { code_verifier: consent.verifier } : {}),
      });
      await this.deps.store.setConnectionState(orgId, id, {
        status: 'connected', error: null, secret: this.sealSecret(connection, { refreshToken: token.refreshToken ?? secret.refreshToken }),
      });
      this.tokens.set(cacheKey(connection), token.cached);
      return connection;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      await this.deps.store.setConnectionState(orgId, id, { status: 'error', error: reason, secret: this.sealSecret(connection, withoutConsent) });
      throw error;
    }
  }

  /**
   * Where the browser goes back to after the consent `state` names (set when the console started
   * it), or undefined; a state that is not ours has none. Read before finishConsent, which clears it.
   */
  async consentReturn(stateText: string, open: (orgId: string, id: string) => Promise<CustomConnectionRef | undefined>): Promise<string | undefined> {
    try {
      return (await this.pendingConsent(stateText, open)).consent.returnTo;
    } catch (error) {
      if (error instanceof ConsentStateError) return undefined;
      throw error;
    }
  }

  /** The consent `state` names, checked against its nonce; a ConsentStateError when it is not one this gateway handed out. */
  private async pendingConsent(stateText: string, open: (orgId: string, id: string) => Promise<CustomConnectionRef | undefined>) {
    const match = /^([^.]+)\.([^.]+)\.([A-Za-z0-9_-]+)$/.exec(stateText);
    if (!match) throw new ConsentStateError('the state is not one this gateway handed out');
    const [, orgId = '', id = '', nonce = ''] = match;
    const connection = await open(orgId, id);
    const state = connection && await this.deps.store.connectionState(orgId, id);
    const secret = connection && state ? this.readSecret(connection, state.secret) : undefined;
    const consent = secret?.consent;
    if (!connection || !secret || !consent || !sameText(consent.nonceHash, sha256(nonce))) throw new ConsentStateError('the state is not one this gateway handed out');
    return { orgId, id, connection, secret, consent };
  }

  private readSecret(connection: CustomConnectionRef, sealed: string | null): ConnectionSecret {
    if (sealed === null) return {};
    const parsed = ConnectionSecretSchema.safeParse(JSON.parse(this.deps.connections().openState(connection.orgId, connection.id, sealed)));
    return parsed.success ? parsed.data : {};
  }

  private sealSecret(connection: CustomConnectionRef, secret: ConnectionSecret): string {
    return this.deps.connections().sealState(connection.orgId, connection.id, JSON.stringify(secret));
  }
}

/** A callback whose `state` does not match a consent this gateway started. */
export class ConsentStateError extends Error {
  override readonly name = 'ConsentStateError';
}

function cacheKey(connection: CustomConnectionRef): string {
  return `${connection.orgId}\u0000${connection.id}`;
}

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A response body as JSON when it is JSON, else as text. */
export function parseBody(response: BufferedResponse): unknown {
  const text = response.body.toString('utf8');
  const type = String(response.headers['content-type'] ?? '');
  if (/[/+]json\b/i.test(type) || /^\s*[[{]/.test(text)) {
    try {
      const parsed: unknown = JSON.parse(text);
      return parsed;
    } catch {
      return text;
    }
  }
  return text;
}
