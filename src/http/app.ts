/**
 * The gateway: one Koa app, each surface under its own prefix (ARCHITECTURE.md, "HTTP surface").
 */
import Koa, { type Next } from 'koa';
import type Router from '@koa/router';
import type { GatewayDeps } from './deps';
import type { GatewayRouter, GatewayState } from './state';
import { LocalRateLimit } from './rate-limit/local';
import { isOAuthPath, originPolicyOf } from './origin-policy';
import { edge } from './middleware/edge';
import { tracedRequests } from './middleware/observe';
import { rateLimit } from './middleware/rate-limit';
import { agentRoutes } from './routes/agents';
import { auditRoutes } from './routes/audit';
import { authTokenRoutes } from './routes/auth-token';
import { budgetRoutes } from './routes/budgets';
import { alertRoutes } from './routes/alerts';
import { applyRoutes } from './routes/apply';
import { codecRoutes } from './routes/codec';
import { connectionRoutes } from './routes/connections';
import { consoleRoutes } from './routes/console';
import { CONSOLE_PAGE_FAMILIES } from './console-pages';
import { consoleSignInRoutes } from './routes/console-sign-in';
import { formManagementRoutes, formRoutes } from './routes/forms';
import { approvalRoutes } from './routes/approvals';
import { fileRoutes } from './routes/files';
import { healthRoutes } from './routes/health';
import { managementRoutes } from './routes/management';
import { memberRoutes } from './routes/members';
import { identityProviderRoutes } from './routes/identity-provider';
import { runManagementRoutes } from './routes/run-management';
import { holdRoutes } from './routes/holds';
import { metricsRoutes } from './routes/metrics';
import { openApiRoutes } from './routes/openapi';
import { runRoutes } from './routes/runs';
import { scheduleRoutes } from './routes/schedules';
import { oauthAuthorizeRoutes } from './routes/oauth-authorize';
import { addOAuthOidcRoutes } from './routes/oauth-oidc';
import { oauthRoutes } from './routes/oauth';
import { oauthGrantRoutes } from './routes/oauth-grants';
import { oauthCallbackRoutes, serverRoutes } from './routes/servers';
import { toolRoutes } from './routes/tools';
import { triggerRoutes } from './routes/triggers';
import { triggerWebhookRoutes } from './routes/trigger-webhooks';

/** A path's first segment as the routers compare it (case-insensitively); undefined when it is percent-encoded. */
function firstSegment(path: string): string | undefined {
  const end = path.indexOf('/', 1);
  const segment = (end === -1 ? path.slice(1) : path.slice(1, end)).toLowerCase();
  return segment.includes('%') ? undefined : segment;
}

/**
 * The context a router's middleware take: the app's, with the router's own fields (`params`, …;
 * @koa/router types its routes and its 405s over slightly different contexts).
 */
type RoutedContext = Parameters<ReturnType<GatewayRouter['routes']>>[0] & Parameters<ReturnType<GatewayRouter['allowedMethods']>>[0];

/**
 * A router's routes and its 405s, skipped for a path whose first segment none of its routes
 * starts with: each router's own dispatch (host, path, every layer's pattern) and allowedMethods
 * would otherwise run on every request, sixteen times over. A router with a pattern for a first
 * segment (a parameter, a RegExp, `use()` without a path) is never skipped.
 */
function guarded(router: GatewayRouter): (ctx: RoutedContext, next: Next) => Promise<unknown> {
  const routes = router.routes();
  const allowed = router.allowedMethods();
  const both = (ctx: RoutedContext, next: Next): Promise<unknown> => routes(ctx, () => allowed(ctx, next));
  const segments = new Set<string>();
  for (const layer of router.stack) {
    const segment = typeof layer.path === 'string' && layer.path.startsWith('/') ? firstSegment(layer.path) : undefined;
    if (segment === undefined || /[:(*{?]/.test(segment)) return both;
    segments.add(segment);
  }
  return (ctx, next) => {
    const segment = firstSegment(ctx.path);
    return segment === undefined || segments.has(segment) ? both(ctx, next) : next();
  };
}

export interface RouteInfo {
  method: string;
  /** the path in OpenAPI form (`/api/v1/runs/{runId}`); a RegExp route's name */
  path: string;
}

const ROUTES = new WeakMap<Koa, RouteInfo[]>();
/** Catch-all handlers (`router.all`, e.g. the 405 of the trigger paths) are not routes of their own. */
const CATCH_ALL_METHODS = 8;

/** Every method and path the routers answer (HEAD and OPTIONS, which come with them, left out). */
export function routesOfRouters(routers: Router[]): RouteInfo[] {
  const routes: RouteInfo[] = [];
  for (const router of routers) {
    for (const layer of router.stack) {
      if (layer.methods.length === 0 || layer.methods.length >= CATCH_ALL_METHODS) continue;
      const path = typeof layer.path === 'string' ? layer.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}') : layer.name ?? String(layer.path);
      for (const method of layer.methods) {
        if (method !== 'HEAD' && method !== 'OPTIONS') routes.push({ method, path });
      }
    }
  }
  return routes;
}

/** The routes an app made by createApp serves (the OpenAPI test holds the document against them). */
export function routesOf(app: Koa): RouteInfo[] {
  return ROUTES.get(app) ?? [];
}

export function createApp(deps: GatewayDeps): Koa<GatewayState> {
  const app = new Koa<GatewayState>({ proxy: false });
  if (deps.config.tracing !== undefined) {
    app.use(tracedRequests({ metrics: deps.metrics }));
    app.use(edge({ log: deps.log }));
  } else {
    app.use(edge({ log: deps.log, metrics: deps.metrics }));
  }
  if (deps.oauth) {
    // DNS rebinding protection of the OAuth endpoints and documents (the MCP endpoints check in their route)
    const origins = originPolicyOf(deps);
    app.use(async (ctx, next) => {
      const refused = isOAuthPath(ctx.path) ? origins.refusal(ctx) : undefined;
      if (!refused) return next();
      ctx.status = 403;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { error: 'invalid_request', error_description: refused.message };
    });
  }
  const { perMinute, burst } = deps.config.rateLimit;
  if (perMinute > 0) {
    // Before every route: a refused request costs no credential lookup and leaves its body unread.
    app.use(rateLimit({
      limiter: deps.rateLimit ?? new LocalRateLimit({ perMinute, burst }), toolsBasePath: deps.config.toolsBasePath,
      runtimeKeyId: (token) => deps.runtimeTokens.keyIdOf(token),
    }));
  }
  const routers: GatewayRouter[] = [healthRoutes(deps), triggerRoutes(deps), runRoutes(deps), fileRoutes(deps), managementRoutes(deps), scheduleRoutes(deps), approvalRoutes(deps), memberRoutes(deps)];
  routers.push(authTokenRoutes(deps), toolRoutes(deps), connectionRoutes(deps), agentRoutes(deps), budgetRoutes(deps), runManagementRoutes(deps), holdRoutes(deps), metricsRoutes(deps), openApiRoutes(deps), auditRoutes(deps), alertRoutes(deps), applyRoutes(deps));
  if (deps.codec) routers.push(codecRoutes(deps));
  if (deps.customServers) routers.push(serverRoutes(deps, deps.customServers), oauthCallbackRoutes(deps, deps.customServers));
  for (const router of [formRoutes(deps), formManagementRoutes(deps), identityProviderRoutes(deps), triggerWebhookRoutes(deps)]) if (router) routers.push(router);
  if (deps.oauth) routers.push(oauthGrantRoutes(deps, deps.oauth.server));
  for (const router of routers) app.use(guarded(router));
  ROUTES.set(app, routesOfRouters(routers));
  // The console's HTML pages are a UI, not API: served, but not among the documented routes.
  const consoleRouter = consoleRoutes(deps, CONSOLE_PAGE_FAMILIES);
  const signInRouter = consoleSignInRoutes(deps);
  if (signInRouter) app.use(guarded(signInRouter));
  if (consoleRouter) app.use(guarded(consoleRouter));
  // OAuth's documents and endpoints are specified by their RFCs (docs/http-api.md lists them), not in the OpenAPI document
  if (deps.oauth) {
    // the authorization page, then the members' OpenID Connect sign-in on the same router (it continues to the page's consent step)
    const authorize = oauthAuthorizeRoutes(deps, deps.oauth);
    addOAuthOidcRoutes(authorize.router, deps, deps.oauth, authorize.pages);
    for (const router of [oauthRoutes(deps, deps.oauth), authorize.router]) app.use(guarded(router));
  }
  return app;
}
