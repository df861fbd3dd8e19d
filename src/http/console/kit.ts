/**
 * What the console's route files share (routes/console.ts builds it once): the session and CSRF
 * checks and the audit recorder, so that each page family (connections, tool servers) adds its
 * routes to the one console router in a file of its own.
 */
import type { Middleware } from 'koa';
import { managementAction } from '../operations';
import type { GatewayDeps } from '../deps';

export interface ConsoleKit {
  deps: GatewayDeps;
  /** a live console session, else the sign-in redirect (pages) or 401 */
  session: Middleware;
  /** after parseConsoleForm: this origin and the session's CSRF token, else 403 */
  csrf: Middleware;
  /** records the route (after the session, before the form and CSRF checks) under the API's action for the same change */
  audited: (action: string, targetType: string, param?: string, noteTarget?: string) => Middleware;
}

/** The management API's audit action for a route (method and template), which the console's same change records. */
export function apiActionOf(method: string, route: string): string {
  const spec = managementAction(method, route);
  if (!spec) throw new Error(`no audit action for ${method} ${route}`);
  return spec.action;
}
