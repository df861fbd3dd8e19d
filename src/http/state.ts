/**
 * The gateway's Koa state, typed once: what the middleware leave on `ctx.state` for the routes.
 * The app is `Koa<GatewayState>` and every router a `GatewayRouter`, so a route reads
 * `ctx.state.*` typed; the credential a route's guard checked is read with adminOf / principalOf.
 */
import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import type { ParameterizedContext } from 'koa';
import type { TakeRateTokens } from './middleware/rate-limit';
import type { Role } from '../people/roles';

/** An API key's caller (trigger and polling surfaces). */
export interface ApiKeyPrincipal {
  orgId: string;
  keyId: string;
  /** the role the key is limited to (docs/people-and-roles.md); absent: the key's full reach */
  role?: Role;
}

/** The management API's caller: an admin token (the admin role) or a member's personal access token (the member's role). */
export interface AdminPrincipal {
  orgId: string;
  instanceAdmin: boolean;
  /** a fingerprint of the token (`adm_`/`pat_` + the start of its SHA-256): the audit trail's credential id, never the token */
  credentialId: string;
  role: Role;
  /** the member whose personal access token it is; absent for an admin token */
  member?: { id: string; email: string };
}

export interface GatewayState {
  /** set by the edge (request-context.ts) before anything else runs */
  requestId?: string;
  /** set by jsonBody: whether the request had a body at all (a JSON `null` is a body) */
  hasBody?: boolean;
  /** set by requireAdmin */
  admin?: AdminPrincipal;
  /** set by the polling routes once the API key in the path is known */
  principal?: ApiKeyPrincipal;
  /** set by the rate limit when the request was counted */
  takeRateTokens?: TakeRateTokens;
}

export type GatewayContext = ParameterizedContext<GatewayState>;
export type GatewayRouter = Router<GatewayState>;
/** A route handler's context: the gateway's state, the path's parameters. */
export type GatewayRouterContext = RouterContext<GatewayState>;

/**
 * The admin principal requireAdmin put on the request. A route mounted without requireAdmin is a
 * programming error: it fails as a plain 500, as reading the missing principal always did.
 */
export function adminOf(ctx: { state: GatewayState }): AdminPrincipal {
  const { admin } = ctx.state;
  if (!admin) throw new Error('this route is mounted without requireAdmin');
  return admin;
}

/** The API key principal a polling route authenticated (see adminOf for a missing one). */
export function principalOf(ctx: { state: GatewayState }): ApiKeyPrincipal {
  const { principal } = ctx.state;
  if (!principal) throw new Error('this route authenticated no API key');
  return principal;
}
