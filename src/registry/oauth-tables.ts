/**
 * The tables of the tool gateway's OAuth authorization server (issue 34; migration
 * 0016-mcp-oauth; src/oauth/). Conventions as in db.ts. Every secret (code, access token, refresh
 * token) is stored as its SHA-256 only.
 */

/** A client registered dynamically (RFC 7591). Clients named by a metadata document URL are not stored. */
export interface OAuthClientsTable {
  client_id: string;
  client_name: string | null;
  /** JSON array of exact redirect URIs */
  redirect_uris: string;
  created_at: string;
  /** when it last obtained a grant or tokens (migration 0020); null: never (a pending client) */
  last_used_at: string | null;
}

/** An authorization code: single use, short-lived, bound to the client, redirect URI, PKCE challenge, organization and resource. */
export interface OAuthCodesTable {
  code_hash: string;
  org_id: string;
  client_id: string;
  redirect_uri: string;
  resource: string;
  scope: string | null;
  /** the S256 challenge */
  code_challenge: string;
  /** who signed in: `admin-token:<fingerprint>` today (a member later) */
  subject: string;
  /** the admin token signed in with, when that was the credential: a rotated token ends the grant */
  admin_token_hash: string | null;
  /** the member who signed in (migration 0017), null for an admin token's */
  member_id: string | null;
  expires_at: string;
  /** set once exchanged; a second exchange is refused and revokes the grant it made */
  used_at: string | null;
  grant_id: string | null;
}

/** What a user allowed a client: the tokens of one code exchange and its refreshes. */
export interface OAuthGrantsTable {
  id: string;
  org_id: string;
  client_id: string;
  resource: string;
  scope: string | null;
  subject: string;
  admin_token_hash: string | null;
  /** the member who signed in (migration 0017): their current role applies, their removal ends the grant */
  member_id: string | null;
  created_at: string;
  revoked_at: string | null;
}

export interface OAuthTokensTable {
  token_hash: string;
  grant_id: string;
  /** 'access' | 'refresh' */
  kind: string;
  expires_at: string;
  /** a refresh token's rotation: set when it was traded; a second use revokes the grant */
  used_at: string | null;
}
