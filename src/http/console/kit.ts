/**
 * What the console's route files share (routes/console.ts builds it once): the session and CSRF
 * checks, the form parser and the audit recorder, so that each page family (workflows, keys,
 * people, agents, connections, tool servers) adds its routes to the one console router in a file
 * of its own. ConsoleRouteKit is the workflow, key and people pages' form; ConsoleKit the
 * positional one of the connection and server pages.
 */
import type { Middleware } from 'koa';
import { managementAction } from '../operations';
import type Router from '@koa/router';
import type { ConsoleSessions } from '../../console/sessions';
import type { ShownOnce } from '../../console/shown-once';
import type { GatewayDeps } from '../deps';
import { auditConsole } from './audit';
import { parseConsoleForm, requireCsrf, requireSession } from './guard';

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

export interface ConsoleRouteKit {
  session: Middleware;
  csrf: Middleware;
  parseForm: Middleware;
  /** Records the route (after the session is known, before its form and CSRF checks), whatever its outcome. */
  audited(action: string, targetType: string, target?: { param?: string; noteTarget?: string }): Middleware;
  /** The management API's action name for `method route` (a missing one is a programming error). */
  apiAction(method: string, route: string): string;
}

export function consoleRouteKit(deps: GatewayDeps, sessions: ConsoleSessions): ConsoleRouteKit {
  return {
    session: requireSession(sessions),
    csrf: requireCsrf(deps.config.publicUrl),
    parseForm: parseConsoleForm,
    audited: (action, targetType, target = {}) => auditConsole(deps.audit, { action, targetType, ...target }),
    apiAction: (method, route) => {
      const spec = managementAction(method, route);
      if (!spec) throw new Error(`no audit action for ${method} ${route}`);
      return spec.action;
    },
  };
}

/** What each console page family is handed (routes/console.ts builds it once, for its router). */
export interface ConsolePageKits {
  deps: GatewayDeps;
  /** the workflow, key and people pages' kit */
  kit: ConsoleRouteKit;
  /** the positional kit of the agent, connection and server pages, with the API's action name of a POST route */
  positional: ConsoleKit & { apiAction(route: string): string };
  /** a new API key, held for the one page that shows it */
  shownOnce: ShownOnce;
}

/** A page family adding its routes to the console's router (the families are listed in src/http/console-pages.ts). */
export type ConsolePageFamily = (router: Router, kits: ConsolePageKits) => void;
