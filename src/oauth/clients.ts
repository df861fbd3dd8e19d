/**
 * The clients of the tool gateway's authorization server (docs/tool-gateway.md "Signing in by
 * URL"): a client ID that is an https URL names a client ID metadata document, fetched through
 * the outbound HTTP client (its private-address policy: FLOWGATE_ALLOW_PRIVATE_NETWORK) and kept
 * a few minutes; any other client ID is one registered here dynamically (RFC 7591).
 */
import { LruCache } from '../common/lru-cache';
import { randomToken } from '../crypto/secrets';
import { httpRequest } from '../net/http-client';
import type { Registry } from '../registry';
import { OAuthError } from './errors';

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

export class OAuthClients {
  private readonly documents = new LruCache<string, OAuthClient>({ maxEntries: 1000, ttlMs: DOCUMENT_TTL_MS });

  constructor(private readonly deps: { registry: Registry; allowPrivateNetwork: boolean }) {}

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
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new OAuthError('invalid_client', `the client ID metadata document at ${clientId} is not a JSON object`);
    const doc = raw as Record<string, unknown>;
    if (doc.client_id !== clientId) throw new OAuthError('invalid_client', `the client ID metadata document at ${clientId} names another client_id`);
    if (doc.token_endpoint_auth_method !== undefined && doc.token_endpoint_auth_method !== 'none') {
      throw new OAuthError('invalid_client', 'a client ID metadata document client authenticates with PKCE only: token_endpoint_auth_method must be none');
    }
    let redirectUris: string[];
    try {
      redirectUris = redirectUrisOf(doc.redirect_uris);
    } catch (error) {
      throw new OAuthError('invalid_client', `the client ID metadata document at ${clientId}: ${(error as Error).message}`);
    }
    const clientName = optionalName(doc.client_name);
    return { clientId, redirectUris, kind: 'metadata-document', ...(clientName ? { clientName } : {}) };
  }

  /** Dynamic client registration (RFC 7591): a public client (PKCE, no secret), whatever authentication it asked for. */
  async register(metadata: unknown): Promise<Record<string, unknown>> {
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw new OAuthError('invalid_client_metadata', 'the body must be a JSON object of client metadata');
    const doc = metadata as Record<string, unknown>;
    const redirectUris = redirectUrisOf(doc.redirect_uris);
    const grantTypes = doc.grant_types ?? ['authorization_code', 'refresh_token'];
    if (!Array.isArray(grantTypes) || grantTypes.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
      throw new OAuthError('invalid_client_metadata', 'grant_types may name only authorization_code and refresh_token');
    }
    const responseTypes = doc.response_types ?? ['code'];
    if (!Array.isArray(responseTypes) || responseTypes.some((r) => r !== 'code')) throw new OAuthError('invalid_client_metadata', 'response_types may name only code');
    const clientName = optionalName(doc.client_name);
    const clientId = randomToken('fgc_', 18);
    const createdAt = new Date();
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
