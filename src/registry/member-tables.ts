/**
 * The tables of people and their roles (issue 34; migration 0015), apart from db.ts so that it
 * stays one screenful per concern. Conventions as in db.ts.
 */

/** A person of an organization with a role (src/people/roles.ts). */
export interface MembersTable {
  id: string;
  org_id: string;
  /** lower-cased; unique within the organization */
  email: string;
  name: string | null;
  role: string;
  created_at: string;
  updated_at: string;
}

/** A member's personal access token (`fgp_…`), stored as its SHA-256 only. */
export interface MemberTokensTable {
  token_hash: string;
  member_id: string;
  org_id: string;
  created_at: string;
  /** the member who issued it, when a member did (migration 0019; an admin token's: null). Removing either member ends it */
  issued_by: string | null;
}

/** An organization's OpenID Connect provider; the client secret is sealed with the connection key. */
export interface IdentityProvidersTable {
  org_id: string;
  /** what the sign-in button says ("Sign in with <name>") */
  name: string;
  issuer: string;
  client_id: string;
  /** sealed (src/crypto/connection-cipher.ts), bound to the organization */
  client_secret: string;
  /** JSON: the claim mapping (src/people/identity-providers.ts): `{groupsClaim, rules}`, the first matching rule wins */
  role_rules: string;
  /** the role of a signed-in person no rule matches; null: such a person is refused */
  default_role: string | null;
  created_at: string;
  updated_at: string;
}
