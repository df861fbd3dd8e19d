/**
 * The clients of the tool gateway's authorization server (docs/tool-gateway.md "Signing in by
 * URL"): a client ID that is an https URL names a client ID metadata document, fetched through
 * the outbound HTTP client (its private-address policy: FLOWGATE_ALLOW_PRIVATE_NETWORK) and kept
 * a few minutes; any other client ID is one registered here dynamically (RFC 7591).
 *
 * Registration is unauthenticated, so registered clients are bounded (docs/tool-gateway.md
 * "Registered clients: expiry and limits"): a client never used to obtain a grant is *pending*,
 * at most `pending` of them at once (FLOWGATE_OAUTH_PENDING_CLIENTS; past that registration is
 * refused 429 until some expire), and it expires PENDING_CLIENT_HOURS after registration; a client
 * that obtained a grant counts for each organization it holds a live grant in, at most `perOrg` per
 * organization (FLOWGATE_OAUTH_CLIENTS_PER_ORG; checked at consent and at the code exchange), and
 * expires once it has no live grant and was last used IDLE_CLIENT_DAYS ago. The retention sweep
 * removes expired clients every hour (src/retention/sweep.ts); a full pending pool removes its
 * expired ones at once too, so registration reopens with retention off.
 */
import { LruCache } from '../cache/lru-cache';
import { isRecord, messageOf } from '../common/narrow';
import { randomToken } from '../crypto/secrets';
import { httpRequest } from '../net/http-client';
import type { ClientExpiry, Registry } from '../registry';
import { OAuthError } from './errors';

/** A registered client never used to obtain a grant expires this long after registration. */
export const PENDING_CLIENT_HOURS = 24;
/** A registered client without a live grant expires this long after its last use (a grant, a token refresh). */
export const IDLE_CLIENT_DAYS = 7;
const HOUR_MS = 3_600_000;

/** The expiry instants of registered clients at `now` (the retention sweep's, or a full pool's). */
export function clientExpiry(now: Date): ClientExpiry {
  return {
    now: now.toISOString(),
    pendingBefore: new Date(now.getTime() - PENDING_CLIENT_HOURS * HOUR_MS).toISOString(),
    idleBefore: new Date(now.getTime() - IDLE_CLIENT_DAYS * 24 * HOUR_MS).toISOString(),
  };
}

/** How many registered clients may be pending at once, and how many may hold grants per organization. */
export interface ClientLimits {
  pending: number;
  perOrg: number;
}

export const DEFAULT_CLIENT_LIMITS: ClientLimits = { pending: 1000, perOrg: 1000 };
/** how many expired clients a full pool removes at once before it counts again */
const PURGE_BATCH = 1000;

export interface OAuthClient {
  clientId: string;
  clientName?: string;
  /** exact redirect URIs */
  redirectUris: string[];
  /** where the client ID came from */
  kind: 'metadata-document' | 'registered';
}

const DOCUMENT_TTL_MS = 5 * 60_000;
const DOCUMENT_MAX_BYTES = 64 * 1024;
const DOCUMENT_TIMEOUT_MS = 5_000;
const MAX_REDIRECT_URIS = 20;
const MAX_URI_LENGTH = 2000;

/** Whether a client ID is a metadata document URL (https, with a path); plain http only when private networks are allowed (tests on loopback). */
export function isMetadataDocumentId(clientId: string, allowPrivateNetwork: boolean): boolean {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  const scheme = url.protocol === 'https:' || (allowPrivateNetwork && url.protocol === 'http:');
  return scheme && url.pathname !== '/' && url.hash === '' && url.username === '' && url.password === '';
}

/** A redirect URI a client may name: absolute, no fragment, not a script or data URL; plain http only to loopback (RFC 8252). */
export function checkRedirectUri(uri: unknown): string {
  if (typeof uri !== 'string' || uri.length === 0 || uri.length > MAX_URI_LENGTH) throw new OAuthError('invalid_redirect_uri', 'a redirect URI must be a non-empty string of at most 2000 characters');
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new OAuthError('invalid_redirect_uri', `not an absolute URL: ${uri}`);
  }
  if (url.hash) throw new OAuthError('invalid_redirect_uri', `a redirect URI has no fragment: ${uri}`);
  if (['javascript:', 'data:', 'file:', 'blob:', 'vbscript:'].includes(url.protocol)) throw new OAuthError('invalid_redirect_uri', `not a redirect URI scheme: ${url.protocol}`);
  if (url.protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)) {
    throw new OAuthError('invalid_redirect_uri', `plain http is allowed only to loopback: ${uri}`);
  }
  return uri;
}

/**
 * Whether `asked` is one of the client's redirect URIs: exactly, or (RFC 8252 7.3) a loopback one
 * on another port, as native clients listen wherever a port is free.
 */
export function redirectAllowed(registered: readonly string[], asked: string): boolean {
  if (registered.includes(asked)) return true;
  let url: URL;
  try {
    url = new URL(asked);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' || !['127.0.0.1', '[::1]'].includes(url.hostname) || url.hash) return false;
  return registered.some((uri) => {
    const known = new URL(uri);
    return known.protocol === 'http:' && known.hostname === url.hostname && known.pathname === url.pathname && known.search === url.search;
  });
}

function redirectUrisOf(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_REDIRECT_URIS) {
    throw new OAuthError('invalid_redirect_uri', `redirect_uris must be an array of 1 to ${MAX_REDIRECT_URIS} URIs`);
  }
  return value.map(checkRedirectUri);
}

function optionalName(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, 200) : undefined;
}

export interface OAuthClientsDeps {
  registry: Registry;
  allowPrivateNetwork: boolean;
  limits?: ClientLimits;
  now?: () => number;
}

export class OAuthClients {
  private readonly documents = new LruCache<string, OAuthClient>({ maxEntries: 1000, ttlMs: DOCUMENT_TTL_MS });
  readonly limits: ClientLimits;

  constructor(private readonly deps: OAuthClientsDeps) {
    this.limits = deps.limits ?? DEFAULT_CLIENT_LIMITS;
  }

  private now(): Date {
    return new Date(this.deps.now?.() ?? Date.now());
  }

  /** The client, or an `invalid_client` OAuthError (unknown, or its document unusable). */
  async resolve(clientId: string): Promise<OAuthClient> {
    if (isMetadataDocumentId(clientId, this.deps.allowPrivateNetwork)) {
      const cached = this.documents.get(clientId);
      if (cached) return cached;
      const client = await this.fetchDocument(clientId);
      this.documents.set(clientId, client);
      return client;
    }
    const record = clientId.length <= 200 ? await this.deps.registry.oauth.findClient(clientId) : undefined;
    if (!record) throw new OAuthError('invalid_client', 'unknown client_id: register first (POST /oauth/register) or use a client ID metadata document URL');
    return { clientId, redirectUris: record.redirectUris, kind: 'registered', ...(record.clientName ? { clientName: record.clientName } : {}) };
  }

  private async fetchDocument(clientId: string): Promise<OAuthClient> {
    let raw: unknown;
    try {
      const response = await httpRequest({
        method: 'GET', url: clientId, headers: { Accept: 'application/json' }, timeoutMs: DOCUMENT_TIMEOUT_MS,
        allowPrivateNetwork: this.deps.allowPrivateNetwork, maxRedirects: 0, maxResponseBytes: DOCUMENT_MAX_BYTES,
      });
      if (response.status !== 200) throw new Error(`it answered ${response.status}`);
      raw = JSON.parse(response.body.toString('utf8'));
    } catch (error) {
      throw new OAuthError('invalid_client', `the client ID metadata document at ${clientId} could not be read: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!isRecord(raw)) throw new OAuthError('invalid_client', `the client ID metadata document at ${clientId} is not a JSON object`);
    const doc = raw;
    if (doc.client_id !== clientId) throw new OAuthError('invalid_client', `the client ID metadata document at ${clientId} names another client_id`);
    if (doc.token_endpoint_auth_method !== undefined && doc.token_endpoint_auth_method !== 'none') {
      throw new OAuthError('invalid_client', 'a client ID metadata document client authenticates with PKCE only: token_endpoint_auth_method must be none');
    }
    let redirectUris: string[];
    try {
      redirectUris = redirectUrisOf(doc.redirect_uris);
    } catch (error) {
      throw new OAuthError('invalid_client', `the client ID metadata document at ${clientId}: ${messageOf(error)}`);
    }
    const clientName = optionalName(doc.client_name);
    return { clientId, redirectUris, kind: 'metadata-document', ...(clientName ? { clientName } : {}) };
  }

  /**
   * Room for one more pending client: when the pool is full, its expired clients go first; still
   * full, a 429 `too_many_requests` OAuthError whose Retry-After is when the oldest one expires.
   * (Registrations racing for the last place may overshoot by as many as race.)
   */
  private async roomForPending(): Promise<void> {
    const { oauth } = this.deps.registry;
    let pending = await oauth.pendingClients();
    if (pending.count < this.limits.pending) return;
    const now = this.now();
    if (await oauth.removeExpiredClients(clientExpiry(now), PURGE_BATCH, 'pending') > 0) pending = await oauth.pendingClients();
    if (pending.count < this.limits.pending) return;
    const oldest = pending.oldest === null ? now.getTime() : Date.parse(pending.oldest);
    const retryAfter = Math.max(1, Math.ceil((oldest + PENDING_CLIENT_HOURS * HOUR_MS - now.getTime()) / 1000));
    throw new OAuthError('too_many_requests', `this server holds ${pending.count} registered clients that have not signed in yet, its limit `
      + `(FLOWGATE_OAUTH_PENDING_CLIENTS): registration reopens as they expire (${PENDING_CLIENT_HOURS} h after registering), the first in ${retryAfter} s. `
      + 'A client identified by a client ID metadata document URL needs no registration', 429, retryAfter);
  }

  /**
   * Whether a registered client may take a grant in the organization: it holds a live one there
   * already, or fewer than `perOrg` registered clients hold live grants there. A client named by a metadata document is not counted. Else an
   * OAuthError with `code` (the consent's `access_denied`, the token endpoint's `invalid_grant`).
   */
  async checkOrgRoom(orgId: string, clientId: string, code: 'access_denied' | 'invalid_grant'): Promise<void> {
    if (isMetadataDocumentId(clientId, this.deps.allowPrivateNetwork)) return;
    const { oauth } = this.deps.registry;
    const now = this.now().toISOString();
    if (await oauth.clientInOrg(orgId, clientId, now)) return;
    const count = await oauth.countOrgClients(orgId, now);
    if (count < this.limits.perOrg) return;
    throw new OAuthError(code, `the organization has ${count} registered MCP clients signed in, its limit (FLOWGATE_OAUTH_CLIENTS_PER_ORG): `
      + 'an administrator revokes the grants it no longer needs (DELETE /api/v1/oauth/grants/{grantId}), which frees their clients\' places at once');
  }

  /** Dynamic client registration (RFC 7591): a public client (PKCE, no secret), whatever authentication it asked for. */
  async register(metadata: unknown): Promise<Record<string, unknown>> {
    if (!isRecord(metadata)) throw new OAuthError('invalid_client_metadata', 'the body must be a JSON object of client metadata');
    const doc = metadata;
    const redirectUris = redirectUrisOf(doc.redirect_uris);
    const grantTypes = doc.grant_types ?? ['authorization_code', 'refresh_token'];
    if (!Array.isArray(grantTypes) || grantTypes.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
      throw new OAuthError('invalid_client_metadata', 'grant_types may name only authorization_code and refresh_token');
    }
    const responseTypes = doc.response_types ?? ['code'];
    if (!Array.isArray(responseTypes) || responseTypes.some((r) => r !== 'code')) throw new OAuthError('invalid_client_metadata', 'response_types may name only code');
    const clientName = optionalName(doc.client_name);
    await this.roomForPending();
    const clientId = randomToken('fgc_', 18);
    const createdAt = this.now();
    await this.deps.registry.oauth.createClient({ clientId, clientName: clientName ?? null, redirectUris, createdAt: createdAt.toISOString() });
    return {
      client_id: clientId,
      client_id_issued_at: Math.floor(createdAt.getTime() / 1000),
      redirect_uris: redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(clientName ? { client_name: clientName } : {}),
    };
  }
}
