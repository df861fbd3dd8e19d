/**
 * What every console route file (console.ts, console-workflows.ts, console-keys.ts) mounts its
 * routes with: the session check, the CSRF check, the form parser, and the audit record of a
 * state-changing route under the management API's action name for the same change.
 */
import type { Middleware } from 'koa';
import { managementAction } from '../operations';
import type { ConsoleSessions } from '../../console/sessions';
import type { GatewayDeps } from '../deps';
import { auditConsole } from '../console/audit';
import { parseConsoleForm, requireCsrf, requireSession } from '../console/guard';

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
    session: requireSession(sessions) as Middleware,
    csrf: requireCsrf(deps.config.publicUrl) as Middleware,
    parseForm: parseConsoleForm as Middleware,
    audited: (action, targetType, target = {}) => auditConsole(deps.audit, { action, targetType, ...target }) as Middleware,
    apiAction: (method, route) => {
      const spec = managementAction(method, route);
      if (!spec) throw new Error(`no audit action for ${method} ${route}`);
      return spec.action;
    },
  };
}
