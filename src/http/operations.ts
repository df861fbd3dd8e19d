/**
 * Every route module's operations in one catalog, and what is built from them: the OpenAPI paths
 * (openapi.ts), the audit action table (`METHOD /route` → action; the console records its changes
 * under the API's names) and the permission table (`METHOD /route` → permission). The guard and the
 * audit middleware read a request's entry from its route (operation.ts), not from these tables.
 */
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import type { ActionSpec } from '../audit/actions';
import type { Permission } from '../people/roles';
import { errors } from './openapi-kit';
import { permissionOf, type Operation, type Operations } from './operation';
import { MANAGEMENT_OPERATIONS } from './management-operations';
import { AGENT_OPERATIONS } from './routes/agents';
import { ALERT_OPERATIONS } from './routes/alerts';
import { APPLY_OPERATIONS } from './routes/apply';
import { APPROVAL_LINK_OPERATIONS } from './routes/approvals';
import { AUTH_TOKEN_OPERATIONS } from './routes/auth-token';
import { CODEC_OPERATIONS } from './routes/codec';
import { HEALTH_OPERATIONS } from './routes/health';
import { POLLING_OPERATIONS } from './routes/runs';
import { AUDIT_OPERATIONS } from './routes/audit';
import { BUDGET_OPERATIONS } from './routes/budgets';
import { CONNECTION_OPERATIONS } from './routes/connections';
import { FORM_MANAGEMENT_OPERATIONS } from './routes/forms';
import { IDENTITY_PROVIDER_OPERATIONS } from './routes/identity-provider';
import { MEMBER_OPERATIONS } from './routes/members';
import { METRICS_OPERATIONS } from './routes/metrics';
import { OAUTH_GRANT_OPERATIONS } from './routes/oauth-grants';
import { RUN_MANAGEMENT_OPERATIONS } from './routes/run-management';
import { HOLD_OPERATIONS } from './routes/holds';
import { SCHEDULE_OPERATIONS } from './routes/schedules';
import { SERVER_OPERATIONS } from './routes/servers';
import { TRIGGER_WEBHOOK_OPERATIONS } from './routes/trigger-webhooks';

/** The routes' operations, by operationId. */
export const OPERATIONS: Operations = catalog([
  MANAGEMENT_OPERATIONS, RUN_MANAGEMENT_OPERATIONS, SCHEDULE_OPERATIONS, FORM_MANAGEMENT_OPERATIONS, AUDIT_OPERATIONS, MEMBER_OPERATIONS,
  IDENTITY_PROVIDER_OPERATIONS, OAUTH_GRANT_OPERATIONS, CONNECTION_OPERATIONS, SERVER_OPERATIONS, AGENT_OPERATIONS, BUDGET_OPERATIONS, METRICS_OPERATIONS,
  POLLING_OPERATIONS, APPROVAL_LINK_OPERATIONS, AUTH_TOKEN_OPERATIONS, HEALTH_OPERATIONS, CODEC_OPERATIONS, TRIGGER_WEBHOOK_OPERATIONS,
  ALERT_OPERATIONS,
  APPLY_OPERATIONS, HOLD_OPERATIONS,
]);

/** One catalog of several modules' lists; an operationId or a route listed twice is a programming error. */
export function catalog(lists: readonly Operations[]): Operations {
  const all: Record<string, Operation> = {};
  const routes = new Set<string>();
  for (const list of lists) {
    for (const [operationId, op] of Object.entries(list)) {
      const route = routeKey(op.method, op.path);
      if (all[operationId] || routes.has(route)) throw new Error(`operation ${operationId} (${route}) is listed twice`);
      all[operationId] = op;
      routes.add(route);
    }
  }
  return all;
}

/** `METHOD /route/template`, as the tables key a route (HEAD as GET, a trailing slash ignored). */
export function routeKey(method: string, route: string): string {
  const upper = method.toUpperCase();
  return `${upper === 'HEAD' ? 'GET' : upper} ${route.length > 1 ? route.replace(/\/+$/, '') : route}`;
}

/** The audit action of each management change. */
export function actionTable(ops: Operations): ReadonlyMap<string, ActionSpec> {
  return new Map(Object.values(ops).flatMap((op) => (op.audit ? [[routeKey(op.method, op.path), op.audit] as const] : [])));
}

/** The permission of each management route (those that name one). */
export function permissionTable(ops: Operations): ReadonlyMap<string, Permission> {
  return new Map(Object.values(ops).flatMap((op) => (op.permission ? [[routeKey(op.method, op.path), op.permission] as const] : [])));
}

/** The OpenAPI paths of the operations (`:param` as `{param}`); an operation a role can be refused documents 403. */
export function pathsOf(ops: Operations): ZodOpenApiPathsObject {
  const paths: Record<string, Record<string, ZodOpenApiOperationObject>> = {};
  for (const [operationId, { method, path, permission, audit: _audit, ...doc }] of Object.entries(ops)) {
    const documented: ZodOpenApiOperationObject = { operationId, ...doc, ...(permission ? { responses: { ...errors(403), ...doc.responses } } : {}) };
    (paths[path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')] ??= {})[method] = documented;
  }
  return paths;
}

const ACTIONS = actionTable(OPERATIONS);
const PERMISSIONS = permissionTable(OPERATIONS);

/** The audit spec of a management route, by its method and template (`/api/v1/workflows/:id`). */
export function managementAction(method: string, route: string): ActionSpec | undefined {
  return ACTIONS.get(routeKey(method, route));
}

/** The permission a management route needs, by its method and template. */
export function permissionFor(method: string, route: string): Permission {
  return PERMISSIONS.get(routeKey(method, route)) ?? permissionOf(undefined, method);
}

/** Audit action → the permission of the routes that take it (the console's same changes need the same). */
const BY_ACTION: ReadonlyMap<string, Permission> = (() => {
  const byAction = new Map<string, Permission>();
  for (const op of Object.values(OPERATIONS)) {
    if (!op.audit) continue;
    const permission = permissionOf(op, op.method.toUpperCase());
    const known = byAction.get(op.audit.action);
    if (known && known !== permission) throw new Error(`audit action ${op.audit.action} needs ${known} on one route and ${permission} on another`);
    byAction.set(op.audit.action, permission);
  }
  return byAction;
})();

/** The permission an audit action of the management API needs; undefined for one no route takes. */
export function permissionOfAction(action: string): Permission | undefined {
  return BY_ACTION.get(action);
}
