/**
 * Each organization's OpenID Connect provider (docs/people-and-roles.md): its settings (the client
 * secret sealed with the connection key, bound to the organization) and the sign-in through it —
 * authorization code with PKCE, state and nonce (openid-client). The pending sign-in travels in a
 * sealed cookie, so any replica can finish it. The callback's ID token names the person: their
 * e-mail (verified) and groups are mapped to a role by the organization's rules, and the member
 * is created or updated.
 */
import * as oidc from 'openid-client';
import { z } from 'zod';
import { ownJson } from '../common/narrow';
import type { ConnectionCipher } from '../crypto/connection-cipher';
import { httpRequest } from '../net/http-client';
import type { IdentityProviderRecord, MemberRecord, Registry } from '../registry';
import { ROLES, type Role } from './roles';

/** A rule of the claim mapping: the first that matches gives the role. */
export const RoleRuleSchema = z.union([
  z.object({ emailDomain: z.string().regex(/^[A-Za-z0-9.-]{1,253}$/), role: z.enum(ROLES) }).strict(),
  z.object({ group: z.string().min(1).max(200), role: z.enum(ROLES) }).strict(),
]);
export type RoleRule = z.infer<typeof RoleRuleSchema>;

export interface IdentityProviderInput {
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  roleRules: RoleRule[];
  defaultRole: Role | null;
  /** the ID token claim that lists the person's groups */
  groupsClaim?: string;
}

export interface IdentityProviderView {
  name: string;
  issuer: string;
  clientId: string;
  roleRules: RoleRule[];
  groupsClaim: string;
  defaultRole: string | null;
  redirectUri: string;
  signInUrl: string;
  createdAt: string;
  updatedAt: string;
}

/** How the registry keeps the claim mapping (written by create() from a validated input; read back through this schema). */
const ClaimMappingSchema = z.object({ groupsClaim: z.string(), rules: z.array(RoleRuleSchema) });
type ClaimMapping = z.infer<typeof ClaimMappingSchema>;

/** What the sealed cookie of a pending sign-in holds. */
interface Pending {
  orgId: string;
  state: string;
  nonce: string;
  verifier: string;
  /** ms since the epoch */
  expires: number;
  /** the callback path it was started for (the console's, or the OAuth authorization page's); finished only there */
  callback?: string;
  /** what the starter carries through the round trip (the OAuth page's sealed authorization request) */
  carry?: string;
}

/** The console's callback path; the OAuth authorization page's is OAUTH_CALLBACK_PATH. */
export const CONSOLE_CALLBACK_PATH = '/console/oidc/callback';
export const OAUTH_CALLBACK_PATH = '/oauth/oidc/callback';

export type SignInOutcome = { ok: true; member: MemberRecord; carry?: string } | { ok: false; orgId?: string; reason: string };

const PENDING_BINDING = 'oidc-pending-sign-in';
export const PENDING_SIGN_IN_MS = 10 * 60_000;
const CONFIG_TTL_MS = 5 * 60_000;
const PROVIDER_TIMEOUT_MS = 10_000;
const PROVIDER_MAX_BYTES = 1024 * 1024;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** An issuer flowgate may talk to: https, or http on loopback only (a provider beside it, in a test). */
export function issuerProblem(issuer: string): string | undefined {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return 'the issuer must be a URL';
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return undefined;
  return 'the issuer must be an https URL (http only on loopback)';
}

/** The role the rules give this person, or undefined when none matches. */
export function mappedRole(rules: readonly RoleRule[], email: string, groups: readonly string[]): Role | undefined {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  for (const rule of rules) {
    if ('emailDomain' in rule && rule.emailDomain.toLowerCase() === domain) return rule.role;
    if ('group' in rule && groups.includes(rule.group)) return rule.role;
  }
  return undefined;
}

export interface IdentityProvidersDeps {
  registry: Registry;
  cipher: ConnectionCipher;
  /** FLOWGATE_ALLOW_PRIVATE_NETWORK: whether the provider may be on a private address (as every outbound call) */
  allowPrivateNetwork: boolean;
  /** where the gateway is reached (its FLOWGATE_PUBLIC_URL, or the local address) */
  baseUrl: () => string;
}

export class IdentityProviders {
  private readonly configs = new Map<string, { config: oidc.Configuration; at: number }>();

  constructor(private readonly deps: IdentityProvidersDeps) {}

  /** The redirect URI to register at the provider for the console (and, beside it, `callbackUrl(OAUTH_CALLBACK_PATH)` for MCP clients' sign-in). */
  redirectUri(): string {
    return this.callbackUrl(CONSOLE_CALLBACK_PATH);
  }

  callbackUrl(path: string): string {
    return `${this.deps.baseUrl()}${path}`;
  }

  async set(orgId: string, input: IdentityProviderInput): Promise<IdentityProviderView> {
    const record = await this.deps.registry.members.setIdentityProvider(orgId, {
      name: input.name, issuer: input.issuer.replace(/\/+$/, ''), clientId: input.clientId,
      clientSecret: this.deps.cipher.seal(input.clientSecret, `identity-provider:${orgId}`),
      roleRules: { groupsClaim: input.groupsClaim ?? 'groups', rules: input.roleRules } satisfies ClaimMapping, defaultRole: input.defaultRole,
    });
    this.configs.delete(orgId);
    return this.viewOf(record);
  }

  async view(orgId: string): Promise<IdentityProviderView | undefined> {
    const record = await this.deps.registry.members.identityProvider(orgId);
    return record && this.viewOf(record);
  }

  async remove(orgId: string): Promise<boolean> {
    this.configs.delete(orgId);
    return this.deps.registry.members.deleteIdentityProvider(orgId);
  }

  /** The provider's name (for the sign-in button), or undefined when the organization has none. */
  async nameOf(orgId: string): Promise<string | undefined> {
    return (await this.deps.registry.members.identityProvider(orgId))?.name;
  }

  /** Where to send the browser, and the sealed pending sign-in for its cookie; undefined when the organization has no provider. */
  /**
   * Starts a sign-in: the provider's authorization URL and the sealed pending sign-in (for a
   * cookie). `callback` is the path the provider returns to (the console's by default); `carry`
   * comes back from `finish`.
   */
  async start(orgId: string, options: { callback?: string; carry?: string } = {}, now = Date.now()): Promise<{ url: string; pending: string } | undefined> {
    const record = await this.deps.registry.members.identityProvider(orgId);
    if (!record) return undefined;
    const config = await this.configOf(record);
    const callback = options.callback ?? CONSOLE_CALLBACK_PATH;
    const pending: Pending = {
      orgId, state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier(), expires: now + PENDING_SIGN_IN_MS,
      callback, ...(options.carry === undefined ? {} : { carry: options.carry }),
    };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.callbackUrl(callback), scope: 'openid email profile', state: pending.state, nonce: pending.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier), code_challenge_method: 'S256',
    });
    return { url: url.href, pending: this.deps.cipher.seal(JSON.stringify(pending), PENDING_BINDING) };
  }

  /** Finishes a sign-in at the callback: the code exchanged, the ID token checked, the member created or updated. */
  async finish(callbackUrl: URL, sealedPending: string | undefined, now = Date.now()): Promise<SignInOutcome> {
    const pending = this.openPending(sealedPending);
    if (!pending || pending.expires < now || (pending.callback ?? CONSOLE_CALLBACK_PATH) !== callbackUrl.pathname) {
      return { ok: false, reason: 'the sign-in expired or was started in another browser; start again' };
    }
    const record = await this.deps.registry.members.identityProvider(pending.orgId);
    if (!record) return { ok: false, orgId: pending.orgId, reason: 'the organization has no identity provider' };
    let claims: Record<string, unknown> | undefined;
    try {
      const config = await this.configOf(record);
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true,
      });
      claims = tokens.claims();
    } catch (error) {
      return { ok: false, orgId: pending.orgId, reason: `the identity provider's answer was refused: ${error instanceof Error ? error.message : String(error)}` };
    }
    const email = typeof claims?.email === 'string' ? claims.email.toLowerCase() : undefined;
    if (!email || claims?.email_verified === false) return { ok: false, orgId: pending.orgId, reason: 'the identity provider named no verified e-mail address' };
    const { groupsClaim, rules } = ClaimMappingSchema.parse(record.roleRules);
    const rawGroups = claims?.[groupsClaim];
    const groups = Array.isArray(rawGroups) ? rawGroups.filter((g): g is string => typeof g === 'string') : [];
    const role = mappedRole(rules, email, groups);
    const members = this.deps.registry.members;
    const carried = pending.carry === undefined ? {} : { carry: pending.carry };
    const existing = await members.findByEmail(pending.orgId, email);
    const name = typeof claims?.name === 'string' ? claims.name.slice(0, 200) : null;
    if (existing) {
      const member = role === undefined || role === existing.role ? existing : await members.update(pending.orgId, existing.id, { role });
      return member ? { ok: true, member, ...carried } : { ok: false, orgId: pending.orgId, reason: 'the member was removed meanwhile' };
    }
    const newRole = role ?? record.defaultRole;
    if (!newRole) return { ok: false, orgId: pending.orgId, reason: `${email} is not a member of the organization and no rule gives them a role` };
    return { ok: true, member: await members.create(pending.orgId, { email, name, role: newRole }), ...carried };
  }

  private openPending(sealed: string | undefined): Pending | undefined {
    if (!sealed || sealed.length > 8192) return undefined;
    try {
      // sealed by start() under our key: the cipher's authentication vouches for the JSON
      return ownJson<Pending>(this.deps.cipher.open(sealed, PENDING_BINDING));
    } catch {
      return undefined;
    }
  }

  private async configOf(record: IdentityProviderRecord): Promise<oidc.Configuration> {
    const cached = this.configs.get(record.orgId);
    if (cached && Date.now() - cached.at < CONFIG_TTL_MS) return cached.config;
    const secret = this.deps.cipher.open(record.clientSecret, `identity-provider:${record.orgId}`);
    const insecure = new URL(record.issuer).protocol === 'http:';
    const config = await oidc.discovery(new URL(record.issuer), record.clientId, secret, undefined, {
      // through flowgate's outbound client: its address policy (no private networks unless allowed), time and size bounds
      [oidc.customFetch]: (url, options) => this.providerFetch(url, options),
      ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
    });
    this.configs.set(record.orgId, { config, at: Date.now() });
    return config;
  }

  private async providerFetch(url: string, options: oidc.CustomFetchOptions): Promise<Response> {
    const { body } = options;
    const sent = body === undefined || body === null ? undefined
      : typeof body === 'string' ? body
      : body instanceof URLSearchParams ? body.toString()
      : body instanceof Uint8Array ? body
      : body instanceof ArrayBuffer ? new Uint8Array(body) : undefined;
    const answer = await httpRequest({
      method: options.method, url, headers: options.headers, ...(sent === undefined ? {} : { body: sent }), timeoutMs: PROVIDER_TIMEOUT_MS,
      allowPrivateNetwork: this.deps.allowPrivateNetwork, maxRedirects: 0, maxResponseBytes: PROVIDER_MAX_BYTES, ...(options.signal ? { signal: options.signal } : {}),
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
    }
    const noBody = answer.status === 204 || answer.status === 304;
    return new Response(noBody ? null : new Uint8Array(answer.body), { status: answer.status, headers });
  }

  private viewOf(record: IdentityProviderRecord): IdentityProviderView {
    const { groupsClaim, rules } = ClaimMappingSchema.parse(record.roleRules);
    return {
      name: record.name, issuer: record.issuer, clientId: record.clientId, roleRules: rules, groupsClaim, defaultRole: record.defaultRole,
      redirectUri: this.redirectUri(), signInUrl: `${this.deps.baseUrl()}/console/sign-in?org=${encodeURIComponent(record.orgId)}`,
      createdAt: record.createdAt, updatedAt: record.updatedAt,
    };
  }
}
